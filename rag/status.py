"""What an index holds and how fresh it is: the report behind `rag status` (and the MCP server's
status tool), as a caller with some access groups sees it."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

from rag.errors import command
from rag.store.paths import Where
from rag.store.reader import Index


class Status(NamedTuple):
    """An index: where it is, what built it, what it holds, what it left out, what went stale.

    Every count and path is the caller's: what an index built without the files its groups may
    not read (.rag-access) would report."""

    index_path: str
    repository: str
    format_version: int
    built_at: str  # ISO 8601, local time
    tokenizer: str
    files: int
    chunks: int
    files_by_chunker: dict[str, int]  # python, markdown, go, text, ...
    chunks_by_chunker: dict[str, int]
    skipped: dict[str, int]  # reason -> files (empty for an index built before summaries were kept)
    skipped_paths: dict[str, list[str]]  # reason -> paths (at most SKIPPED_LISTED each; folders end in '/')
    redacted: dict[str, int]  # kind -> secrets redacted in the indexed files
    stale: list[str]  # indexed files and folders that changed since ingest, as a query notes them
    summary_recorded: bool  # False: built by a version that did not record skips and redactions
    # with the semantic stage on: the passages whose vector is cached for its model (None: stage off)
    vectors: int | None = None


def status(index_path: str | os.PathLike[str], groups: frozenset[str] = frozenset()) -> Status:
    """Describe the index at `index_path` as a caller with `groups` sees it: its manifest, contents
    by chunker, skips, redactions and the files changed since ingest (every file and folder is
    checked: one stat each)."""
    from rag.chunking import chunker_for
    from rag.retrieval.freshness import indexable_changes
    from rag.semantic.registry import will_run

    with Index(index_path) as index:
        m = index.manifest
        every = index.file_chunk_counts()
        hidden = _hidden_paths(index, groups, {path for path, _ in every})
        counts = [(path, n) for path, n in every if not hidden(path)]
        readable = {path for path, _ in counts}
        files: Counter[str] = Counter()
        chunks: Counter[str] = Counter()
        for path, n in counts:
            kind = chunker_for(path)
            files[kind] += 1
            chunks[kind] += n
        stale = index.changed_files(readable, groups=groups) if os.path.isdir(m.root) else []
        stale = indexable_changes(index, stale, groups) if stale else []
        summary: dict[str, Any] = m.summary or {}
        redacted: Counter[str] = Counter()
        for path, kinds in summary.get("redacted", {}).items():
            if path in readable:
                redacted.update(kinds)
        skipped, skipped_paths = _skips(summary, hidden)
        built = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(m.built_at))
        vectors = _cached_vectors(index, readable) if will_run() else None
        return Status(
            index_path=os.path.abspath(index.path),
            repository=m.root,
            format_version=m.format_version,
            built_at=built,
            tokenizer=m.tokenizer.mode,
            files=len(counts),
            chunks=sum(n for _, n in counts),
            files_by_chunker=dict(files.most_common()),
            chunks_by_chunker=dict(chunks.most_common()),
            skipped=skipped,
            skipped_paths=skipped_paths,
            redacted=dict(sorted(redacted.items())),
            stale=stale,
            summary_recorded=m.summary is not None,
            vectors=vectors,
        )


def _hidden_paths(index: Index, groups: frozenset[str], indexed: set[str]) -> Callable[[str], bool]:
    """Return a test of whether an indexed or skipped path is one the caller may not read.

    Indexed files carry the access class the ingest gave them; a skipped file or folder is placed
    by the repository's .rag-access, which must be the one the index was built with (as a query
    requires). Without it (the repository is gone) no skipped path can be placed, and none is shown."""
    from rag.errors import InputError
    from rag.sources.access import AccessList, can_read
    from rag.sources.ignore import is_ignored
    from rag.sources.names import ACCESS_FILE

    root = index.manifest.root
    if index.access_changed():
        AccessList.load(root)  # a rule that cannot be read or parsed: the error names its line
        # counted under the old rules, a count or a skipped path could show what the new ones shut out
        raise InputError(
            f"{ACCESS_FILE} changed since the index was built — re-run `{command('ingest')} {root}` "
            "to see its status"
        )
    if index.manifest.access is None:  # built without access rules: every file is public
        return lambda path: False
    readable = index.readable_files(groups)
    rules = AccessList.load(root).rules if os.path.isdir(root) else None

    def hidden(path: str) -> bool:
        if path in indexed:
            return path not in readable
        if rules is None:
            return True
        folder = path.endswith("/")  # passed over whole: its own rule decides, as for a directory
        for rule in reversed(rules):  # the last rule that matches decides (AccessList.groups_of)
            if is_ignored([rule.rules], path.rstrip("/"), folder):
                return not can_read(rule.groups, groups)
        return False

    return hidden


def _skips(
    summary: dict[str, Any], hidden: Callable[[str], bool]
) -> tuple[dict[str, int], dict[str, list[str]]]:
    """The skipped files by reason, and their listed paths, less those the caller may not read.

    A skip the summary lists no path for (a name that is not UTF-8, or beyond SKIPPED_LISTED of its
    reason) cannot be placed: it stays in the count, which names no file."""
    listed: dict[str, list[str]] = summary.get("skipped_paths", {})
    counts = dict(summary.get("skipped", {}))
    paths: dict[str, list[str]] = {}
    for reason, all_paths in listed.items():
        shown = [p for p in all_paths if not hidden(p)]
        if reason in counts:
            counts[reason] -= len(all_paths) - len(shown)
        if shown:
            paths[reason] = shown
    return {r: n for r, n in counts.items() if n > 0}, paths


def _cached_vectors(index: Index, readable: set[str]) -> int | None:
    """How many of the passages of the `readable` files have a cached vector for the configured
    model (about 0.6 s for 38,670 passages); None when the model cannot be told."""
    from rag.errors import ModelError
    from rag.semantic.embed import READ_BATCH
    from rag.semantic.model import identity
    from rag.semantic.vectors import VectorCache, cache_path, content_key, passage_text

    try:
        model = identity()
    except ModelError:
        return None
    if not os.path.exists(cache_path(index.path)):
        return 0
    ids = index.chunk_ids()
    keys = [  # rag.semantic.embed.passage_texts, of the files the caller may read
        content_key(passage_text(c))
        for at in range(0, len(ids), READ_BATCH)
        for c in index.chunks(ids[at : at + READ_BATCH]).values()
        if c.path in readable
    ]
    cache = VectorCache(cache_path(index.path), model)
    try:
        found = cache.get(keys)
    finally:
        cache.close()
    return sum(key in found for key in keys)


def statuses(where: Where, groups: frozenset[str] = frozenset()) -> list[Status]:
    """status() of an index, or of each index of a workspace, in turn."""
    return [status(path, groups) for path in ((where,) if isinstance(where, str) else where)]


def statuses_dict(reports: list[Status], with_paths: bool = False) -> dict[str, Any]:
    """The JSON object of statuses: one index's status_dict, a workspace's as `repositories`."""
    dicts = [status_dict(report, with_paths) for report in reports]
    return dicts[0] if len(dicts) == 1 else {"repositories": dicts}


def status_dict(report: Status, with_paths: bool = False) -> dict[str, Any]:
    """Return a status as the JSON object `rag status --json` prints (paths with `with_paths`)."""
    out = report._asdict()
    out = {"index": out.pop("index_path"), **out}
    if not with_paths:
        del out["skipped_paths"]
    return out
