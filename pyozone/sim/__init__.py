"""A deterministic simulator: virtual datanodes driving the real SCM core on a virtual clock."""
