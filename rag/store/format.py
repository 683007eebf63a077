"""What an index file is: its schema, format version, manifest and the names of its stored arrays.

Layout (FORMAT_VERSION 12):

    meta(key, value)            -- the manifest, one JSON value per key
    files(id, path, size, mtime_ns, sha1, first_chunk, n_chunks, class, name_key)
                                -- a file's chunks have consecutive ids first_chunk..+n_chunks;
                                -- name_key: its name as a symbol question is matched to it (name_key())
    chunks(id, file_id, ordinal, start_line, end_line, kind, symbol, head, body)
                                -- body: the chunk's context and text, deflated together
                                -- (rag.store.packing.pack_text); head: the context's UTF-8 bytes
    terms(term, id, df, postings, maxw, maxb)  -- term -> its postings: chunk ids (ascending)
                                -- and raw tfs in the narrowest widths that hold them
                                -- (rag.store.packing.pack_postings); and two bounds for pruning in the everything-
                                -- readable view: maxw * meta.bound_scale >= its largest
                                -- tf_weight / norm; maxb >= its largest BM25 tf part
                                -- tf / (tf + k1 (1 - b + b len / meta.bm25_avglen))
    forward(chunk_id, postings) -- chunk -> its term ids and tfs, in the order of its terms,
                                -- stored as postings are: to recompute norms on update and
                                -- give back the records of unchanged files to a rebuild
    arrays(name, data)          -- (in the writer's byte order, meta.byteorder) 'classes': uint16 access class of each chunk, by id;
                                -- 'norms:<view>#<block>': float64 L2 norm of each chunk's tf-idf
                                -- vector as seen by callers of that view, by id (0.0 for unused
                                -- ids), ARRAY_BLOCK ids per row: a query reads only the blocks
                                -- its postings fall in;
                                -- 'lengths': uint32 sum of each chunk's stored tfs;
                                -- 'bm25k:<view>#<block>': float64 k1 (1 - b + b len / avglen) of
                                -- each chunk, avglen being that view's (BM25's length
                                -- normaliser), in blocks like the norms
    classes(id, groups)         -- access class: the groups that may read it (JSON; [] = public)
    views(key, n_chunks, length)  -- a set of readable classes, e.g. "0,2", its chunk count and
                                -- the sum of its chunks' lengths
    skipped(path, size, mtime_ns, reason)  -- files read and passed over (empty, binary, ...),
                                -- so that re-ingest need not read them again while unchanged
    dirs(path, mtime_ns)        -- each indexed directory's mtime, to notice added/removed files
    acronyms(file_id, acronym, expansion)  -- acronyms a file spells out, as index terms
                                -- ("sse", "server sent event"): see rag.text.acronyms

The manifest records every parameter baked into the stored arrays (the tokenizer's settings,
BM25's k1 and b): an index built with other values is refused by a query and rebuilt whole by an
ingest, never mixed.
"""

from __future__ import annotations

import sys
from array import array
from typing import Any, NamedTuple

from rag.chunking.base import Chunk
from rag.errors import IndexFormatError, command
from rag.text.tokenizer import TokenizerSettings


def rebuild_hint() -> str:
    """What every message about a damaged index says to do: a full rebuild (a plain ingest may
    update the index in place without ever reading the damaged page)."""
    return f"re-run `{command('ingest')} REPO --full`"


# 22: the same tables as 21; more is redacted (a literal spelt wholly in escapes, Perl's `\x{..}`, a
# password stated for a user, Vault's `secret_id`, EZConnect's `user/password@host:port/service` as a
# value of its own, Perl's `$h{pass} ||=`, R's `"..." -> password`, libpq's last `password=`, digits
# after YAML's `!!str`, what a command's `login` is given, a password's name then its literal whatever
# the punctuation between, a YAML `Default:` under a credential's name or `NoEcho`, `mongosh -p`,
# `zip -P`, `7z -p`, `openssl enc -k`, `sudo -S`, pieces given to a format of placeholders, HubSpot's
# tokens, Elixir's env defaults, a `psk` of chosen words, `WiFi.begin`'s password, `--auth=`,
# `htpasswd -b` and `mosquitto_passwd -b`, a key's bytes in colon hex, a list joined by its name,
# `snprintf` of pieces, YAML's `!!binary` read as the text it holds) and less (jwt.io's sample token, a signature, a JWK's public member unquoted,
# a known-answer test's key bytes, `fp=` before a digest, PostHog's project key, a ULID after its
# kind's prefix, an id under a declaration's modifiers or after `||=` or `@"`, an event's id, search-only keys and storefront tokens, a key's
# fingerprint in capitals under a key's name, a credential's word after a path's digest word:
# `checksum/secret`, `KID` in capitals): a 21's unchanged files would differ.
# 21: the same tables as 20; more is redacted (text spelt in `\x` or `\u{..}` escapes, lists of
# characters made into a string, base64 of UTF-16 text, PowerShell's plain-text secure strings,
# `net use`'s password after `/user:`, `composer config`'s credentials, the value of any flag named by
# a password's word, a password a sentence states, `connect(user, password)`, a chosen value holding
# `=`, C's `password[] =`, one-line heredocs, key bytes in `<<..>>` and `16#` bytes) and less
# (publishable keys by their prefix, a dump's digest columns, entity tags, digests in base32): a 20's
# unchanged files would differ.
# 20: the same tables as 19; more is redacted (generated values of 12 to 15 characters standing
# alone, literals joined by a leading `+` or given to a join, a credential's joined literals whole,
# SQL*Plus's CONNECT, `SetPassword(`, a password after a YAML tag) and less (vendor-shaped tokens
# filled with x's, VINs, sops and Vault transit ciphertext): a 19's unchanged files would differ.
# 19: the same tables as 18; more is redacted (triple-quoted and C# verbatim literals, `?=`, `+=`, `::=`
# and `||=`, .NET's `Section:Password` keys, quoted arguments after a credential's quoted name, `%` in a
# generated value, tokens of hex and random parts, setters, XML properties, more defaults, bare generated
# passwords) and less (test vectors named by the block that holds them, digests of no bytes, a public
# key's constructor, key ids, a table's first column under an id's header, SealedSecrets): an 18's
# unchanged files would differ.
# 18: the same tables as 17; more is redacted (passwords given to `curl -u`, registry logins, `twine`
# and `openssl -pass pass:`, sensitive Terraform defaults, two-word passphrases, generated passwords
# with symbols quoted anywhere, Ruby's and Laravel's environment defaults, names joined again) and
# less (a CSV column headed by an id's name above rows of short values, a JSON Web Key's `kid`, ULIDs,
# a host name's labels, Stripe's `we_` ids): a 17's unchanged files would differ.
# 17: the same tables as 16; more is redacted (passwords of plain words under a password's name, SQL
# rows by their columns, key bytes with casts and suffixes, literals joined by `^` and `++`, base64 or hex
# of a password, keyboard walks) and less (values written again in another form, lists of pins,
# encrypted PGP messages, `.onion` addresses): a 16's unchanged files would differ.
# 16: the same tables as 15; more is redacted (generated passwords with dots or of 14-15 letters and
# digits, chosen passwords in leetspeak or with a word, a symbol and a number, a vendor's hex key after
# its mode, `_live_`, bare chosen passwords) and less (Jasypt's `ENC(...)`, a P-256 public key, a pair's value
# under a public name): a 15's unchanged files would differ.
# 15: the same tables as 14; more is redacted (base64 blocks of text, passwords piped to a command,
# `user:password@host` with no scheme, UUIDs under a credential's name, positional passwords of C and
# PHP calls) and less (mangled symbols, public keys in DER): a 14's unchanged files would differ.
# 14: the same tables as 13; more is redacted (literals passed to a decoder, literals side by side,
# defaults after a logical or, passphrases and credentials passed to calls, `user:password` after a
# login's name, connection strings to their `;`, escaped key bytes): a 13's unchanged files would keep it.
# 13: the same tables as 12; more is redacted (a credential's interpolated default, a password
# passed as a flag, generated passwords with symbols, literals joined into a token, Oracle's
# user/password@connect-string): a 12's unchanged files would keep it.
# 12: the same tables as 11; values that look generated are redacted wherever they stand
# (rag.secrets.anywhere): an 11's unchanged files would keep what 12 redacts.
# 11: chunk texts deflated, postings and forward lists in narrow widths (rag.store.packing):
# 2.6x the source bytes down to 1.3x. (10: same tables as 9; 16 more languages are chunked by
# their definitions (tree-sitter), and the manifest records the scoring parameters and which
# chunkers built it. 9: newer chunking and redaction rules than 8, whose unchanged files would
# have kept credentials they redact.)
FORMAT_VERSION = 22
# The scoring parameters an index that does not record them was built with
UNRECORDED_SCORING = {"bm25_k1": 4.0, "bm25_b": 0.9}
# SQLite's application id in the file header (bytes 68-71): "rag!" marks a file as a rag index,
# readable even when the rest of the file is damaged
APPLICATION_ID = int.from_bytes(b"rag!", "big")
SQLITE_HEADER = b"SQLite format 3\x00"
TF_MAX = 65535  # tfs are stored as uint16; a term repeated more often in one chunk is capped
# Entries per stored block of a per-chunk float array (8 KB): a query reads the blocks that
# hold its postings' chunks, so a query with few postings reads little of a large index.
ARRAY_BLOCK = 1024
# Precompute the norms of at most this many views; rarer combinations are computed per query.
MAX_STORED_VIEWS = 64
# Paths listed per skip reason in the manifest's summary (the counts are always complete)
SKIPPED_LISTED = 1000

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
                   mtime_ns INTEGER NOT NULL, sha1 TEXT NOT NULL, first_chunk INTEGER NOT NULL,
                   n_chunks INTEGER NOT NULL, class INTEGER NOT NULL, name_key TEXT NOT NULL);
CREATE INDEX files_by_name ON files(name_key);
CREATE TABLE chunks(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, ordinal INTEGER NOT NULL,
                    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, kind TEXT NOT NULL,
                    symbol TEXT, head INTEGER NOT NULL, body BLOB NOT NULL);
CREATE TABLE terms(term TEXT PRIMARY KEY, id INTEGER NOT NULL, df INTEGER NOT NULL,
                   postings BLOB NOT NULL, maxw REAL NOT NULL, maxb REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE forward(chunk_id INTEGER PRIMARY KEY, postings BLOB NOT NULL);
CREATE TABLE arrays(name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE classes(id INTEGER PRIMARY KEY, groups TEXT NOT NULL);
CREATE TABLE views(key TEXT PRIMARY KEY, n_chunks INTEGER NOT NULL, length INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE skipped(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                     reason TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE acronyms(file_id INTEGER NOT NULL, acronym TEXT NOT NULL, expansion TEXT NOT NULL);
CREATE INDEX acronyms_of_file ON acronyms(file_id);
"""


class PackedChunk(NamedTuple):
    """A chunk as the chunks and forward tables store it, made where it is chunked (in a worker
    process of a parallel ingest, not in the one writing the index): its context and text
    deflated (rag.store.packing.pack_text), its tfs as stored and its length."""

    body: bytes  # context + text, deflated
    head: int  # the length of the context's UTF-8 bytes
    tfs: array[int]  # uint16 tfs, capped at TF_MAX, in the order of the chunk's terms
    length: int  # the sum of `tfs`


class FileRecord(NamedTuple):
    """One indexed file: where it is, how to tell it changed, and its chunks with their terms."""

    path: str
    size: int
    mtime_ns: int
    sha1: str
    chunks: tuple[Chunk, ...]
    counts: tuple[dict[str, int], ...]  # term -> tf, one per chunk
    groups: frozenset[str] = frozenset()  # who may read it (.rag-access); empty = public
    acronyms: tuple[tuple[str, str], ...] = ()  # (acronym term, expansion terms) it defines
    # its chunks packed from `chunks` and `counts` (rag.store.writer.pack_chunks), one per chunk;
    # empty: the writer packs them. A record whose chunks or counts are replaced drops them
    packed: tuple[PackedChunk, ...] = ()


class Manifest(NamedTuple):
    """What an index is: format, tokenizer, counts and where it came from."""

    format_version: int
    tokenizer: TokenizerSettings
    root: str
    n_files: int
    n_chunks: int
    n_terms: int
    built_at: float
    commit: str | None = None
    access: str | None = None  # sha1 of the .rag-access rules the index was built with
    bound_scale: float = 1.0  # stored pruning bounds are multiplied by this (widened by updates)
    bm25_avglen: float = 1.0  # the average chunk length the stored BM25 bounds were computed with
    walk: dict[str, Any] | None = None  # the ingest's --include/--exclude/--max-file-size, for re-ingest
    scoring: dict[str, float] | None = None  # rag.weights.scoring_parameters() at ingest
    chunkers: str | None = None  # rag.chunking.chunkers_in_use() at ingest: another set re-chunks everything
    # what `rag status` reports that only the ingest saw: {"skipped": {reason: n}, "skipped_paths":
    # {reason: [path, ...]} (at most SKIPPED_LISTED each), "redacted": {path: {kind: n}}}
    summary: dict[str, Any] | None = None


def meta_rows(manifest: Manifest, next_chunk: int, bound_scale: float = 1.0) -> dict[str, Any]:
    """The meta table's values for a manifest (JSON-encoded on writing)."""
    return {
        "format_version": FORMAT_VERSION,
        "tokenizer": manifest.tokenizer.to_dict(),
        "root": manifest.root,
        "n_files": manifest.n_files,
        "n_chunks": manifest.n_chunks,
        "n_terms": manifest.n_terms,
        "built_at": manifest.built_at,
        "commit": manifest.commit,
        "access": manifest.access,
        "next_chunk": next_chunk,
        "bound_scale": bound_scale,
        "bm25_avglen": manifest.bm25_avglen,
        "walk": manifest.walk,
        "byteorder": sys.byteorder,
        "array_block": ARRAY_BLOCK,
        "scoring": manifest.scoring,
        "chunkers": manifest.chunkers,
        "summary": manifest.summary,
    }


def recorded_scoring(meta: dict[str, Any]) -> dict[str, float]:
    """The scoring parameters an index was built with (those of format 9 before they were recorded)."""
    scoring = meta.get("scoring")
    if scoring is None:
        return dict(UNRECORDED_SCORING)
    if not isinstance(scoring, dict) or not all(isinstance(v, (int, float)) for v in scoring.values()):
        raise ValueError("scoring parameters out of range")
    return {str(k): float(v) for k, v in scoring.items()}


def damage_error(path: object, exc: BaseException, doing: str = "read") -> IndexFormatError:
    """The one-line error for damage met while the index at `path` was being `doing` (read, updated)."""
    detail = (str(exc).splitlines() or [""])[0][:120]  # a decoding error quotes the damaged bytes
    return IndexFormatError(
        f"The index at {path} could not be {doing} ({type(exc).__name__}: {detail}); it may be damaged — {rebuild_hint()}"
    )


def check(ok: bool, what: str) -> None:
    """Raise ValueError (which the readers report as damage) unless what was read is `ok`."""
    if not ok:
        raise ValueError(what)


def name_key(name: str) -> str:
    """A file's name, or a symbol's, as the two are matched: without folders or extensions,
    lowercased, without underscores, and without a plural s (`Router` and `routers.py` -> "router")."""
    base = name.rpartition("/")[2]
    return base.split(".", 1)[0].lower().replace("_", "").rstrip("s")


def block_name(name: str, block: int) -> str:
    """The arrays-table key of one block of a per-chunk array."""
    return f"{name}#{block:06d}"


def view_key(view: frozenset[int]) -> str:
    """Return the storage key of a set of readable access classes."""
    return ",".join(map(str, sorted(view)))


def readable_classes(groups_of_class: dict[int, frozenset[str]], caller: frozenset[str]) -> frozenset[int]:
    """Return the access classes a caller with these groups may read."""
    return frozenset(c for c, g in groups_of_class.items() if not g or g & caller)


def realizable_views(groups_of_class: dict[int, frozenset[str]]) -> list[frozenset[int]]:
    """List the distinct sets of readable classes that some caller can have (public first).

    A caller's view depends only on which of the named groups it holds, so enumerate those
    subsets while there are few; the rest are computed at query time.
    """
    named = sorted(set().union(*groups_of_class.values()))
    views: dict[frozenset[int], None] = {readable_classes(groups_of_class, frozenset()): None}
    views[frozenset(groups_of_class)] = None
    if len(named) <= 12:
        for mask in range(1, 1 << len(named)):
            caller = frozenset(g for i, g in enumerate(named) if mask >> i & 1)
            views[readable_classes(groups_of_class, caller)] = None
            if len(views) >= MAX_STORED_VIEWS:
                break
    return list(views)


def well_formed(chunk: Chunk) -> bool:
    """Whether a chunk read back has the types a chunk is written with."""
    return (
        isinstance(chunk.path, str)
        and isinstance(chunk.start_line, int)
        and isinstance(chunk.end_line, int)
        and isinstance(chunk.kind, str)
        and isinstance(chunk.symbol, (str, type(None)))
        and isinstance(chunk.text, str)
        and isinstance(chunk.context, str)
        and isinstance(chunk.ordinal, int)
    )
