"""A shared remote cache of embeddings: records on an S3-compatible object store, keyed like the local
content store (blake3 of model digest and text digest), so a fresh clone or a CI runner fetches what a
teammate or CI already embedded. See docs/configuration.md ([cache]) and the README."""
