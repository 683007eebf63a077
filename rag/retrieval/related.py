"""Related code: the passages most like the one that holds a given line of an indexed file.

The query is the source passage's own index terms (its stored tfs), its heaviest by tf-idf in
the caller's view, scored and ranked as a question's terms are (rag.retrieval.search.search_passage);
with the semantic stage, reordered by cosine to the source passage's vector, mixed as a question's
(rag.ranking.semantic). The source passage and every passage overlapping its lines are left out.

A caller sees what an index without the files it may not read would show: such a file is "not in
the index", in the same words as a file that never was, and no other passage of one comes back."""

from __future__ import annotations

import os
from typing import NamedTuple

from rag.chunking.base import Chunk
from rag.errors import InputError, command
from rag.ranking.hits import Hit
from rag.ranking.order import COHERENCE_REASON
from rag.ranking.pipeline import rank
from rag.retrieval.opening import open_index
from rag.retrieval.retrieve import (
    Retrieval,
    changed_since_ingest,
    check_index,
    index_location,
    named,
    refresh,
    repositories,
)
from rag.retrieval.search import DEFAULT_SCORING, DEFAULT_TOP_K, check_request, readable, search_passage
from rag.semantic.registry import DEFAULT_MODE
from rag.store.paths import Where
from rag.store.workspace import AnyView, Reader, Workspace, roots
from rag.text.terms import chunk_counts
from rag.weights import DEFAULTS, RankingWeights

# Hit.boosted for file coherence, which a passage's search shares with a question's: no question here
LIKE_COHERENCE_REASON = "its file holds much of the code like this passage"


class Related(NamedTuple):
    """The passage that holds the line asked about, and the passages most like it."""

    source: Chunk
    found: Retrieval  # its hits, and what the caller should be told about the index's freshness


def related(
    index_path: Where | os.PathLike[str],
    path: str,
    line: int,
    k: int = DEFAULT_TOP_K,
    *,
    groups: frozenset[str] = frozenset(),
    scoring: str = DEFAULT_SCORING,
    rerank: str = DEFAULT_MODE,
    refresh_first: bool = False,
    cwd: str | None = None,
) -> Related:
    """Return the k passages most like the one that holds `line` (1-based) of the indexed file
    `path`: relative to the indexed root, or a path (absolute, or relative to `cwd`, default the
    current folder) inside it. A line between passages takes the nearest one."""
    check_request(k, scoring)
    if line < 1:
        raise ValueError("line must be at least 1")
    refreshed = refresh(index_path, groups) if refresh_first else None
    with open_index(index_path) as index:
        root = index.manifest.root
        gone = check_index(index, index_path)
        with index.snapshot():  # the source's chunk ids and the search read one state of the index
            view = index.view(groups)
            rel = _indexed_path(index, view, path, cwd or os.getcwd())
            source_id, source, overlapping = _source(index, rel, path, line)
            hits, note = rank_like(
                index, source_id, source, overlapping, k, groups=groups, scoring=scoring, rerank=rerank
            )
        changed = changed_since_ingest(index, [rel, *(h.chunk.path for h in hits)], False, groups)
        hits = named(index, hits)
        names = repositories(index)
    found = Retrieval(
        hits,
        changed,
        gone,
        index_location(index),
        root,
        refreshed,
        refresh=refresh_first,
        note=note,
        repositories=names,
    )
    return Related(source, found)


def rank_like(
    index: Reader,
    source_id: int,
    source: Chunk,
    exclude: frozenset[int],
    k: int,
    *,
    groups: frozenset[str] = frozenset(),
    scoring: str = DEFAULT_SCORING,
    rerank: str = DEFAULT_MODE,
    weights: RankingWeights = DEFAULTS,
) -> tuple[list[Hit], str | None]:
    """Return the top k passages like chunk `source_id` (`source`) of an open index, none of the
    chunk ids `exclude` among them, ranked by the pipeline a question's list goes through
    (rag.ranking.pipeline), its passages never grown over the source; with the semantic stage's
    note for stderr, or None."""
    # its stored tfs; tokenized again only to look its terms' names up by their key
    counts = index.chunk_terms(source_id, chunk_counts(source, index.tokenizer))

    def candidates(want: int, spread: bool) -> list[Hit]:
        return search_passage(
            index,
            counts,
            want,
            exclude=exclude,
            groups=groups,
            scoring=scoring,
            limit=weights.passage_terms,
            spread=spread,
            weights=weights,
        )

    hits, note = rank(index, candidates, k, rerank=rerank, like=source, weights=weights)
    hits = [h._replace(boosted=LIKE_COHERENCE_REASON) if h.boosted == COHERENCE_REASON else h for h in hits]
    return hits, note


def not_indexed(path: str, root: str, workspace: bool = False) -> InputError:
    """The error for a file the index does not hold, or holds for other callers only: one message
    for both, so that it tells nothing of files the caller may not read."""
    if workspace:
        return InputError(
            f"{path} is not in the workspace; name an indexed file as REPOSITORY/PATH (or re-run "
            f"`{command('ingest')} --workspace FILE` if it is new)"
        )
    return InputError(
        f"{path} is not in the index; name an indexed file by its path in {root} "
        f"(or re-run `{command('ingest')} {root}` if it is new)"
    )


def _indexed_path(index: Reader, view: AnyView, path: str, cwd: str) -> str:
    """The indexed path `path` names and the caller may read: relative to the root, or a path
    inside the root (absolute, or relative to `cwd`); else the error not_indexed gives."""
    root = index.manifest.root
    for rel in _candidates(path, index, cwd):
        ids = index.file_chunk_ids(rel)
        if ids and readable(index, view, ids[:1]):
            return rel
    raise not_indexed(path, root, isinstance(index, Workspace))


def _candidates(path: str, index: Reader, cwd: str) -> list[str]:
    """The indexed paths `path` may name, most likely first: the file the shell would open (relative
    to `cwd`, or absolute) when it lies inside a root, then `path` relative to the root (in a
    workspace, paths begin with the repository's name)."""
    out: list[str] = []
    full = os.path.normpath(os.path.join(cwd, path))
    for root, name in roots(index):
        for where in (full, os.path.realpath(full)):  # the root is stored resolved
            rel = os.path.relpath(where, root)
            if rel not in (".", "..") and not rel.startswith(".." + os.sep):
                out.append(os.path.join(name, rel))
    if not os.path.isabs(path):
        out.append(os.path.normpath(path))
    inside = [p for p in out if p not in (".", "..") and not p.startswith(".." + os.sep)]
    return list(dict.fromkeys(p.replace(os.sep, "/") for p in inside))


def _source(index: Reader, rel: str, path: str, line: int) -> tuple[int, Chunk, frozenset[int]]:
    """The chunk of the indexed file `rel` that holds `line` (between chunks: the nearest, the one
    before on a tie), and the ids of its file's chunks that overlap it (itself too)."""
    ids = index.file_chunk_ids(rel)
    places = index.places(ids)
    spans = [(cid, places[cid][1], places[cid][2]) for cid in ids]  # in line order
    n_lines = max(end for _, _, end in spans)
    if line > n_lines:  # its last lines may be blank ones no passage holds
        n_lines = max(n_lines, _lines_on_disk(index, rel))
    if line > n_lines:
        raise InputError(f"{path} has {n_lines} lines; give a line from 1 to {n_lines}")

    def distance(span: tuple[int, int, int]) -> int:
        return max(span[1] - line, line - span[2], 0)

    cid, start, end = min(spans, key=distance)
    overlapping = frozenset(other for other, a, b in spans if a <= end and start <= b)
    return cid, index.chunks([cid])[cid], overlapping


def _lines_on_disk(index: Reader, rel: str) -> int:
    """The line count of the indexed file `rel` as it is on disk, when unchanged since ingest; else 0."""
    root = index.manifest.root
    if rel in index.changed_files([rel], everywhere=False):
        return 0
    for member_root, name in roots(index):
        if name and rel.startswith(name + "/"):  # a workspace's path: within its repository
            root, rel = member_root, rel[len(name) + 1 :]
            break
    try:
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
    except OSError:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
