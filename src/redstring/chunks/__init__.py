"""Passage storage: adapters implementing `redstring.ports.ChunkStore`."""
