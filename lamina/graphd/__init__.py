"""graphd: the only process that opens the product and index databases."""
