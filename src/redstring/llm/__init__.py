"""Language and embedding models: adapters implementing `LlmProvider` and `EmbeddingProvider`."""
