"""HTTP layer: thin handlers that validate input and call the services."""
