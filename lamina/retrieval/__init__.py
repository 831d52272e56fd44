"""Retrieval: ranking primitives and, on top of them, Workflow selection and source localization.

Primitives (pure functions over numpy/scipy, held warm by graphd):
  tokenize.py  code-aware terms shared by index and query
  bm25.py      BM25F index with precomputed sparse weights; a query is a column sum
  dense.py     exact cosine over an L2-normalised float32 matrix
  fusion.py    deterministic top-k and reciprocal-rank fusion

Import from the submodules; this package imports nothing, so importing one primitive (e.g. the
tokenizer in the worker) does not pay for scipy.
"""
