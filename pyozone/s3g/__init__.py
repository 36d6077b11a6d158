"""The S3 gateway: Amazon's S3 REST API over the Ozone client, with buckets in the s3 volume."""
