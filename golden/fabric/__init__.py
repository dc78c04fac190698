"""ECMP hashing (Python, numba, C) and the fabric's rate and collision models."""
