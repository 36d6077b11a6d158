"""fsspec filesystems over the native client: `ofs://OM/volume/bucket/key` and `o3fs://bucket.volume.OM/key`.

pandas, pyarrow and Dask open these URLs directly (the protocols are registered as fsspec entry points);
`pyozone.fs.ofs` holds the two filesystem classes.
"""
