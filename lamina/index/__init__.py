"""The derived retrieval index: manifest, content-addressed store, membership."""
