"""Ingest throughput on the eight corpora together: ours beside the original design and scikit-learn.

    python bench/ingest_compare.py [--repeat 3] [--keep DIR]

The same files for every method: those our ingest indexes for the eight corpora together
(`--include <corpus>/*` over the corpora root, as bench/speed.py does), listed from the index
it builds. Each method is timed end to end, from file paths to a saved index, as a whole
process in the same run (rounds interleave the methods, the median is reported):

* ours: `python ingest.py CORPORA --include ... --full` (default workers, and --workers 1);
* original: the original design, reimplemented minimally: read each file, split it into
  blank-line separated paragraphs, `re.findall(r"[a-z0-9]+", text.lower())`, per-chunk TF-IDF
  dict vectors in pure Python (sublinear tf, smooth idf, L2 norm), `json.dump` of every
  chunk's path, text and vector into one index.json;
* sklearn (index chunks): our chunks, read from our index, through
  `TfidfVectorizer(sublinear_tf=True, smooth_idf=True, analyzer=Tokenizer(...).tokenize)`,
  the matrix saved with scipy.sparse.save_npz and the vocabulary as JSON;
* sklearn (files): the same, but from the file paths: read, chunk with our chunker, vectorize,
  save; the fair end-to-end figure for a vectorizer-based ingest.

Floors on the same bytes: read and decode them all; one `re.findall(r"[^\\W_]+")` pass.
Peaks: wait4's, of processes forked from a small trampoline (bench.common.run_isolated);
for ours also the sampled sum over its worker processes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile
from collections import Counter
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import (
    CORPORA,
    CORPUS_NAMES,
    PROJECT,
    floors,
    require_corpora,
    run_isolated,
    run_process_tree,
    versions,
)


def original(root: Path, files: list[str], out: Path) -> int:
    """Build index.json as the original design did; return the number of chunks."""
    word = re.compile(r"[a-z0-9]+")
    chunks: list[tuple[str, str, Counter[str]]] = []
    for path in files:
        with open(root / path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for para in re.split(r"\n\s*\n", text):
            if para.strip():
                chunks.append((path, para, Counter(word.findall(para.lower()))))
    n = len(chunks)
    df: Counter[str] = Counter()
    for _, _, tf in chunks:
        df.update(tf.keys())
    idf = {t: math.log((1 + n) / (1 + d)) + 1.0 for t, d in df.items()}
    records = []
    for path, para, tf in chunks:
        vector = {t: (1.0 + math.log(c)) * idf[t] for t, c in tf.items()}
        norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
        records.append({"path": path, "text": para, "vector": {t: w / norm for t, w in vector.items()}})
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"idf": idf, "chunks": records}, fh)
    return n


def sklearn_index(index_path: Path, out: Path) -> int:
    """Vectorize our index's chunks with TfidfVectorizer and our tokenizer; save; return the count."""
    from rag import Index, Tokenizer
    from rag.text.terms import indexed_text

    with Index(index_path) as index:
        n = index.manifest.n_chunks
        tokenizer = Tokenizer(index.manifest.tokenizer)
        texts = []
        for lo in range(0, n, 10_000):  # chunk ids are 0..n-1 in a fresh full build
            batch = index.chunks(list(range(lo, min(n, lo + 10_000))))
            texts.extend(indexed_text(batch[cid]) for cid in sorted(batch))
    return _vectorize(texts, tokenizer, out)


def sklearn_files(root: Path, files: list[str], settings_json: str, out: Path) -> int:
    """Read the files, chunk them with our chunker, vectorize with TfidfVectorizer; save."""
    from rag import Tokenizer, TokenizerSettings, chunk_file
    from rag.text.terms import indexed_text

    tokenizer = Tokenizer(TokenizerSettings.from_dict(json.loads(settings_json)))
    texts = []
    for path in files:
        with open(root / path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
        texts.extend(indexed_text(c) for c in chunk_file(path, text))
    return _vectorize(texts, tokenizer, out)


def _vectorize(texts: list[str], tokenizer, out: Path) -> int:
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(sublinear_tf=True, smooth_idf=True, analyzer=tokenizer.tokenize)
    matrix = vectorizer.fit_transform(texts)
    sp.save_npz(out, matrix)
    with open(out.with_suffix(".vocab.json"), "w") as fh:
        json.dump({t: int(i) for t, i in vectorizer.vocabulary_.items()}, fh)
    return matrix.shape[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the median of each method is shown")
    parser.add_argument("--keep", type=Path, help="write the indexes to DIR and keep them")
    # child mode: one method, run as its own process
    parser.add_argument(
        "--method", choices=("original", "sklearn-index", "sklearn-files"), help=argparse.SUPPRESS
    )
    parser.add_argument("--files", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.method:
        listed = args.files.read_text().splitlines() if args.files else []
        if args.method == "original":
            print(original(CORPORA, listed, args.out))
        elif args.method == "sklearn-index":
            print(sklearn_index(args.index, args.out))
        else:
            print(sklearn_files(CORPORA, listed, args.settings, args.out))
        return
    require_corpora()
    from rag import Index

    py = sys.executable
    print(versions(), "| load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    print(", ".join(f"{p} {metadata.version(p)}" for p in ("numpy", "scipy", "scikit-learn")))
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="rag-ingest-compare-")
    work = args.keep or Path(tmp.name)  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    try:
        ours_index = work / "ours.sqlite"
        include = [f"--include={n}/*" for n in CORPUS_NAMES]
        ours = [py, str(PROJECT / "ingest.py"), str(CORPORA), "--index", str(ours_index), "--full", *include]
        first, first_tree = run_process_tree(ours)
        if first.returncode != 0:
            sys.exit("our ingest failed")
        with Index(ours_index) as index:
            files = sorted(index.files())
            n_ours = index.manifest.n_chunks
            settings = json.dumps(index.manifest.tokenizer.to_dict())
        list_path = work / "files.txt"
        list_path.write_text("\n".join(files) + "\n")
        n_bytes = sum((CORPORA / f).stat().st_size for f in files)
        mb = n_bytes / 1e6
        print(
            f"{len(files)} files, {mb:.1f} MB, from {CORPORA} ({len(CORPUS_NAMES)} corpora); "
            f"our index: {n_ours} chunks\n"
        )

        me = [py, __file__, "--files", str(list_path)]
        methods = {
            "ours": (ours, ours_index),
            "ours --workers 1": (
                [*ours[:3], "--index", str(work / "ours-1.sqlite"), *ours[5:], "--workers", "1"],
                work / "ours-1.sqlite",
            ),
            "original (pure Python, JSON)": (
                [*me, "--method", "original", "--out", str(work / "index.json")],
                work / "index.json",
            ),
            "sklearn, chunks from our index": (
                [
                    *me,
                    "--method",
                    "sklearn-index",
                    "--index",
                    str(ours_index),
                    "--out",
                    str(work / "sk-index.npz"),
                ],
                work / "sk-index.npz",
            ),
            "sklearn, from files (our chunker)": (
                [
                    *me,
                    "--method",
                    "sklearn-files",
                    "--settings",
                    settings,
                    "--out",
                    str(work / "sk-files.npz"),
                ],
                work / "sk-files.npz",
            ),
        }
        times: dict[str, list[float]] = {m: [] for m in methods}
        peaks: dict[str, float] = {m: 0.0 for m in methods}
        chunks: dict[str, str] = {}
        tree_peak = first_tree
        for round_ in range(args.repeat):
            print(f"  round {round_ + 1}/{args.repeat} ...", file=sys.stderr, flush=True)
            for name, (cmd, _) in methods.items():
                if name == "ours":  # sample its worker tree too; the trampoline would hide it
                    run, tree = run_process_tree(cmd)
                    tree_peak = max(tree_peak, tree)
                else:
                    run = run_isolated(cmd)
                if run.returncode != 0:
                    sys.exit(f"{name} failed (exit {run.returncode})")
                times[name].append(run.seconds)
                peaks[name] = max(peaks[name], run.max_rss_mb)
                chunks[name] = (
                    run.stdout.strip().split()[-1] if name.startswith(("original", "sklearn")) else ""
                )
        with Index(ours_index) as index:
            chunks["ours"] = str(index.manifest.n_chunks)
        with Index(work / "ours-1.sqlite") as index:
            chunks["ours --workers 1"] = str(index.manifest.n_chunks)

        read_s, regex_s, _ = floors(CORPORA, files)
        ours_s = statistics.median(times["ours"])
        print(
            f"{'method':36} {'seconds':>8} {'MB/s':>6} {'ours x':>6} {'peak MB':>7} {'chunks':>7} {'out MB':>7}"
        )
        for name, (_, output) in methods.items():
            s = statistics.median(times[name])
            print(
                f"{name:36} {s:8.2f} {mb / s:6.2f} {s / ours_s:6.2f} {peaks[name]:7.0f} {chunks[name]:>7} "
                f"{output.stat().st_size / 1e6:7.1f}"
            )
        print(f"{'floor: read + decode':36} {read_s:8.2f} {mb / read_s:6.1f}")
        label = "floor: one [^\\W_]+ findall pass"
        print(f"{label:36} {regex_s:8.2f} {mb / regex_s:6.1f}")
        print(
            f"\nours: {os.cpu_count()} worker processes by default; sampled peak of its whole process tree "
            f"{tree_peak:.0f} MB (the table's peak is its largest single process)"
        )
        print("ours x: the method's seconds / ours (= our throughput / the method's)")
        print(
            "all rounds (s): "
            + "; ".join(f"{n}: {', '.join(f'{t:.1f}' for t in ts)}" for n, ts in times.items())
        )
        orig = statistics.median(times["original (pure Python, JSON)"])
        sk = [statistics.median(times[n]) for n in methods if n.startswith("sklearn")]
        print(
            f"\ntargets: ours >= 2x original: {orig / ours_s:.2f}x -> {'met' if orig >= 2 * ours_s else 'NOT met'}; "
            f"ours >= 1.5x sklearn: {sk[0] / ours_s:.2f}x (index chunks), {sk[1] / ours_s:.2f}x (files) -> "
            f"{'met' if min(sk) >= 1.5 * ours_s else 'NOT met'}"
        )
        print("load average at the end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
