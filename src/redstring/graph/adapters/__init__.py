"""Graph store adapters, one module per backend."""
