"""Blocks: sequence ids, block allocation, the deleted block log and the block deleting service."""
