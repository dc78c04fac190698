"""Topologies (seed 004) and ECMP over them."""
