"""Vector store adapters, one module per backend."""
