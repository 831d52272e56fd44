"""Syntax-aware chunking of source files (tree-sitter), with qualified symbol names."""

from lamina.chunking.chunker import Chunk, chunk_file
from lamina.chunking.languages import language_for

__all__ = ["Chunk", "chunk_file", "language_for"]
