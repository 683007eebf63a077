"""Many repositories' indexes read as one (a workspace), ranking exactly as one index built over a
folder that holds them all, each repository's paths beginning with its folder name.

Each repository keeps its own index, ingest and .rag-access. A Workspace answers what a query asks
of an Index (rag.store.reader) with workspace chunk ids: a member's ids shifted by the ids of the
members before it, in path order. What one index over all of them would hold differently is made
up from the members' own:

* its statistics: N, document frequencies and the total length are the members' sums, and the
  BM25 length normalisers are computed from each chunk's length with the workspace's average
  (rag.weights.bm25_normalisers, the writer's own function);
* the repository's folder name among each chunk's path words: every chunk of a member holds the
  terms of its name `path_weight` times more (rag.text.terms), its length grown by as many. A term
  of a name is held by every chunk of that member (name_terms).

Scores, ties and order are then those of the one index, to the last bit (tests/test_workspace.py).

The members are held by hosts (Host): one in this process (rag.retrieval.members), or Ray actors
on a cluster (rag.retrieval.cluster), each holding some repositories. A workspace asks every host
at once and merges what they return; a query's scoring runs on the hosts, each from its own
postings with the workspace's statistics. Only BM25 spans members: TF-IDF's per-chunk norms hold
every term's document frequency.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, NamedTuple, Protocol, cast

from rag.chunking.base import Chunk
from rag.errors import InputError
from rag.store.format import FORMAT_VERSION, Manifest
from rag.store.reader import Index
from rag.store.views import View
from rag.text.tokenizer import Tokenizer, TokenizerSettings
from rag.weights import BM25_B, BM25_K1, FloatColumn


class MemberInfo(NamedTuple):
    """What a host reports of one repository it holds (plain data: it crosses processes)."""

    name: str  # its folder name: the first folder of its paths in the workspace
    path: str  # its index file
    n_ids: int  # its chunk ids are below this
    manifest: Manifest


class MemberView(NamedTuple):
    """A member's part of a caller's view: its chunk count, the sum of their lengths (its name's
    words counted) and whether it leaves out files the caller may not read."""

    n_chunks: int
    length: int
    restricted: bool


class TermPart(NamedTuple):
    """A term's postings in one member (its own chunk ids, ascending; view-filtered)."""

    name: str
    ids: array[int]
    tfs: array[int]


class Host(Protocol):
    """Repositories held by one process (rag.retrieval.members.Members), asked by method name.
    `submit` may return before the answer (a cluster's actor); `collect` waits for the answers of
    several submissions, to hosts of its kind, at once."""

    def submit(self, method: str, *args: Any) -> Any: ...

    def collect(self, pending: list[Any]) -> list[Any]: ...

    @property
    def indexes(self) -> dict[str, Index]:
        """The members' open indexes when they are in this process ({} on a cluster)."""
        ...

    def close(self) -> None: ...


def name_terms(settings: TokenizerSettings, tokenizer: Tokenizer, name: str) -> dict[str, int]:
    """The terms a repository's folder name adds to each of its chunks in a workspace, and their tfs:
    its path words, as rag.text.terms counts a path's folders (the name stands alone there)."""
    if settings.mode == "plain" or settings.path_weight <= 0:
        return {}
    return tokenizer.counts(*[name] * settings.path_weight)


def repository_name(root: str) -> str:
    """A repository's name in a workspace: the name of the folder it was ingested from."""
    root = root.rstrip("/\\")
    return os.path.basename(root) or root


class RestrictedClasses(frozenset[int]):
    """A workspace view's `classes` when some member leaves files out: empty, and carrying the
    caller's groups (each member filters by its own classes)."""

    groups: frozenset[str]

    def __new__(cls, groups: frozenset[str]) -> RestrictedClasses:
        out = super().__new__(cls)
        out.groups = groups
        return out


class WorkspaceView:
    """What a caller may read of a workspace: the members' views, summed."""

    __slots__ = (
        "workspace",
        "groups",
        "n_chunks",
        "length",
        "classes",
        "chunk_class",
        "_normalisers",
    )

    def __init__(self, workspace: Workspace, groups: frozenset[str], members: dict[str, MemberView]) -> None:
        self.workspace = workspace
        self.groups = groups
        self.n_chunks = sum(v.n_chunks for v in members.values())
        self.length = sum(v.length for v in members.values())
        restricted = any(v.restricted for v in members.values())
        # None: nothing to filter; else the members filter, each by its own access classes
        self.classes: frozenset[int] | None = RestrictedClasses(groups) if restricted else None
        self.chunk_class: array[int] | None = None
        self._normalisers = Normalisers(workspace, self.avglen)

    @property
    def avglen(self) -> float:
        """BM25's average chunk length in this view."""
        return self.length / self.n_chunks if self.length else 1.0

    def column(self, name: str, postings: Iterable[Any] | None = None) -> FloatColumn:
        """The BM25 normalisers by workspace chunk id (computed as they are read). TF-IDF's norms
        are not defined across members."""
        if name != "bm25k":
            raise InputError(
                "A workspace is scored with BM25 only (TF-IDF norms are per index) — drop --scoring tfidf, "
                "or query one index"
            )
        return cast(FloatColumn, self._normalisers)  # read by id, as a column is


class Normalisers:
    """k1 (1 - b + b len / avglen) of workspace chunk ids (rag.weights.bm25_normalisers's value, in
    its floating-point order), from the members' lengths, read once per member."""

    def __init__(self, workspace: Workspace, avglen: float) -> None:
        self._workspace = workspace
        self._base = BM25_K1 * (1.0 - BM25_B)
        self._per_length = BM25_K1 * BM25_B / avglen

    def __len__(self) -> int:
        return self._workspace.n_ids

    def __getitem__(self, cid: int) -> float:
        return self._base + self._per_length * self._workspace.length_of(cid)


class Postings:
    """A term's postings in workspace ids (or their tfs) as one ascending sequence, fetched from the
    hosts when first read one by one: scoring runs on the hosts and never reads them here."""

    __slots__ = ("_fetch", "_which", "_df")

    def __init__(self, fetch: Fetch, which: int, df: int) -> None:
        self._fetch = fetch
        self._which = which  # 0: ids, 1: tfs
        self._df = df

    def __len__(self) -> int:
        return self._df

    def __iter__(self) -> Iterator[int]:
        return iter(self.values)

    def __getitem__(self, at: Any) -> Any:
        return self.values[at]

    @property
    def values(self) -> array[int]:
        """The postings as an array."""
        return self._fetch.arrays()[self._which]

    def tf_of(self, cid: int) -> int | None:
        """The term's tf in chunk `cid` (None: the chunk does not hold it)."""
        return self._fetch.tf_of(cid)

    @property
    def typecode(self) -> str:
        return self.values.typecode

    @property
    def term(self) -> str:
        return self._fetch.term


class Fetch:
    """One term's postings in a caller's view, fetched from the hosts with every other term still
    unfetched (one request a host), joined in workspace ids."""

    __slots__ = ("workspace", "term", "groups", "arrays_", "tfs")

    def __init__(self, workspace: Workspace, term: str, groups: frozenset[str]) -> None:
        self.workspace = workspace
        self.term = term
        self.groups = groups
        self.arrays_: tuple[array[int], array[int]] | None = None
        self.tfs: dict[int, int | None] = {}  # chunk id -> the term's tf in it, for the chunks looked up

    def tf_of(self, cid: int) -> int | None:
        """The term's tf in chunk `cid`, looked up with every other chunk read and term asked for."""
        if self.arrays_ is not None:
            ids, tfs = self.arrays_
            i = bisect_left(ids, cid)
            return tfs[i] if i < len(ids) and ids[i] == cid else None
        if cid not in self.tfs:
            self.workspace.fetch_tfs(self.groups, cid, self)
        return self.tfs[cid]

    def arrays(self) -> tuple[array[int], array[int]]:
        if self.arrays_ is None:
            self.workspace.fetch_postings(self.groups, self)
        assert self.arrays_ is not None
        return self.arrays_


class Best(NamedTuple):
    """What a host's scoring found (rag.retrieval.members.Members.top): by member, (score, its own
    chunk id, the chunk, its length with its name's words) of each chunk kept; members scored and
    passed over."""

    found: dict[str, list[tuple[float, int, Chunk, int]]]
    members_scored: int
    members_skipped: int


class Workspace:
    """Repository indexes read as one, held by `hosts` (module docstring)."""

    def __init__(self, hosts: Sequence[Host], where: str = "") -> None:
        """Read the members the hosts hold (at least one); `where`: the workspace as the user named
        it, for messages."""
        self.hosts = list(hosts)
        self.infos: list[MemberInfo] = []
        self._read_members()
        self.path = where or os.pathsep.join(info.path for info in self.infos)
        settings = self.infos[0].manifest.tokenizer
        self.tokenizer = Tokenizer(settings)
        self.extra = {info.name: name_terms(settings, self.tokenizer, info.name) for info in self.infos}
        self._depth = 0
        self._members_read = True  # read: a cluster's first snapshot need not read them again
        self._forget()

    def _read_members(self) -> None:
        """Read what the hosts hold (MemberInfo): the members, their chunk ids and manifests, and so
        the workspace ids; again at each snapshot, since an ingest may have updated a member."""
        infos: list[tuple[MemberInfo, int]] = []
        for h, found in enumerate(self.ask_all("describe")):
            infos.extend((info, h) for info in found)
        _check([info for info, _ in infos])
        # path order: "a-b/..." sorts before "a/...", as one index over their folder orders its paths
        infos.sort(key=lambda x: x[0].name + "/")
        if self.infos and [i.manifest.tokenizer for i, _ in infos] != [
            i.manifest.tokenizer for i in self.infos
        ]:
            raise InputError(
                "A member of the workspace was ingested again with other tokenizer settings — open it anew"
            )
        self.infos = [info for info, _ in infos]
        self.host_of = {info.name: h for info, h in infos}
        self.offset: dict[str, int] = {}
        offset = 0
        for info in self.infos:
            self.offset[info.name] = offset
            offset += info.n_ids
        self.n_ids = offset
        self._starts = [self.offset[info.name] for info in self.infos]
        self.manifest = self._manifest()

    def _forget(self) -> None:
        """Drop what was read in a snapshot: what a caller sees (views), document frequencies,
        postings, and the chunks, places, lengths and files read (the next reads the hosts anew)."""
        self._views: dict[frozenset[str], WorkspaceView] = {}
        # the caller's groups (None: a view that reads everything) -> the acronyms its files define
        self._acronyms: dict[frozenset[str] | None, list[tuple[str, str]]] = {}
        self._df: dict[tuple[str, frozenset[str]], int] = {}
        self._held: dict[str, bool] = {}  # term -> whether any member holds it
        self._fetches: dict[tuple[str, frozenset[str]], Fetch] = {}
        self._member_lengths: dict[str, array[int]] = {}
        self._lengths: dict[int, int] = {}
        self._chunks: dict[int, Chunk] = {}
        self._places: dict[int, tuple[str, int, int]] = {}
        self._file_ids: dict[str, list[int]] = {}

    # -- asking the hosts ------------------------------------------------------------------------

    def ask_all(self, method: str, *args: Any) -> list[Any]:
        """Ask every host, all at once; their answers in host order."""
        return _gather([(h, h.submit(method, *args)) for h in self.hosts])

    def ask(self, names: Iterable[str], method: str, make_args: Any) -> dict[str, Any]:
        """Ask each member of `names` the Index method `method` with make_args(name), the hosts
        once each and all at once; {name: answer}."""
        by_host: dict[int, dict[str, Any]] = {}
        for name in names:
            by_host.setdefault(self.host_of[name], {})[name] = make_args(name)
        pending = [
            (self.hosts[h], self.hosts[h].submit("for_members", method, per)) for h, per in by_host.items()
        ]
        out: dict[str, Any] = {}
        for found in _gather(pending):
            out.update(found)
        return out

    def _manifest(self) -> Manifest:
        manifests = [info.manifest for info in self.infos]
        roots = [m.root for m in manifests]
        return Manifest(
            format_version=FORMAT_VERSION,
            tokenizer=manifests[0].tokenizer,
            root=os.path.commonpath(roots) if len(roots) > 1 else os.path.dirname(roots[0]),
            n_files=sum(m.n_files for m in manifests),
            n_chunks=sum(m.n_chunks for m in manifests),
            n_terms=sum(m.n_terms for m in manifests),
            built_at=max(m.built_at for m in manifests),
            access="workspace" if any(m.access is not None for m in manifests) else None,
            bm25_avglen=1.0,  # no bound is stored here: the hosts scale their members' own
            scoring=manifests[0].scoring,
            chunkers=manifests[0].chunkers,
        )

    @property
    def names(self) -> list[str]:
        """The repositories' names, in path order."""
        return [info.name for info in self.infos]

    @property
    def indexes(self) -> dict[str, Index]:
        """The members' open indexes held in this process, by name."""
        out: dict[str, Index] = {}
        for h in self.hosts:
            out.update(h.indexes)
        return out

    def close(self) -> None:
        """Close every host."""
        for h in self.hosts:
            h.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Read one state of the workspace: the members held in this process each from one state of
        its index (Index.snapshot); a cluster's hosts read each request's from the state they find.
        What is read inside is kept until it ends (one request a host for many terms or chunks),
        and read anew by the next, so that a re-ingested member is seen then."""
        if self._depth:
            yield
            return
        with ExitStack() as stack:
            for host in self.hosts:
                if host.indexes:  # held here: an index file a full rebuild replaced is opened anew
                    host.submit("reopen_replaced")
            for index in self.indexes.values():
                stack.enter_context(index.snapshot())
            # an ingest may have updated a member since it was read (on a cluster, the reading at
            # opening serves the first snapshot: its hosts read each request's state themselves)
            if not self._members_read or self.indexes:
                self._read_members()
            self._members_read = False
            self._depth += 1
            self._forget()
            try:
                yield
            finally:
                self._depth -= 1
                self._forget()

    # -- statistics and scoring ------------------------------------------------------------------

    def view(self, caller_groups: frozenset[str] = frozenset()) -> WorkspaceView:
        """Return what a caller with these groups may see of every member (Index.view)."""
        key = frozenset(caller_groups)
        return self._views.get(key) or self._read_view(key, [])

    def prepare(self, groups: frozenset[str], terms: list[str]) -> None:
        """Read, for the snapshot, a caller's view, the acronyms its files define and the document
        frequencies of `terms` in it: what analysing a question reads first, one request a host."""
        if self._depth and groups not in self._views:
            self._read_view(groups, terms)

    def _read_view(self, groups: frozenset[str], terms: list[str]) -> WorkspaceView:
        """Ask the hosts for a caller's view, the acronyms its files define and the document
        frequencies of `terms` in it; keep them for the snapshot."""
        members: dict[str, MemberView] = {}
        acronyms: dict[tuple[str, str], None] = {}
        df = dict.fromkeys(terms, 0)
        for found, defined, counts in self.ask_all("prepare", groups, terms):
            members.update(found)
            acronyms.update(dict.fromkeys(defined))
            for term, n in counts.items():
                df[term] += n
        view = WorkspaceView(self, groups, members)
        if self._depth:  # read anew by the next snapshot
            self._views[groups] = view
            self._acronyms[None if view.classes is None else groups] = list(acronyms)
            for term, n in df.items():
                self._df[(term, groups)] = n
                if view.classes is None:  # the caller reads everything: held anywhere is held here
                    self._held[term] = n > 0
        return view

    def view_term(self, view: WorkspaceView, term: str) -> tuple[array[int], array[int], float, float] | None:
        """A term's postings within the view, as Index.term gives them within an Index view: lazily
        fetched, their count the members' summed document frequencies; no bound (the hosts prune)."""
        df = self.prefetch(view, [term])[term]
        if not df:
            return None
        fetch = self._fetches.get((term, view.groups))
        if fetch is None:
            fetch = Fetch(self, term, view.groups)
            if self._depth:
                self._fetches[(term, view.groups)] = fetch
        ids, tfs = Postings(fetch, 0, df), Postings(fetch, 1, df)
        return cast("array[int]", ids), cast("array[int]", tfs), float("inf"), float("inf")

    def prefetch(self, view: WorkspaceView, terms: Iterable[str]) -> dict[str, int]:
        """The document frequencies of `terms` in the view, read for all of them at once (one
        request a host) and kept for the snapshot."""
        wanted = list(dict.fromkeys(terms))
        missing = [t for t in wanted if (t, view.groups) not in self._df]
        found: dict[str, int] = {t: 0 for t in missing}
        if missing:
            for answer in self.ask_all("dfs", missing, view.groups):
                for term, n in answer.items():
                    found[term] += n
            if self._depth:
                for term, n in found.items():
                    self._df[(term, view.groups)] = n
                    if view.classes is None:  # the caller reads everything: held anywhere is held here
                        self._held[term] = n > 0
        return {t: found[t] if t in found else self._df[(t, view.groups)] for t in wanted}

    def fetch_postings(self, groups: frozenset[str], asked: Fetch) -> None:
        """Fetch the postings of the term `asked` for, and of every other term asked for in a view of
        these groups in the snapshot and not fetched yet."""
        todo = {f.term: f for (_, g), f in self._fetches.items() if g == groups and f.arrays_ is None}
        todo[asked.term] = asked
        parts: dict[str, list[TermPart]] = {term: [] for term in todo}
        for answer in self.ask_all("postings", list(todo), groups):
            for term, found in answer.items():
                parts[term].extend(found)
        for term, fetch in todo.items():
            ids, tfs = array("I"), array("H")
            for part in sorted(parts[term], key=lambda p: self.offset[p.name]):
                offset = self.offset[part.name]
                ids.extend(map(offset.__add__, part.ids))
                tfs.extend(part.tfs if part.tfs.typecode == "H" else array("H", part.tfs))
            fetch.arrays_ = ids, tfs

    def fetch_tfs(self, groups: frozenset[str], cid: int, asked: Fetch) -> None:
        """Look up, for the term `asked` for and every other term asked for in a view of these groups
        in the snapshot, its tf in `cid` and in every chunk read in the snapshot (the candidates and
        their neighbours): one request a host."""
        fetches = [f for (_, g), f in self._fetches.items() if g == groups and f.arrays_ is None]
        if asked not in fetches:
            fetches.append(asked)
        wanted = {cid, *self._chunks}
        split = self._split_ids(wanted)
        found: dict[str, dict[int, int]] = {f.term: {} for f in fetches}
        terms = list(found)
        answers = self.ask(split, "tfs_at", lambda name: (terms, split[name], groups))
        for name, per_term in answers.items():
            offset = self.offset[name]
            for term, tfs in per_term.items():
                found[term].update((offset + local, tf) for local, tf in tfs.items())
        for f in fetches:
            held = found[f.term]
            f.tfs.update((c, held.get(c)) for c in wanted)

    def term(self, term: str) -> tuple[array[int], array[int], float, float] | None:
        """A term's postings in the view that reads everything (Index.term)."""
        return self.view_term(self.view(), term)

    def top(self, view: WorkspaceView, scales: list[tuple[str, float]], n: int, prune: bool) -> FanOut:
        """The n best (score, workspace id) pairs of each host under BM25 for terms of these scales (in
        their summing order), plus any tied with its n-th, scored by the hosts (rag.retrieval.members):
        the workspace's n best are among them."""
        found: list[Best] = self.ask_all("top", scales, n, view.groups, view.avglen, prune)
        pairs = []
        for best in found:
            for name, chunks in best.found.items():
                offset = self.offset[name]
                for score, cid, chunk, length in chunks:
                    pairs.append((score, offset + cid))
                    if self._depth:  # what the ranking reads of them next
                        chunk = chunk._replace(path=f"{name}/{chunk.path}")
                        self._chunks[offset + cid] = chunk
                        self._places[offset + cid] = (chunk.path, chunk.start_line, chunk.end_line)
                        self._lengths[offset + cid] = length
        return FanOut(pairs, sum(f.members_scored for f in found), sum(f.members_skipped for f in found))

    def length_of(self, cid: int) -> int:
        """A chunk's length, its repository's name counted."""
        known = self._lengths.get(cid)
        if known is not None:
            return known
        m = bisect_right(self._starts, cid) - 1
        info = self.infos[m]
        lengths = self._member_lengths.get(info.name)
        if lengths is None:
            lengths = self.ask([info.name], "lengths", lambda _: ())[info.name]
            if self._depth:
                self._member_lengths[info.name] = lengths
        return lengths[cid - self._starts[m]] + sum(self.extra[info.name].values())

    def has_term(self, term: str) -> bool:
        """Tell whether any member holds `term`."""
        known = self._held.get(term)
        return known if known is not None else any(self.ask_all("has_term", term))

    def vocabulary(self, first: str, shortest: int, longest: int) -> list[tuple[str, int]]:
        """Return (term, df) of the terms any member holds that begin with `first`, within the
        lengths (Index.vocabulary), df summed over members."""
        df: dict[str, int] = {}
        for found in self.ask_all("vocabulary", first, shortest, longest):
            for term, n in found:
                df[term] = df.get(term, 0) + n
        return sorted(df.items())

    def acronyms(self, classes: frozenset[int] | None = None) -> list[tuple[str, str]]:
        """Return the (acronym, expansion) pairs the readable files of every member define
        (`classes`: a view's; a restricted one carries the caller's groups)."""
        groups = classes.groups if isinstance(classes, RestrictedClasses) else None
        known = self._acronyms.get(groups)  # read with the view
        if known is not None:
            return known
        out: dict[tuple[str, str], None] = {}
        for found in self.ask_all("acronyms", groups):
            out.update(dict.fromkeys(found))
        return list(out)

    def readable(self, view: WorkspaceView, ids: list[int]) -> list[int]:
        """The chunk ids of `ids` the view's caller may read, in order."""
        if view.classes is None:
            return ids
        split = self._split_ids(ids)
        kept = self.ask(split, "readable", lambda name: (split[name], view.groups))
        allowed = {self.offset[name] + local for name, found in kept.items() for local in found}
        return [cid for cid in ids if cid in allowed]

    # -- chunks and files ------------------------------------------------------------------------

    def _split_ids(self, ids: Iterable[int]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for cid in ids:
            m = bisect_right(self._starts, cid) - 1
            out.setdefault(self.infos[m].name, []).append(cid - self._starts[m])
        return out

    def chunk_terms(self, cid: int, likely: Iterable[str] = ()) -> dict[str, int]:
        """Return one chunk's term frequencies, its repository's name among them (Index.chunk_terms)."""
        ((name, local),) = self._split_ids([cid]).items()
        counts: dict[str, int] = self.ask([name], "chunk_terms", lambda _: (local[0], list(likely)))[name]
        if counts:
            for term, n in self.extra[name].items():
                counts[term] = counts.get(term, 0) + n
        return counts

    def chunks(self, ids: list[int]) -> dict[int, Chunk]:
        """Fetch chunks by workspace id, each path beginning with its repository's name."""
        out = {cid: self._chunks[cid] for cid in ids if cid in self._chunks}
        split = self._split_ids(cid for cid in ids if cid not in out)
        for name, found in self.ask(split, "chunks", lambda name: (split[name],)).items():
            offset = self.offset[name]
            for cid, chunk in found.items():
                out[offset + cid] = chunk._replace(path=f"{name}/{chunk.path}")
        if self._depth:
            self._chunks.update(out)
        return out

    def places(self, ids: list[int]) -> dict[int, tuple[str, int, int]]:
        """Return workspace id -> (path, start line, end line) (Index.places)."""
        out = {cid: self._places[cid] for cid in ids if cid in self._places}
        split = self._split_ids(cid for cid in ids if cid not in out)
        for name, found in self.ask(split, "places", lambda name: (split[name],)).items():
            offset = self.offset[name]
            for cid, (path, start, end) in found.items():
                out[offset + cid] = (f"{name}/{path}", start, end)
        if self._depth:
            self._places.update(out)
        return out

    def prefetch_neighbourhoods(self, chunks: Iterable[Chunk], reach: int) -> None:
        """Read, for the snapshot, each chunk's file's chunk ids and the chunks within `reach`
        windows of it (what growing passages reads), one request a host."""
        if not self._depth:
            return
        wanted: dict[str, list[tuple[str, int]]] = {}
        for chunk in chunks:
            found = self.member_path(chunk.path)
            if found is not None:
                wanted.setdefault(found[0], []).append((found[1], chunk.ordinal))
        if not wanted:
            return
        answers = self.ask(wanted, "neighbourhoods", lambda name: (wanted[name], reach))
        for name, files in answers.items():
            offset = self.offset[name]
            for path, (ids, near) in files.items():
                self._file_ids[f"{name}/{path}"] = [offset + cid for cid in ids]
                for cid, chunk in near.items():
                    self._chunks[offset + cid] = chunk._replace(path=f"{name}/{chunk.path}")

    def member_path(self, path: str) -> tuple[str, str] | None:
        """The member a workspace path belongs to and the path within it (None: no member's)."""
        name, _, rest = path.partition("/")
        return (name, rest) if name in self.offset and rest else None

    def file_chunk_ids(self, path: str) -> list[int]:
        """Return the workspace ids of one file's chunks, in line order."""
        known = self._file_ids.get(path)
        if known is not None:
            return known
        found = self.member_path(path)
        if found is None:
            return []
        name, rest = found
        ids = self.ask([name], "file_chunk_ids", lambda _: (rest,))[name]
        out = [self.offset[name] + cid for cid in ids]
        if self._depth:
            self._file_ids[path] = out
        return out

    def _in_path_order(self, method: str, *args: Any) -> list[tuple[str, Any]]:
        merged: dict[str, Any] = {}
        for found in self.ask_all("each", method, *args):
            merged.update(found)
        return [(name, merged[name]) for name in self.names]

    def files_named(self, key: str) -> list[int]:
        """Return the ids of the files whose name_key is `key`, in path order (Index.files_named)."""
        return [self.offset[n] + cid for n, ids in self._in_path_order("files_named", key) for cid in ids]

    def chunk_ids(self) -> list[int]:
        """Return every chunk's id, file by file in path order."""
        return [self.offset[n] + cid for n, ids in self._in_path_order("chunk_ids") for cid in ids]

    def file_chunk_counts(self) -> list[tuple[str, int]]:
        """Return (path, number of chunks) of every indexed file, in path order."""
        return [(f"{n}/{p}", c) for n, rows in self._in_path_order("file_chunk_counts") for p, c in rows]

    def readable_files(self, groups: frozenset[str] = frozenset()) -> set[str]:
        """Return the paths of the files a caller with these groups may read."""
        return {f"{n}/{p}" for n, paths in self._in_path_order("readable_files", groups) for p in paths}

    def changed_files(
        self, paths: Iterable[str] = (), everywhere: bool = True, groups: frozenset[str] | None = None
    ) -> list[str]:
        """Return what changed since ingest in every member (Index.changed_files), as workspace paths."""
        wanted = list(paths)
        split: dict[str, list[str]] = {}
        for path in wanted:
            found = self.member_path(path)
            if found is not None:
                split.setdefault(found[0], []).append(found[1])
        names = self.names if everywhere else list(split)
        answers = self.ask(names, "changed_files", lambda name: (split.get(name, []), everywhere, groups))
        return [f"{name}/" + ("" if p == "./" else p) for name in names for p in answers.get(name, [])]


class FanOut(NamedTuple):
    """What scoring a workspace did: the (score, workspace id) pairs kept, and how many members
    were scored and passed over by their bound."""

    scored: list[
        tuple[float, int]
    ]  # each host's n best: rag.retrieval.topk.keep_best takes the n best of all
    members_scored: int
    members_skipped: int


def _gather(pending: list[tuple[Host, Any]]) -> list[Any]:
    """The answers of submissions to hosts, in order, waited for together."""
    if not pending:
        return []
    return pending[0][0].collect([handle for _, handle in pending])


def _check(infos: list[MemberInfo]) -> None:
    if not infos:
        raise InputError("The workspace holds no repository — name at least one index")
    names: dict[str, str] = {}
    first = infos[0].manifest
    for info in infos:
        if info.name in names:
            raise InputError(
                f"Two indexes of the workspace are of repositories named {info.name!r} ({names[info.name]}, "
                f"{info.manifest.root}) — rename one folder and ingest it again"
            )
        names[info.name] = info.manifest.root
        if info.manifest.tokenizer != first.tokenizer:
            raise InputError(
                f"The index of {info.manifest.root} was built with other tokenizer settings than "
                f"that of {first.root} — ingest both with the same settings"
            )


# what a query reads: one repository's index or a workspace of them, and what a caller may see of it
Reader = Index | Workspace
AnyView = View | WorkspaceView


def roots(index: Reader) -> list[tuple[str, str]]:
    """The repositories a reader reads, each as (its root, its name in the reader's paths: '' for one
    index), wherever its index is held."""
    if isinstance(index, Workspace):
        return [(info.manifest.root, info.name) for info in index.infos]
    return [(index.manifest.root, "")]


def parts(index: Reader) -> list[tuple[Index, str]]:
    """The repository indexes a reader holds in this process, each with its name in the reader's
    paths ('' for one index, whose paths are its own); a cluster's are read where they are."""
    if isinstance(index, Workspace):
        return [(found, name) for name, found in index.indexes.items()]
    return [(index, "")]
