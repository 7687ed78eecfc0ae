"""Event log adapters, one module per backend."""
