"""The topologies' report (seed 004): ZCube against rail-optimized fat trees, computed."""
