"""Chunk store adapters, one module per backend."""
