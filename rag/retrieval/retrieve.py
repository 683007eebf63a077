"""Retrieval around the search: open the index, refresh it first if asked, refuse an index that no
longer describes its repository, search, and note what changed since ingest."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, NamedTuple

from rag.ranking.hits import Hit
from rag.ranking.order import names_found, question_shape
from rag.ranking.passages import mark
from rag.ranking.pipeline import rank
from rag.retrieval.members import check_repository
from rag.retrieval.opening import open_index
from rag.retrieval.results import Glance
from rag.retrieval.search import (
    DEFAULT_SCORING,
    DEFAULT_TOP_K,
    Query,
    analyse,
    check_request,
    search,
    search_query,
)
from rag.semantic.registry import DEFAULT_MODE
from rag.store.paths import Where
from rag.store.reader import Index
from rag.store.workspace import Reader, Workspace
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
    searches: tuple[str, ...] = ()  # more words to search with the question's (a model's searches)
    weights: RankingWeights = DEFAULTS  # what the list is ranked with (a benchmark's DEFAULTS._replace(...))


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
    searches: tuple[str, ...] = ()  # what was searched besides the question (a model's searches)
    glance: Glance | None = None  # what a planner was shown of the index, when one was asked
    repositories: tuple[str, ...] = ()  # a workspace's repositories (their names), in path order


# a planner: what the index shows of a question (Glance) -> the searches to run with it
Planner = Callable[[Glance], Sequence[str]]


def retrieve(
    index_path: Where | os.PathLike[str], request: Request, planner: Planner | None = None
) -> Retrieval:
    """Open the index, re-ingest changed files first if asked, search, and check freshness.

    With a `planner` (the model that will answer, rag.answer.plan), the question is first
    searched alone, lexically, and the planner shown what that found (glance()); what it returns
    is searched with the question. A question that is one identifier (a lookup the ranking's
    definition boost answers), whose words find nothing, or whose own search ranks first the code it
    names (rag.ranking.order.names_found), is not planned.

    The freshness check is cheap, and does not grow with the repository: stat calls on the
    hits' own files and the folders that hold them, up to the root (Index.changed_files);
    with no hit, on every indexed folder. A refresh checks every file and folder.
    """
    check_request(request.k, request.scoring)  # the caller's mistakes, before anything that reads the index
    refreshed: IngestReport | None = None
    if request.refresh:
        refreshed = refresh(index_path, request.groups)
    # opened once for a query without --refresh: its cost is the query's
    with open_index(index_path) as index:
        root = index.manifest.root
        gone = check_index(index, index_path)
        searches, seen = request.searches, None
        if planner is not None and question_shape(request.question).symbol is None:
            seen = glance(index, request.question, request.groups, request.scoring)
            # a question whose own search ranks first the code it names needs no plan (names_found)
            if seen.candidates and not names_found(request.question, seen.candidates[0]):
                searches = tuple(planner(seen))
        with one_read(index):
            query = analyse(index, request.question, request.groups, searches)
            hits, note = rank_query(
                index,
                query,
                request.k,
                explain=True,  # what each hit matched: its words and lines, and the searches that found it
                groups=request.groups,
                scoring=request.scoring,
                rerank=request.rerank,
                weights=request.weights,
            )
            if searches:
                hits = found_by(index, hits, request.question, searches, request.groups)
            if index.manifest.tokenizer.mode != "plain":
                hits = mark(index, hits, (request.question, *searches))
            if not request.explain:
                hits = [h._replace(contributions=()) for h in hits]
            hits = named(index, hits)
            # no hit: the answer may be in a file added since, so every indexed folder is checked
            changed = changed_since_ingest(index, [h.chunk.path for h in hits], not hits, request.groups)
    return Retrieval(
        hits,
        changed,
        gone,
        index_location(index),
        root,
        refreshed,
        query.corrections,
        request.refresh,
        note,
        searches,
        seen,
        repositories(index),
    )


def one_read(index: Reader) -> AbstractContextManager[None]:
    """A workspace's snapshot for a whole question, so that what it reads of its hosts is read once
    (Workspace.snapshot); nothing for one index, whose searches each read one state."""
    return index.snapshot() if isinstance(index, Workspace) else nullcontext()


def named(index: Reader, hits: list[Hit]) -> list[Hit]:
    """Name each hit's repository when the reader is a workspace (its path's first folder)."""
    if not isinstance(index, Workspace):
        return hits
    return [h._replace(repository=h.chunk.path.partition("/")[0]) for h in hits]


def repositories(index: Reader) -> tuple[str, ...]:
    """A workspace's repository names; () for one index."""
    return tuple(index.names) if isinstance(index, Workspace) else ()


def found_by(
    index: Reader,
    hits: list[Hit],
    question: str,
    searches: Sequence[str],
    groups: frozenset[str] = frozenset(),
) -> list[Hit]:
    """Name the searches whose words each hit matched ("question", "search 1", ...), most of its
    score first: a term's share of the score goes to the searches that hold it, by their counts of
    it; a term none holds as written (a corrected word, a short form) is the question's."""
    from rag.retrieval.search import query_counts

    classes = index.view(groups).classes
    labels = ["question", *(f"search {i}" for i in range(1, len(searches) + 1))]
    counts = [query_counts(index, text, classes) for text in (question, *searches)]
    out = []
    for hit in hits:
        share = [0.0] * len(labels)
        for c in hit.contributions:
            held = [n.get(c.term, 0) for n in counts]
            total = sum(held)
            if not total:
                share[0] += c.score
                continue
            for i, n in enumerate(held):
                share[i] += c.score * n / total
        order = sorted((i for i, s in enumerate(share) if s > 0), key=lambda i: (-share[i], i))
        out.append(hit._replace(found_by=tuple(labels[i] for i in order)))
    return out


def index_location(index: Reader) -> str:
    """Where a reader's index is: its file, or a workspace's files (as the user named it)."""
    return index.path if isinstance(index, Workspace) else os.path.abspath(index.path)


def changed_since_ingest(
    index: Reader, paths: list[str], everywhere: bool, groups: frozenset[str]
) -> list[str]:
    """Return which of `paths` (with `everywhere`, also any file added to an indexed folder) changed
    since ingest and would be indexed, naming no file or folder the caller may not read. In a
    workspace each repository is asked about its own paths."""
    if isinstance(index, Workspace):  # each repository's, where it is held
        return index.changed_files(paths, everywhere=everywhere, groups=groups)
    changed = index.changed_files(paths, everywhere=everywhere, groups=groups)
    if changed:
        from rag.retrieval.freshness import indexable_changes

        changed = indexable_changes(index, changed, groups)
    return changed


def check_index(index: Reader, index_path: object = None) -> str | None:
    """Refuse an index that no longer describes its repository (moved with it, or its access rules
    changed since ingest); return the root when it is gone (answered from the passages as indexed),
    else None. In a workspace each repository's index is checked where it is held; a gone one's
    root is returned."""
    if isinstance(index, Workspace):
        return next((root for found in index.ask_all("check") for root in found if root), None)
    return check_repository(index)


def rank_question(
    index: Reader,
    question: str,
    k: int,
    *,
    explain: bool = False,
    groups: frozenset[str] = frozenset(),
    scoring: str = DEFAULT_SCORING,
    rerank: str = DEFAULT_MODE,
    weights: RankingWeights = DEFAULTS,
    searches: Sequence[str] = (),
) -> tuple[list[Hit], str | None]:
    """Return a question's top k from an open index, as every caller ranks it (a query, `rag eval`,
    the MCP tool, the benches), with the note for stderr the semantic stage leaves (the extra is not
    installed, or its model failed). `weights` are what the lexical ranking uses (a benchmark passes
    DEFAULTS._replace(...)). `searches` are searched with the question, in one query (search())."""
    with one_read(index):
        query = analyse(index, question, groups, searches)
        return rank_query(
            index, query, k, explain=explain, groups=groups, scoring=scoring, rerank=rerank, weights=weights
        )


def rank_query(
    index: Reader,
    query: Query,
    k: int,
    *,
    explain: bool = False,
    groups: frozenset[str] = frozenset(),
    scoring: str = DEFAULT_SCORING,
    rerank: str = DEFAULT_MODE,
    weights: RankingWeights = DEFAULTS,
) -> tuple[list[Hit], str | None]:
    """rank_question for a question analysed already (for `groups`): its search, scored as often as
    the rank pipeline asks (rag.ranking.pipeline), the question analysed once.

    A question that is one identifier skips the semantic stage: it is a lookup the definition boost
    answers, and a sentence embedding of a bare name only blurs it (docs/levers.md: symbol 0.913 -> 0.844)."""

    def candidates(want: int, spread: bool) -> list[Hit]:
        return search_query(
            index,
            query,
            want,
            explain=explain,
            groups=groups,
            scoring=scoring,
            spread=spread,
            weights=weights,
        )

    with one_read(index):
        return rank(
            index,
            candidates,
            k,
            rerank=rerank,
            semantic=question_shape(query.question).symbol is None,
            compare=query.text,  # what the passages' meaning is compared with
            weights=weights,
        )


GLANCE = 20  # the passages of the question's own search a planner is shown


def glance(
    index: Reader,
    question: str,
    groups: frozenset[str] = frozenset(),
    scoring: str = DEFAULT_SCORING,
    depth: int = GLANCE,
) -> Glance:
    """Return what a planner is shown of the index for a question, as a caller with `groups` sees
    it: the repository's folder name (a workspace's: its repositories'), its main languages, and the
    question's own lexical top `depth` (no semantic stage: it is a first look)."""
    hits = search(index, question, depth, groups=groups, scoring=scoring)
    return Glance(
        # a workspace: its repositories' names (the passages' paths begin with them)
        ", ".join(index.names)
        if isinstance(index, Workspace)
        else os.path.basename(index.manifest.root.rstrip("/\\")) or index.manifest.root,
        languages(index, groups),
        tuple(h.chunk for h in hits),
    )


LANGUAGES = 4  # the most a glance names


_LABELS = {"python": "Python", "javascript": "JavaScript/TypeScript", "markdown": "Markdown", "rst": "reST"}


def languages(index: Reader, groups: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Return the languages of the files a caller with `groups` may read, as people name them
    ("Python", "Go", "Markdown"), most files first; plain text is not a language."""
    from rag.chunking import chunker_for
    from rag.chunking.languages import GRAMMARS

    readable = index.readable_files(groups) if index.manifest.access is not None else None
    counts: dict[str, int] = {}
    for path, _ in index.file_chunk_counts():
        if readable is None or path in readable:
            kind = chunker_for(path)
            counts[kind] = counts.get(kind, 0) + 1
    counts.pop("text", None)
    kinds = sorted(counts, key=lambda kind: (-counts[kind], kind))[:LANGUAGES]
    return tuple(GRAMMARS[k].label if k in GRAMMARS else _LABELS.get(k, k) for k in kinds)


def refresh(
    index_path: Where | os.PathLike[str], groups: frozenset[str] = frozenset()
) -> IngestReport | None:
    """Re-ingest the index's repository when anything indexed changed (a copied or moved
    repository: the folder that now holds the index); return what the ingest did as a caller
    with `groups` sees it (pipeline.as_seen_by: up to date when only files it may not read
    changed), or None when nothing had changed."""
    if not isinstance(index_path, (str, os.PathLike)):  # a workspace: each repository that changed
        reports = [refresh(path, groups) for path in index_path]
        return next((r for r in reports if r is not None), None)
    with Index(index_path) as index:
        root, settings = index.manifest.root, index.manifest.tokenizer
        # a copied or moved repository: re-read the new folder, not the old one
        moved = index.moved_repository()
        stale = moved is not None or index.access_changed() or bool(index.changed_files(index.files()))
    if not stale:
        return None
    from rag.indexing.pipeline import (  # only a refresh needs the ingest pipeline
        IngestOptions,
        as_seen_by,
        ingest,
    )

    return as_seen_by(ingest(moved or root, index_path, IngestOptions(settings)), groups)
