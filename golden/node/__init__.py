"""The node's protocol (frame layouts, codes) and its transaction-level model."""
