"""Small building blocks with no Ozone semantics of their own."""
