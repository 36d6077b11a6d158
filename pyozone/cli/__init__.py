"""The `pyozone` command line: one module per command, Ozone's command names."""
