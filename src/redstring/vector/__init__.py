"""Vector storage: adapters implementing `redstring.ports.VectorStore`."""
