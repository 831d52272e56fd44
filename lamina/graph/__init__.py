"""The canonical product graph: model, TOML loading and validation, GraphVersion, store and closure."""

from lamina.graph.documents import WorkflowDocument, workflow_documents
from lamina.graph.load import (
    GraphInvalid,
    GraphProblem,
    load_graph,
    load_graph_files,
    read_graph_files,
    unmatched_globs,
)
from lamina.graph.model import ProductGraph
from lamina.graph.version import graph_version

__all__ = [
    "GraphInvalid",
    "GraphProblem",
    "ProductGraph",
    "WorkflowDocument",
    "graph_version",
    "load_graph",
    "load_graph_files",
    "read_graph_files",
    "unmatched_globs",
    "workflow_documents",
]
