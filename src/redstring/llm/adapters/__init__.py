"""Model adapters, one module per backend; the fakes stand in for real models in tests."""
