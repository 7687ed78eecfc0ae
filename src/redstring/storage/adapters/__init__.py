"""Storage machinery, one module per backend."""
