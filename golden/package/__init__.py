"""The package's resource graph and service-rate models."""
