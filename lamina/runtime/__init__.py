"""The offline embedding runtime: asset build (asset, export_dev), install and verification (install),
and the Embedder the rest of Lamina uses (embedder). See docs/runtime.md.

Import what you need from the submodules, e.g. `from lamina.runtime.embedder import load_embedder`;
this package stays empty so that importing it costs nothing.
"""
