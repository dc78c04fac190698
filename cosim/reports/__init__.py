"""Reports from the converted design: sizes and synthesis."""
