"""The PRISM SINGLE collective node: its phase blocks and the top level (prism_node)."""
