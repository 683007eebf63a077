"""Retrieval around the search: open the index, refresh it first if asked, refuse an index that no
longer describes its repository, search, and note what changed since ingest."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NamedTuple

from rag.errors import InputError, command
from rag.retrieval.passages import shape
from rag.retrieval.ranking import question_shape
from rag.retrieval.results import Hit
from rag.retrieval.search import DEFAULT_SCORING, DEFAULT_TOP_K, check_request, search
from rag.semantic.registry import DEFAULT_MODE, NOT_INSTALLED, active
from rag.sources.names import ACCESS_FILE
from rag.store.reader import Index
from rag.weights import DEFAULTS, RankingWeights

if TYPE_CHECKING:  # a query without --refresh never loads the ingest pipeline
    from rag.indexing.pipeline import IngestReport
    from rag.retrieval.spelling import Correction


class Request(NamedTuple):
    """What a caller asks of retrieval. (A NamedTuple: a query must not pay for dataclasses.)"""

    question: str
    k: int = DEFAULT_TOP_K
    explain: bool = False  # carry each hit's term contributions
    groups: frozenset[str] = frozenset()  # the caller's access groups
    refresh: bool = False  # re-ingest what changed first
    scoring: str = DEFAULT_SCORING
    rerank: str = DEFAULT_MODE  # the semantic stage: auto (when installed), semantic or none


class Retrieval(NamedTuple):
    """The hits for a question, and what the caller should be told about the index's freshness."""

    hits: list[Hit]
    changed: list[str]  # paths (directories end in '/') that look newer than the index
    gone: str | None = None  # the repository the index was built from, when it no longer exists
    index_path: str = ""  # the index file that answered
    repository: str = ""  # the repository it was built from
    refreshed: IngestReport | None = None  # what --refresh re-indexed (None: nothing needed it)
    corrections: tuple[
        Correction, ...
    ] = ()  # query words unknown to the index, and what was searched instead
    refresh: bool = False  # a refresh was asked for (refreshed None: nothing had changed)
    note: str | None = None  # from the semantic stage: the extra is not installed, or its model failed


def retrieve(index_path: str | os.PathLike[str], request: Request) -> Retrieval:
    """Open the index, re-ingest changed files first if asked, search, and check freshness.

    The freshness check is cheap, and does not grow with the repository: stat calls on the
    hits' own files and the folders that hold them, up to the root (Index.changed_files);
    with no hit, on every indexed folder. A refresh checks every file and folder.
    """
    check_request(request.k, request.scoring)  # the caller's mistakes, before anything that reads the index
    refreshed: IngestReport | None = None
    if request.refresh:
        refreshed = refresh(index_path)
    with Index(index_path) as index:  # opened once for a query without --refresh: its cost is the query's
        root = index.manifest.root
        gone = check_index(index, index_path)
        hits, note = rank_question(
            index,
            request.question,
            request.k,
            explain=request.explain,
            groups=request.groups,
            scoring=request.scoring,
            rerank=request.rerank,
        )
        spelling = sys.modules.get(
            "rag.retrieval.spelling"
        )  # loaded by the search above only if a word was unknown
        fixed = spelling.corrections_made(index, request.question, request.groups) if spelling else ()
        # no hit: the answer may be in a file added since, so every indexed folder is checked
        changed = changed_since_ingest(index, [h.chunk.path for h in hits], not hits, request.groups)
    return Retrieval(
        hits,
        changed,
        gone,
        os.path.abspath(index_path),
        root,
        refreshed,
        fixed,
        request.refresh,
        note,
    )


def changed_since_ingest(
    index: Index, paths: list[str], everywhere: bool, groups: frozenset[str]
) -> list[str]:
    """Return which of `paths` (with `everywhere`, also any file added to an indexed folder) changed
    since ingest and would be indexed, naming no file or folder the caller may not read."""
    changed = index.changed_files(paths, everywhere=everywhere, groups=groups)
    if changed:
        from rag.retrieval.freshness import indexable_changes

        changed = indexable_changes(index, changed)
    return changed


def check_index(index: Index, index_path: str | os.PathLike[str]) -> str | None:
    """Refuse an index that no longer describes its repository (moved with it, or its access rules
    changed since ingest); return the root when it is gone (answered from the passages as indexed),
    else None."""
    root = index.manifest.root
    moved = index.moved_repository()
    if moved is not None:  # its files and freshness would be the old folder's
        raise InputError(
            f"The index at {index_path} was built for {root}, and this repository is {moved} — "
            f"re-run `{command('ingest')} {moved}`, or pass --refresh"
        )
    gone = None if os.path.isdir(root) else root
    if index.access_changed():
        from rag.sources.access import AccessList

        AccessList.load(root)  # a rule that cannot be read or parsed: the error names its line
        # who may read what was decided at ingest: answering under the old rules could show a
        # file to a caller the new ones shut out
        raise InputError(
            f"{ACCESS_FILE} changed since the index was built — re-run "
            f"`{command('ingest')} {root}`, or pass --refresh"
        )
    return gone


def rank_question(
    index: Index,
    question: str,
    k: int,
    *,
    explain: bool = False,
    groups: frozenset[str] = frozenset(),
    scoring: str = DEFAULT_SCORING,
    rerank: str = DEFAULT_MODE,
    weights: RankingWeights = DEFAULTS,
) -> tuple[list[Hit], str | None]:
    """Return a question's top k from an open index, as every caller ranks it (a query, `rag eval`,
    the MCP tool, the benches): the lexical ranking, then the semantic stage when `rerank` runs it;
    with the note for stderr the stage leaves (the extra is not installed, or its model failed).
    `weights` are what the lexical ranking uses (a benchmark passes DEFAULTS._replace(...)).

    A question that is one identifier skips the stage: it is a lookup the definition boost answers,
    and a sentence embedding of a bare name only blurs it (docs/levers.md: symbol 0.913 -> 0.844)."""
    available = active(rerank)  # one look for the extra (find_spec) per call
    shaped = index.manifest.tokenizer.mode != "plain"  # the original design's passages stay its windows
    want = shaping_depth(k, weights) if shaped else k
    if not available or question_shape(question).symbol is not None:
        hits = search(index, question, want, explain=explain, groups=groups, scoring=scoring, weights=weights)
        note = NOT_INSTALLED if rerank == "auto" and not available else None
    else:
        from rag.semantic.rerank import lexical_depth, safe_rerank  # the stage's model side, when it runs

        # the stage reorders the lexical list, so it takes it unspread and spreads its own order
        hits = search(
            index,
            question,
            lexical_depth(want),
            explain=explain,
            groups=groups,
            scoring=scoring,
            spread=False,
            weights=weights,
        )
        hits, note = safe_rerank(index.path, question, hits, want, weights)
    return (shape(index, hits, k, weights.grow_chars) if shaped else hits), note


def shaping_depth(k: int, weights: RankingWeights = DEFAULTS) -> int:
    """Return how many ranked hits the passages of a top k are shaped from. Up to k = 10 it is 10,
    whose lexical pool is that of every such k (RankingWeights.min_candidates), so that the first
    passages are the same for all of them; a list of 10 may then come out shorter. Past 10, half as
    many again, to fill k after the hits an earlier passage covers make way."""
    fixed = weights.min_candidates // weights.candidates_per_k
    return fixed if k <= fixed else k + k // 2


def refresh(index_path: str | os.PathLike[str]) -> IngestReport | None:
    """Re-ingest the index's repository when anything indexed changed (a copied or moved
    repository: the folder that now holds the index); return what the ingest did, or None
    when nothing had changed."""
    with Index(index_path) as index:
        root, settings = index.manifest.root, index.manifest.tokenizer
        # a copied or moved repository: re-read the new folder, not the old one
        moved = index.moved_repository()
        stale = moved is not None or index.access_changed() or bool(index.changed_files(index.files()))
    if not stale:
        return None
    from rag.indexing.pipeline import IngestOptions, ingest  # only a refresh needs the ingest pipeline

    return ingest(moved or root, index_path, IngestOptions(settings))
