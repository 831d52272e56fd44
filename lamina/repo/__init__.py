"""Repository access: git identity and the selection of files to index."""
