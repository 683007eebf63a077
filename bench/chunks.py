"""Chunk the real corpora and print size, coverage and speed figures per corpus.

Usage: python bench/chunks.py [--eval DIR] [CORPUS ...]
       (corpora under ${RAG_CORPORA:-~/.cache/rag-corpora})

Reads the source and doc files (Python, JavaScript/TypeScript, Markdown, reST, .txt) of
each corpus, chunks each with `chunk_file` and with the paragraph chunker alone, and
prints: files, chunks, median and max chunk length (chars), the share of non-blank lines
covered by some chunk (must be 100%), files that fell back (and why), and MB/s of
chunking alone (reading files excluded).

With `--eval DIR` (the folder holding docstring-queries.jsonl and dev-questions.jsonl)
it also counts how the eval's answer spans fall on the chunks: exactly one chunk,
inside one chunk, across the windows of one long definition, or split across pieces.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CORPUS_NAMES, SHARED  # noqa: E402
from rag.chunking import Chunk, chunk_file, chunk_text, chunker_for  # noqa: E402

# question file -> whether its spans refer to the doc-stripped copies
EVAL_FILES = {"docstring-queries.jsonl": True, "dev-questions.jsonl": False}
EVAL_FILES_ORDER = ("exact", "inside", "windows", "split")

CORPORA = tuple(CORPUS_NAMES)  # the eight eval corpora (bench.common)
SKIP_DIRS = {".git", "node_modules", "__pycache__"}


def corpus_files(root: Path) -> list[tuple[str, str]]:
    """Return (relative path, text) of the files a structure-aware chunker or .txt claims."""
    out: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if chunker_for(rel) == "text":
                continue
            data = path.read_bytes()
            if b"\0" in data[:8192]:
                continue
            out.append((rel, data.decode("utf-8", errors="replace")))
    return out


def uncovered(text: str, chunks: list[Chunk]) -> tuple[int, int]:
    """Return (non-blank lines, non-blank lines in no chunk)."""
    lines = text.split("\n")
    covered = bytearray(len(lines) + 2)
    for c in chunks:
        covered[c.start_line : c.end_line + 1] = b"\1" * (c.end_line - c.start_line + 1)
    nonblank = [i for i, line in enumerate(lines, 1) if line.strip()]
    return len(nonblank), sum(1 for i in nonblank if not covered[i])


def measure(files: list[tuple[str, str]], structured: bool) -> dict[str, object]:
    """Chunk every file one way and return the figures."""
    sizes: list[int] = []
    fallbacks: Counter[str] = Counter()
    nonblank = missing = 0
    elapsed = 0.0
    for rel, text in files:
        reasons: list[str] = []
        t0 = time.perf_counter()
        chunks = chunk_file(rel, text, reasons.append) if structured else chunk_text(rel, text)
        elapsed += time.perf_counter() - t0
        for reason in reasons:
            fallbacks[reason.split(":")[0].split(" (")[0]] += 1
        sizes.extend(len(c.text) for c in chunks)
        a, b = uncovered(text, chunks)
        nonblank, missing = nonblank + a, missing + b
        if b and structured:
            print(f"  uncovered lines: {rel} ({b})", file=sys.stderr)
    megabytes = sum(len(text.encode()) for _, text in files) / 1e6
    return {
        "chunks": len(sizes),
        "median": int(statistics.median(sizes)) if sizes else 0,
        "max": max(sizes, default=0),
        "covered": 100.0 * (nonblank - missing) / nonblank if nonblank else 100.0,
        "fallbacks": fallbacks,
        "mbs": megabytes / elapsed if elapsed else 0.0,
        "mb": megabytes,
    }


def main(names: list[str]) -> None:
    """Print the figures for each corpus."""
    base = Path(os.environ.get("RAG_CORPORA", "~/.cache/rag-corpora")).expanduser()
    header = (
        f"{'corpus':28} {'files':>5} {'MB':>5} | {'chunks':>6} {'median':>6} {'max':>6} {'cover%':>7} "
        f"{'fallback':>8} {'MB/s':>5} | {'para':>6} {'median':>6} {'max':>6} {'cover%':>7} {'MB/s':>5}"
    )
    print(header)
    print("-" * len(header))
    notes: list[str] = []
    for name in names or CORPORA:
        root = base / name
        if not root.is_dir():
            print(f"{name:28} missing: run {SHARED}/fetch-corpora")
            continue
        files = corpus_files(root)
        kinds = Counter(chunker_for(rel, text) for rel, text in files)
        s = measure(files, structured=True)
        p = measure(files, structured=False)
        fallbacks = s["fallbacks"]
        assert isinstance(fallbacks, Counter)
        print(
            f"{name:28} {len(files):5} {s['mb']:5.1f} | {s['chunks']:6} {s['median']:6} {s['max']:6} "
            f"{s['covered']:7.2f} {sum(fallbacks.values()):8} {s['mbs']:5.1f} | "
            f"{p['chunks']:6} {p['median']:6} {p['max']:6} {p['covered']:7.2f} {p['mbs']:5.1f}"
        )
        notes.append(
            f"{name}: files by chunker {dict(kinds)}"
            + (f"; fallbacks {dict(fallbacks)}" if fallbacks else "")
        )
    print()
    print("\n".join(notes))


def span_fit(answer: dict[str, object], chunks: list[Chunk]) -> str:
    """Say how one answer span falls on a file's chunks: exact, inside, windows or split."""
    start, end = answer["start_line"], answer["end_line"]
    assert isinstance(start, int) and isinstance(end, int)
    if any(c.start_line == start and c.end_line == end for c in chunks):
        return "exact"
    if any(c.start_line <= start and c.end_line >= end for c in chunks):
        return "inside"
    over = {c.symbol for c in chunks if c.start_line <= end and c.end_line >= start}
    return "windows" if len(over) == 1 and None not in over else "split"


def eval_alignment(base: Path, eval_dir: Path) -> None:
    """Print how the eval's answer spans fall on the chunks, ours and the paragraph chunker's."""
    cache: dict[tuple[Path, bool], list[Chunk]] = {}
    for name, stripped in EVAL_FILES.items():
        questions = [json.loads(line) for line in (eval_dir / name).read_text().splitlines() if line]
        for structured in (True, False):
            fits: Counter[str] = Counter()
            for q in questions:
                root = base / "docstring-stripped" / q["corpus"] if stripped else base / q["corpus"]
                for answer in q["answers"]:
                    path = root / answer["path"]
                    if (path, structured) not in cache:
                        text = path.read_text(encoding="utf-8", errors="replace")
                        rel = answer["path"]
                        cache[path, structured] = (
                            chunk_file(rel, text) if structured else chunk_text(rel, text)
                        )
                    fits[span_fit(answer, cache[path, structured])] += 1
            total = sum(fits.values())
            shares = ", ".join(f"{k} {fits[k]} ({100 * fits[k] / total:.0f}%)" for k in EVAL_FILES_ORDER)
            print(f"{name:26} {'chunk_file' if structured else 'paragraphs':10} {total:4} spans: {shares}")


if __name__ == "__main__":
    args = sys.argv[1:]
    eval_dir = None
    if args[:1] == ["--eval"]:
        eval_dir, args = Path(args[1]), args[2:]
    main(args)
    if eval_dir is not None:
        print()
        eval_alignment(Path(os.environ.get("RAG_CORPORA", "~/.cache/rag-corpora")).expanduser(), eval_dir)
