"""The fabric's verification library: RTL harnesses, properties, collision runs."""
