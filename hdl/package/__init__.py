"""The accelerator package of seed 002: work distribution, service rates, shared resources, assertions."""
