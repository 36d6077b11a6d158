"""S3 request authentication and body integrity, sans-IO: SigV4 (headers and presigned URLs), aws-chunked
bodies, x-amz-checksum-* and Content-MD5. No I/O and no HTTP library: the gateway feeds these functions.

Per request: `sigv4.parse` -> look up `sigv4.signing_key` by (access key, date, region, service) ->
`sigv4.verify` -> `payload.open_payload`, `feed` each body piece, `finish`.
"""
