"""Ingesting a workspace: each repository it lists, into its own index, incrementally (what is
unchanged is reused, as `rag ingest REPO` reuses it)."""

from __future__ import annotations

from rag.indexing.options import IngestOptions
from rag.indexing.pipeline import IngestReport, ingest
from rag.store.paths import workspace_entries
from rag.store.reader import Index


def repositories(spec: str) -> list[tuple[str, str]]:
    """(repository folder, index file) of each repository a workspace lists: a listed index file's
    repository is the folder it was built from."""
    out = []
    for entry in workspace_entries(spec, every_folder=True):
        if entry.folder is not None:
            out.append((entry.folder, entry.index_path))
        else:
            with Index(entry.index_path) as index:
                out.append((index.manifest.root, entry.index_path))
    return out


def ingest_workspace(spec: str, full: bool = False, workers: int | None = None) -> list[IngestReport]:
    """Ingest each repository of the workspace `spec` (rag.store.paths.workspace_entries) into its own
    index, in turn (rag.retrieval.cluster.ingest_on_cluster: in Ray tasks)."""
    return [
        ingest(root, path, IngestOptions(workers=workers, full=full)) for root, path in repositories(spec)
    ]
