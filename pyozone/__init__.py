"""pyozone: the storage-container architecture of Apache Ozone (HDDS) in Python."""

__version__ = "0.1.0"
