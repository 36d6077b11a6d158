"""SCM safe mode: exit rules, the pre-check / exit status machine and the gate for restricted operations."""
