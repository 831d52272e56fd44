"""Lamina: prepare work from a canonical product graph, with an offline hybrid retrieval index."""

__version__ = "0.1.0"
