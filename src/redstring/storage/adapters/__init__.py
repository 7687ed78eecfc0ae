"""Shared database clients, one module per backend."""
