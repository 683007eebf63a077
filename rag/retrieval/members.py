"""The repositories of a workspace held in one process (Members): each repository's own index,
answering what a workspace (rag.store.workspace) asks of its share, in its own chunk ids; and the
scoring of a query over them with the workspace's statistics.

Scoring is member by member: each repository's chunks are scored from its own postings, the
normalisers computed with the workspace's average length, and the best of all kept. Members are
scored in the order of what they can add to a chunk, most first; once the best found so far fill
the top n, a member whose bound cannot reach the n-th is not scored at all (max-score pruning
across repositories, as rag.retrieval.topk prunes across terms within one). The sums are those one
index over every repository would make (the same terms in the same order, the same normalisers),
so the pairs kept are its own: every chunk whose score reaches the n-th best, to the last bit.
"""

from __future__ import annotations

import math
import os
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from rag.chunking.base import Chunk
from rag.errors import InputError, command
from rag.retrieval.search import readable, readable_postings
from rag.retrieval.topk import Work, keep_best, top_scores
from rag.sources.names import ACCESS_FILE
from rag.store.reader import Index
from rag.store.views import ChunkFloats, blocks_of
from rag.store.workspace import Best, MemberInfo, MemberView, TermPart, name_terms, repository_name
from rag.weights import BM25, bm25_normalisers

_EPSILON = 1e-12  # slack for rounding when comparing a bound with a score
POSTINGS_KEPT = 4096  # members' postings of terms kept between the requests of a query

# a member's postings of a term: its chunk ids, tfs and a bound on the BM25 tf part (stored, or 1.0)
Found = tuple["array[int]", "array[int]", float]
# a term's row in an index (Index.term)
Row = tuple["array[int]", "array[int]", float, float]


class Members:
    """Repository indexes opened in one process: all of a workspace's, or a cluster actor's share."""

    def __init__(self, paths: Sequence[str]) -> None:
        """Open the indexes at `paths`."""
        self.indexes: dict[str, Index] = {}
        self._opened: dict[str, tuple[int, int]] = {}  # name -> its index file's (device, inode) when opened
        try:
            for path in paths:
                index = Index(path)
                name = repository_name(index.manifest.root)
                if name in self.indexes:
                    index.close()
                    raise InputError(
                        f"Two indexes of the workspace are of repositories named {name!r} "
                        f"({self.indexes[name].manifest.root}, {index.manifest.root}) — rename one folder "
                        "and ingest it again"
                    )
                self.indexes[name] = index
                self._opened[name] = _identity(index.path)
        except BaseException:
            self.close()
            raise
        # name -> the terms its name adds to each of its chunks (its path words in a workspace)
        self.extra = {
            name: name_terms(index.manifest.tokenizer, index.tokenizer, name)
            for name, index in self.indexes.items()
        }
        # name -> (the manifest, groups and average length they were computed for, the normalisers)
        self._normalisers: dict[str, tuple[object, frozenset[str], float, ChunkFloats]] = {}
        # (name, term, groups) -> (the manifest they were read under, a member's postings of a term):
        # a query reads each term's for its statistics, its scoring and its explanation
        self._postings: dict[tuple[str, str, frozenset[str]], tuple[object, Found | None]] = {}

    def close(self) -> None:
        """Close every index."""
        for index in self.indexes.values():
            index.close()

    def describe(self) -> list[MemberInfo]:
        """What a workspace needs to know of each member."""
        return [
            MemberInfo(name, index.path, index.n_ids, index.manifest) for name, index in self.indexes.items()
        ]

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Read every member from one state of its index."""
        with ExitStack() as stack:
            for index in self.indexes.values():
                stack.enter_context(index.snapshot())
            yield

    def run(self, method: str, *args: Any) -> Any:
        """Answer one request, reading one state of every member (a cluster actor's entry point).
        An index file an ingest has replaced since (a full rebuild writes a new file) is opened anew."""
        self.reopen_replaced()
        with self.snapshot():
            return getattr(self, method)(*args)

    def reopen_replaced(self) -> None:
        """Open again the members whose index file was replaced since it was opened."""
        for name, index in list(self.indexes.items()):
            try:
                now = _identity(index.path)
            except OSError:
                continue  # gone: answered from what is open, as a query answers from a gone repository
            if now != self._opened.get(name):
                fresh = Index(index.path)
                index.close()
                self.indexes[name] = fresh
                self._opened[name] = now

    # -- statistics --------------------------------------------------------------------------------

    def member_postings(
        self, name: str, term: str, groups: frozenset[str], avglen: float = 0.0
    ) -> tuple[array[int], array[int], float] | None:
        """A member's postings of `term` within a caller's view (its own chunk ids, tfs), and a bound
        on their BM25 tf part under the average length `avglen` (1: none known). The terms of its
        name are held by every chunk."""
        index = self.indexes[name]
        cached = self._postings.get((name, term, groups))
        if cached is not None and cached[0] is index.manifest:
            found = cached[1]
        else:
            found = self._from_row(name, term, groups, index.term(term))
            self._keep(name, term, groups, found)
        if found is None:
            return None
        ids, tfs, maxb = found
        bound = maxb * max(1.0, avglen / index.manifest.bm25_avglen) if avglen and maxb < 1.0 else 1.0
        return ids, tfs, bound

    def _kept(self, name: str, term: str, groups: frozenset[str]) -> bool:
        cached = self._postings.get((name, term, groups))
        return cached is not None and cached[0] is self.indexes[name].manifest

    def _keep(self, name: str, term: str, groups: frozenset[str], found: Found | None) -> None:
        if len(self._postings) >= POSTINGS_KEPT:
            self._postings.clear()
        self._postings[(name, term, groups)] = (self.indexes[name].manifest, found)

    def _from_row(self, name: str, term: str, groups: frozenset[str], found: Row | None) -> Found | None:
        """member_postings from the term's row in the member's index (None: it has none), with the
        stored bound on the tf part (1.0 when unknown)."""
        index = self.indexes[name]
        view = index.view(groups)
        if found is not None and view.classes is not None:
            ids, tfs = readable_postings(found[0], found[1], view.chunk_class, view.classes)
            found = (ids, tfs, math.inf, 1.0)
        more = self.extra[name].get(term, 0)
        if more:  # a term of the repository's name: every chunk the view holds has it
            held = dict(zip(found[0], found[1])) if found is not None else {}
            ids = array("I", readable(index, view, list(index.live_ids())))
            return ids, array("H", [held.get(cid, 0) + more for cid in ids]), 1.0  # a tf part is below 1
        if found is None or not found[0]:
            return None
        return found[0], found[1], found[3]

    def prepare(
        self, groups: frozenset[str], terms: list[str]
    ) -> tuple[dict[str, MemberView], list[tuple[str, str]], dict[str, int]]:
        """Each member's part of a caller's view (its name's words counted in its length), the acronyms
        the files of the view define and dfs() of `terms`: what analysing a question reads first."""
        views = {}
        for name, index in self.indexes.items():
            view = index.view(groups)
            grown = view.length + sum(self.extra[name].values()) * view.n_chunks
            views[name] = MemberView(view.n_chunks, grown, view.classes is not None)
        return views, self.acronyms(groups), self.dfs(terms, groups)

    def dfs(self, terms: list[str], groups: frozenset[str]) -> dict[str, int]:
        """How many chunks of these members a caller's view holds each term in."""
        for name, index in self.indexes.items():  # each member's rows of all the terms in one read
            missing = [t for t in terms if not self._kept(name, t, groups)]
            if len(missing) > 1:
                rows = index.terms(missing)
                for term in missing:
                    self._keep(name, term, groups, self._from_row(name, term, groups, rows.get(term)))
        out = {}
        for term in terms:
            total = 0
            for name in self.indexes:
                found = self.member_postings(name, term, groups)  # read now: the scoring reads them next
                total += len(found[0]) if found is not None else 0
            out[term] = total
        return out

    def postings(self, terms: list[str], groups: frozenset[str]) -> dict[str, list[TermPart]]:
        """The members' postings of each term within a caller's view."""
        out: dict[str, list[TermPart]] = {}
        for term in terms:
            out[term] = []
            for name in self.indexes:
                found = self.member_postings(name, term, groups)
                if found is not None:
                    out[term].append(TermPart(name, found[0], found[1]))
        return out

    def top(
        self, scales: list[tuple[str, float]], n: int, groups: frozenset[str], avglen: float, prune: bool
    ) -> Best:
        """The n best chunks of these members, plus any tied with the n-th, for terms of these BM25
        scales (in summing order) under the workspace's average length: each with its score, the
        chunk and its length (its name's words counted), which the ranking reads next."""
        works: dict[str, list[Work]] = {}
        for name in self.indexes:
            work: list[Work] = []
            for term, scale in scales:
                found = self.member_postings(name, term, groups, avglen)
                if found is not None:
                    work.append((scale, found[0], found[1], scale * min(1.0, found[2])))
            if work:
                works[name] = work
        bounds = {name: sum(w[3] for w in work) for name, work in works.items()}
        kept: list[tuple[float, int]] = []  # (score, number of the member << 32 | its chunk id)
        names = list(self.indexes)
        scored = skipped = 0
        for name in sorted(works, key=lambda name: (-bounds[name], name)):
            if prune and len(kept) >= n:
                kept = keep_best(kept, n)
                if bounds[name] + _EPSILON < sorted((s for s, _ in kept), reverse=True)[n - 1]:
                    skipped += 1
                    continue
            column = self.normalisers(name, groups, avglen)
            blocks: set[int] = set()
            for _, ids, _, _ in works[name]:
                blocks.update(blocks_of(ids, column.size))
            best = top_scores(works[name], n, BM25(column.load(blocks)), None, len(column.values), prune)
            high = names.index(name) << 32
            kept.extend((score, high | cid) for score, cid in best)
            scored += 1
        by_member: dict[str, list[tuple[float, int]]] = {}
        for score, key in keep_best(kept, n):
            by_member.setdefault(names[key >> 32], []).append((score, key & 0xFFFFFFFF))
        kept_of: dict[str, list[tuple[float, int, Chunk, int]]] = {}
        for name, pairs in by_member.items():
            index = self.indexes[name]
            chunks = index.chunks([cid for _, cid in pairs])
            lengths = index.lengths()
            extra = sum(self.extra[name].values())
            kept_of[name] = [(score, cid, chunks[cid], lengths[cid] + extra) for score, cid in pairs]
        return Best(kept_of, scored, skipped)

    def normalisers(self, name: str, groups: frozenset[str], avglen: float) -> ChunkFloats:
        """A member's BM25 normalisers under the workspace's average length, computed a block at a
        time from its chunks' lengths (grown by its name's words), by its own chunk ids."""
        index = self.indexes[name]
        cached = self._normalisers.get(name)
        if cached is not None and cached[0] is index.manifest and cached[1] == groups and cached[2] == avglen:
            return cached[3]
        extra = sum(self.extra[name].values())
        size = index.block
        of_length: dict[int, float] = {}  # a stored length -> its normaliser: many chunks share one

        def compute(blocks: list[int]) -> list[tuple[int, bytes]]:
            lengths = index.lengths()
            out = []
            for b in blocks:
                part = lengths[b * size : (b + 1) * size]
                new = [n for n in set(part) if n not in of_length]
                if new:  # the writer's own function, on the lengths its name's words grow
                    grown = array("I", map(extra.__add__, new)) if extra else array("I", new)
                    of_length.update(zip(new, bm25_normalisers(grown, avglen)))
                out.append((b, array("d", map(of_length.__getitem__, part)).tobytes()))
            return out

        column = ChunkFloats(index.n_ids, size, compute, None, index.path)
        self._normalisers[name] = (index.manifest, groups, avglen, column)
        return column

    # -- what the workspace merges ---------------------------------------------------------------

    def has_term(self, term: str) -> bool:
        """Whether any member holds `term`."""
        return any(term in self.extra[n] or index.has_term(term) for n, index in self.indexes.items())

    def vocabulary(self, first: str, shortest: int, longest: int) -> list[tuple[str, int]]:
        """(term, df) of the members' terms in a range of the key (Index.vocabulary), summed."""
        df: dict[str, int] = {}
        for name, index in self.indexes.items():
            extra = self.extra[name]
            for term, n in index.vocabulary(first, shortest, longest):
                df[term] = df.get(term, 0) + (0 if term in extra else n)
            for term in extra:
                if term[:1] == first and shortest <= len(term) <= longest:
                    df[term] = df.get(term, 0) + index.manifest.n_chunks
        return list(df.items())

    def acronyms(self, groups: frozenset[str] | None) -> list[tuple[str, str]]:
        """The acronyms the members' files define (readable by `groups`; None: all)."""
        out: dict[tuple[str, str], None] = {}
        for index in self.indexes.values():
            out.update(dict.fromkeys(index.acronyms(None if groups is None else index.view(groups).classes)))
        return list(out)

    def each(self, method: str, *args: Any) -> dict[str, Any]:
        """Every member's answer to the Index method `method`."""
        return {name: getattr(index, method)(*args) for name, index in self.indexes.items()}

    def for_members(self, method: str, per: dict[str, tuple[Any, ...]]) -> dict[str, Any]:
        """Some members' answers to `method` with their own arguments: an Index method, or
        `readable`, `changed_files` and `neighbourhoods` (below)."""
        own: dict[str, Any] = {
            "tfs_at": self.tfs_at,
            "readable": self.readable,
            "changed_files": self.changed_files,
            "neighbourhoods": self.neighbourhoods,
        }
        out = {}
        for name, args in per.items():
            call = own.get(method)
            out[name] = call(name, *args) if call is not None else getattr(self.indexes[name], method)(*args)
        return out

    def tfs_at(
        self, name: str, terms: list[str], ids: list[int], groups: frozenset[str]
    ) -> dict[str, dict[int, int]]:
        """Each term's tf in those of member `name`'s chunks `ids` that hold it, within a caller's view."""
        out: dict[str, dict[int, int]] = {}
        for term in terms:
            found = self.member_postings(name, term, groups)
            held: dict[int, int] = {}
            if found is not None:
                postings, tfs = found[0], found[1]
                for cid in ids:
                    i = bisect_left(postings, cid)
                    if i < len(postings) and postings[i] == cid:
                        held[cid] = tfs[i]
            out[term] = held
        return out

    def neighbourhoods(
        self, name: str, places: list[tuple[str, int]], reach: int
    ) -> dict[str, tuple[list[int], dict[int, Chunk]]]:
        """For chunks of member `name` given as (path, ordinal): each file's chunk ids, and the chunks
        within `reach` windows of each (what growing a passage over its neighbours reads)."""
        index = self.indexes[name]
        out: dict[str, tuple[list[int], dict[int, Chunk]]] = {}
        wanted: dict[str, set[int]] = {}
        for path, ordinal in places:
            if path not in out:
                out[path] = (index.file_chunk_ids(path), {})
            ids = out[path][0]
            wanted.setdefault(path, set()).update(ids[max(0, ordinal - reach) : ordinal + reach + 1])
        for path, near in wanted.items():
            if near:
                out[path][1].update(index.chunks(sorted(near)))
        return out

    def check(self) -> list[str | None]:
        """check_repository of each member: the roots that are gone (None for those that are not)."""
        return [check_repository(index) for index in self.indexes.values()]

    def readable(self, name: str, ids: list[int], groups: frozenset[str]) -> list[int]:
        """The chunk ids of `ids` a caller with `groups` may read in member `name`."""
        index = self.indexes[name]
        return readable(index, index.view(groups), ids)

    def changed_files(
        self, name: str, paths: list[str], everywhere: bool, groups: frozenset[str] | None
    ) -> list[str]:
        """What changed in member `name` since ingest and would be indexed (as a query reports it)."""
        index = self.indexes[name]
        changed = index.changed_files(paths, everywhere=everywhere, groups=groups)
        if changed:
            from rag.retrieval.freshness import indexable_changes

            changed = indexable_changes(index, changed, groups)
        return changed


def check_repository(index: Index) -> str | None:
    """Refuse an index that no longer describes its repository (moved with it, or its access rules
    changed since ingest); return its root when that is gone, else None."""
    index_path = index.path
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


class LocalHost:
    """Members held in this process, asked directly (rag.store.workspace.Host)."""

    def __init__(self, members: Members) -> None:
        self.members = members

    def submit(self, method: str, *args: Any) -> Any:
        return getattr(self.members, method)(*args)

    def collect(self, pending: list[Any]) -> list[Any]:
        return pending

    @property
    def indexes(self) -> dict[str, Index]:
        return self.members.indexes

    def close(self) -> None:
        self.members.close()


def _identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino
