"""Blocks shared by every subsystem (stream registers)."""
