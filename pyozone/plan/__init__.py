"""What-if planners that drive the real SCM code with simulated datanodes."""
