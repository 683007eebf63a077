"""How ingest time, index size, memory and query latency grow with the corpus: 10k, 100k, 1M chunks.

    python bench/scale.py [--sizes 10000,100000,1000000] [--keep DIR] [--queries 200] [--repeat 7]

Corpora are synthetic (bench/synthetic.py: Zipf words over the real corpora's vocabulary,
one chunk per paragraph). At each size, measured in the same run:

* ingest: `python ingest.py DIR --index X --full` as a whole process; wait4's peak RSS (the
  largest single process) and the sampled peak of the whole process tree (parent + workers);
* the index file's size;
* in-process query latency over real question texts (the eval sets): `search(index, q, 4)`
  with max-score pruning and exhaustive (prune=False), which must return identical hits, with
  the default scoring (BM25) and with `scoring="tfidf"` (cosine);
* the reference on the same index: the normalised tf-idf matrix X (chunks x terms, scipy CSR,
  weights (1 + ln tf) * idf / norm from our postings and norms) and `X @ q` + argpartition top 4,
  the sparse dot product scikit-learn's cosine/linear_kernel rests on; its top-4 scores must
  equal ours. Two other forms are printed for context: sklearn's `linear_kernel(q, X)` itself,
  and the term-major product `q @ X.T` (X.T stored as CSR: an inverted index in scipy);
* whole-process query: `python query.py --json --no-llm --rerank none --index X "question"` (the
  lexical search, as in process), median over --repeat runs of each question, beside
  `python -c "import click"` measured in the same run.

wait4's peak RSS of a child counts the parent's resident memory at fork (the high-water mark
survives exec), so this script stays small: generating, ingesting and the in-process timings
(numpy, the matrix) each run in a child process, and the short whole-process runs are forked
from a small trampoline (bench.common.run_isolated). The machine's load average is printed
at the start and the end: on a busy machine every figure is slower, the ratios less so.

With --keep DIR the corpora, indexes and ingest figures stay in DIR and are reused by a
later run (pass --reingest to measure ingest again); without it everything lives in a
temporary directory that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import (
    PROJECT,
    SHARED,
    median_isolated,
    percentile,
    run_process_tree,
    versions,
    whole_process,
)

BYTES_PER_CHUNK = 2_400  # disk needed per chunk: text ~400 B, index ~1.4 kB, its temp copy while built
TARGET_CHUNKS = 1_000_000  # the size the targets are stated at
WHOLE_PROCESS_QUESTIONS = 4  # taken evenly from the in-process questions


def log(*args: object) -> None:
    print(*args, file=sys.stderr, flush=True)


def eval_questions(n: int) -> list[str]:
    """Return n real question texts: all dev questions, then docstring queries spread evenly."""
    dev = [json.loads(line)["question"] for line in (SHARED / "dev-questions.jsonl").open()]
    doc = [json.loads(line)["question"] for line in (SHARED / "docstring-queries.jsonl").open()]
    rest = max(0, n - len(dev))
    step = len(doc) / rest if rest else 1
    return (dev + [doc[int(i * step)] for i in range(rest)])[:n]


def ms(seconds: list[float]) -> tuple[float, float]:
    """Return (median, p95) in milliseconds."""
    return statistics.median(seconds) * 1000, percentile(seconds, 95) * 1000


def ingest(corpus: Path, index: Path, work: Path, chunks: int, reingest: bool) -> dict[str, float]:
    """Build the index of `corpus` with the ingest script, or reuse figures of an earlier run."""
    from rag import Index, RagError

    saved = work / f"ingest-{chunks}.json"
    if not reingest and index.is_file() and saved.is_file():
        figures = json.loads(saved.read_text())
        try:
            Index(index).close()  # an index of an older format is built again
        except RagError:
            figures = {}
        if figures.get("index_mtime") == index.stat().st_mtime_ns:
            log(f"  ingest {chunks:,}: reusing the index and figures of an earlier run ({saved})")
            return {**figures, "reused": True}
    log(f"  ingest {chunks:,}: python ingest.py {corpus} --full ...")
    run, tree_mb = run_process_tree(
        [sys.executable, str(PROJECT / "ingest.py"), str(corpus), "--index", str(index), "--full"],
        report_every=30.0,
    )
    if run.returncode != 0:
        sys.exit(f"ingest failed for {corpus} (exit {run.returncode})")
    figures = {
        "seconds": run.seconds,
        "peak_mb": run.max_rss_mb,
        "tree_mb": tree_mb,
        "index_mtime": index.stat().st_mtime_ns,
    }
    saved.write_text(json.dumps(figures))
    log(f"  ingest {chunks:,}: {run.seconds:.1f} s, peak {run.max_rss_mb:.0f} MB (tree {tree_mb:.0f} MB)")
    return figures


def tfidf_matrix(index_path: Path):  # -> (X csr, term -> (column, idf), idf N)
    """Build X: one row per chunk id, the normalised tf-idf vectors our index scores with."""
    import numpy as np
    import scipy.sparse as sp

    from rag import Index
    from rag.weights import idf_weight

    with Index(index_path) as index:
        view = index.view()
        n_docs = view.n_chunks
        norms = np.frombuffer(view.norms, dtype=np.float64)
        safe = np.where(norms > 0, norms, 1.0)
        # the term names are not listed by the API: read them from the documented schema
        with sqlite3.connect(f"file:{index_path}?mode=ro", uri=True) as conn:
            terms = [t for (t,) in conn.execute("SELECT term FROM terms ORDER BY id")]
        columns: dict[str, tuple[int, float]] = {}
        rows, data, indptr = [], [], [0]
        for j, term in enumerate(terms):
            plist = index.postings(term)
            assert plist is not None
            ids = np.frombuffer(plist[0], dtype=np.dtype(plist[0].typecode)).astype(np.int64)
            # stored as narrow as they fit (rag.store.packing); the log of a uint16 would be float32
            tfs = np.frombuffer(plist[1], dtype=np.dtype(plist[1].typecode)).astype(np.float64)
            idf = idf_weight(n_docs, len(ids))
            columns[term] = (j, idf)
            rows.append(ids)
            data.append((1.0 + np.log(tfs)) * (idf / safe[ids]))
            indptr.append(indptr[-1] + len(ids))
    by_term = sp.csc_matrix(
        (np.concatenate(data), np.concatenate(rows).astype(np.int32), np.array(indptr, dtype=np.int64)),
        shape=(len(norms), len(terms)),
    )
    return by_term.tocsr(), columns


def query_vector(tokenizer, columns: dict[str, tuple[int, float]], question: str):
    """Return (columns, weights) of a question's unit tf-idf vector, terms unknown to the index dropped."""
    import numpy as np

    cols, weights = [], []
    for term, n in tokenizer.query_counts(question).items():
        entry = columns.get(term)
        if entry is not None:
            cols.append(entry[0])
            weights.append((1.0 + math.log(n)) * entry[1])
    w = np.array(weights)
    return np.array(cols, dtype=np.int64), w / (np.linalg.norm(w) or 1.0)


def in_process(index_path: Path, questions: list[str]) -> dict[str, object]:
    """Time search() pruned and exhaustive, and the scipy/sklearn products, on the same index."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.metrics.pairwise import linear_kernel

    from rag import Index, Tokenizer, search

    out: dict[str, object] = {}
    ours: list[list[float]] = []  # cosine scores, checked against X @ q below
    mismatches = []
    with Index(index_path) as index:
        # "" = the default scoring (BM25 on these code-tokenizer indexes), "cos_" = --scoring tfidf
        for prefix, scoring in (("", "auto"), ("cos_", "tfidf")):
            for q in questions:  # warm: the view's arrays, SQLite's page cache
                search(index, q, 4, scoring=scoring)
            pruned, exhaustive = [], []
            for q in questions:
                start = time.perf_counter()
                a = search(index, q, 4, scoring=scoring)
                mid = time.perf_counter()
                b = search(index, q, 4, prune=False, scoring=scoring)
                pruned.append(mid - start)
                exhaustive.append(time.perf_counter() - mid)
                key_a = [(h.score, h.chunk.path, h.chunk.start_line) for h in a]
                key_b = [(h.score, h.chunk.path, h.chunk.start_line) for h in b]
                if key_a != key_b:
                    mismatches.append((f"{scoring}: {q}", key_a, key_b))
                if scoring == "tfidf":
                    ours.append([h.score for h in b])
            out[f"{prefix}pruned"], out[f"{prefix}exhaustive"] = ms(pruned), ms(exhaustive)
        out["mismatches"] = mismatches
        tokenizer = Tokenizer(index.manifest.tokenizer)

    log("  building the scipy matrix from the index ...")
    start = time.perf_counter()
    X, columns = tfidf_matrix(index_path)
    out["build_s"], out["nnz"] = time.perf_counter() - start, X.nnz
    by_term = X.T.tocsr()  # terms x chunks: each row is a term's postings

    def dot(q: str):
        cols, w = query_vector(tokenizer, columns, q)
        dense = np.zeros(X.shape[1])
        dense[cols] = w
        return X @ dense

    def kernel(q: str):
        cols, w = query_vector(tokenizer, columns, q)
        return linear_kernel(sp.csr_matrix((w, cols, [0, len(cols)]), shape=(1, X.shape[1])), X).ravel()

    def term_major(q: str):
        cols, w = query_vector(tokenizer, columns, q)
        return (sp.csr_matrix((w, cols, [0, len(cols)]), shape=(1, X.shape[1])) @ by_term).toarray().ravel()

    worst = 0.0
    for name, product in (("sk_dot", dot), ("sk_kernel", kernel), ("sk_term_major", term_major)):
        times = []
        for i, q in enumerate(questions):
            start = time.perf_counter()
            scores = product(q)
            top = np.argpartition(-scores, 4)[:4]
            top = top[np.argsort(-scores[top])]
            times.append(time.perf_counter() - start)
            if name == "sk_dot" and ours[i]:
                worst = max(worst, max(abs(float(scores[t]) - s) for t, s in zip(top, ours[i])))
        out[name] = ms(times)
    out["score_diff"] = worst
    return out


def in_process_child(index: Path, n_questions: int) -> dict[str, object]:
    """Run in_process() in a child process (see the module docstring) and return its figures."""
    args = [sys.executable, __file__, "--in-process", str(index), "--queries", str(n_questions)]
    done = subprocess.run(args, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"in-process timing failed for {index} (exit {done.returncode})")
    return json.loads(done.stdout)


def generate_child(chunks: int, work: Path) -> Path:
    """Generate (or finish) the synthetic corpus of `chunks` in a child process; return its root."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("synthetic.py")), str(chunks), "--out", str(work)],
        stdout=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        sys.exit(f"generating corpus-{chunks} failed (exit {done.returncode})")
    return work / f"corpus-{chunks}"


def own_peak_mb() -> float:
    """Return this process's peak resident memory in MB."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated chunk counts")
    parser.add_argument("--keep", type=Path, help="keep corpora and indexes in DIR, reusing what is there")
    parser.add_argument("--reingest", action="store_true", help="with --keep: measure ingest again")
    parser.add_argument("--queries", type=int, default=200, help="questions for in-process latency")
    parser.add_argument("--repeat", type=int, default=7, help="runs per question, whole process")
    parser.add_argument("--in-process", type=Path, metavar="INDEX", help=argparse.SUPPRESS)  # child mode
    args = parser.parse_args()
    if args.in_process:
        print(json.dumps(in_process(args.in_process, eval_questions(args.queries))))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    py = sys.executable
    print(versions(), "| load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    print(", ".join(f"{p} {metadata.version(p)}" for p in ("numpy", "scipy", "scikit-learn")))
    tmp = None
    if args.keep:
        work = args.keep
        work.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="rag-scale-")
        work = Path(tmp.name)
    need = sum(BYTES_PER_CHUNK * n for n in sizes)
    free = shutil.disk_usage(work).free
    print(f"work dir {work}: {free / 1e9:.0f} GB free, about {need / 1e9:.1f} GB needed")
    if free < need:
        sys.exit("not enough disk space: pass --keep DIR on a larger disk, or fewer --sizes")
    try:
        click_s, click_mb = median_isolated([py, "-c", "import click"], args.repeat)
        sk_s, sk_mb = median_isolated(
            [py, "-c", "import numpy, scipy.sparse, sklearn.metrics.pairwise"], args.repeat
        )
        print(f"reference: python -c 'import click'  median {click_s * 1000:.0f} ms, peak {click_mb:.0f} MB")
        print(
            f"context:   python -c 'import numpy, scipy.sparse, sklearn.metrics.pairwise'  "
            f"median {sk_s * 1000:.0f} ms, peak {sk_mb:.0f} MB"
        )
        questions = eval_questions(args.queries)
        few = questions[:: max(1, len(questions) // WHOLE_PROCESS_QUESTIONS)][:WHOLE_PROCESS_QUESTIONS]
        print(
            f"in-process: {len(questions)} eval questions, top 4; whole process: {len(few)} of them "
            f"x {args.repeat} runs, each followed by a run of `import click`\n"
        )
        rows = []
        for n in sizes:
            log(f"size {n:,}:")
            corpus = generate_child(n, work)
            index = work / f"index-{n}.sqlite"
            figures = ingest(corpus, index, work, n, args.reingest)
            from rag import Index

            with Index(index) as idx:
                chunks = idx.manifest.n_chunks
                n_terms = idx.manifest.n_terms
            if abs(chunks - n) > 0.01 * n:
                sys.exit(f"the index of corpus-{n} has {chunks} chunks, not {n} (±1%): the generator is off")
            text_mb = sum(p.stat().st_size for p in corpus.rglob("*.txt")) / 1e6
            log("  in-process queries ...")
            inproc = in_process_child(index, len(questions))
            log("  whole-process queries ...")
            q_s, q_mb, click_n = whole_process(index, few, args.repeat, ("--rerank", "none"))
            rows.append(
                (n, chunks, n_terms, text_mb, figures, index.stat().st_size / 1e6, inproc, q_s, q_mb, click_n)
            )
            log(f"  done: {n:,}")

        print(
            f"{'chunks':>9} {'terms':>7} {'text MB':>7} {'ingest s':>8} {'peak MB':>7} {'tree MB':>7} "
            f"{'index MB':>8} {'bm25 ms':>11} {'exhaust ms':>11} {'cosine ms':>11} {'exhaust ms':>11} "
            f"{'X@q ms':>11} {'process ms':>10} {'click ms':>8} {'x click':>7} {'q MB':>5}"
        )
        print(f"{'':>63}" + " ".join(f"{'median/p95':>11}" for _ in range(5)))
        for _, chunks, n_terms, text_mb, fig, index_mb, r, q_s, q_mb, click_n in rows:
            cells = [
                f"{r[k][0]:.1f}/{r[k][1]:.1f}"
                for k in ("pruned", "exhaustive", "cos_pruned", "cos_exhaustive", "sk_dot")
            ]
            print(
                f"{chunks:9,d} {n_terms:7d} {text_mb:7.1f} {fig['seconds']:8.1f} {fig['peak_mb']:7.0f} "
                f"{fig['tree_mb']:7.0f} {index_mb:8.1f} "
                + " ".join(f"{c:>11}" for c in cells)
                + f" {q_s * 1000:10.0f} {click_n * 1000:8.0f} {q_s / click_n:7.2f} {q_mb:5.0f}"
            )
        reused = [f"{r[1]:,}" for r in rows if r[4].get("reused")]
        if reused:
            print(
                f"\ningest figures of {', '.join(reused)} chunks: from an earlier run (--keep); --reingest to redo"
            )
        print("\nx click: over the median of `import click` runs interleaved with that size's query runs")
        print(
            "peak MB: wait4's peak of the largest single ingest process; tree MB: sampled peak of "
            "the parent and its workers together"
        )
        print(
            "bm25 ms: search() with the default scoring (BM25 on these indexes), pruned, then exhaustive; "
            "cosine ms: the same with --scoring tfidf"
        )
        print(
            "X@q: scipy CSR (chunks x terms) times the dense query vector, then argpartition top 4; "
            "query tokenizing included; its scores are checked against our cosine scores"
        )
        for _, chunks, *_, r, _, _, _ in rows:
            print(
                f"{chunks:9,d}: sklearn linear_kernel(q, X) {r['sk_kernel'][0]:.1f}/{r['sk_kernel'][1]:.1f} ms, "
                f"term-major q @ X.T {r['sk_term_major'][0]:.1f}/{r['sk_term_major'][1]:.1f} ms; "
                f"matrix built in {r['build_s']:.1f} s ({r['nnz']:,} non-zeros); "
                f"max |score diff| vs ours {r['score_diff']:.1e}; pruned != exhaustive: {len(r['mismatches'])}"
            )
            for q, a, b in r["mismatches"][:3]:
                print(f"    {q[:70]!r}\n      pruned     {a}\n      exhaustive {b}")

        print(
            f"this script's own peak RSS: {own_peak_mb():.0f} MB (a floor under the ingest wait4 peaks above)"
        )
        print("load average at the end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
        n, chunks, _, _, fig, _, r, q_s, q_mb, click_n = rows[-1]
        at = "" if n == TARGET_CHUNKS else f" (measured at {chunks:,} chunks, not {TARGET_CHUNKS:,})"
        print(f"\ntargets at {TARGET_CHUNKS:,} chunks{at}:")
        checks = [
            (
                f"query whole process <= 2.5x import click: {q_s * 1000:.0f} vs {click_n * 1000:.0f} ms, "
                f"{q_s / click_n:.2f}x",
                q_s <= 2.5 * click_n,
            ),
            (f"query peak < 100 MB: {q_mb:.0f} MB", q_mb < 100),
            (
                f"in-process median <= X@q median: {r['pruned'][0]:.1f} (BM25), {r['cos_pruned'][0]:.1f} (cosine) "
                f"vs {r['sk_dot'][0]:.1f} ms",
                r["pruned"][0] <= r["sk_dot"][0],
            ),
            (
                f"in-process p95 < 50 ms: {r['pruned'][1]:.1f} (BM25), {r['cos_pruned'][1]:.1f} ms (cosine)",
                r["pruned"][1] < 50,
            ),
            (
                f"ingest peak < 1.5 GB: {fig['peak_mb']:.0f} MB largest process, {fig['tree_mb']:.0f} MB tree",
                fig["tree_mb"] < 1536,
            ),
        ]
        for text, met in checks:
            print(f"  {'met    ' if met else 'NOT met'}  {text}")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
