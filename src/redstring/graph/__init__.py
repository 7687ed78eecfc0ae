"""Graph storage: adapters implementing `redstring.ports.GraphStore`."""
