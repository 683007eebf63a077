"""Helpers shared by the benchmark scripts: corpora location, timing whole processes."""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rag.weights import DEFAULTS, RankingWeights

PROJECT = Path(__file__).resolve().parent.parent
SHARED = PROJECT.parent / "shared" / "eval"
CORPORA = Path(os.environ.get("RAG_CORPORA", Path.home() / ".cache" / "rag-corpora"))
CORPUS_NAMES = [
    "flask-3.1.3",
    "requests-2.34.2",
    "django-5.2.19",
    "fastapi-0.165.0",
    "express-5.3.0",
    "axios-1.21.1",
    "tanstack-query-core-5.108.4",
    "zod-4.6.7",
]


def eval_both_sets(label: str, per_corpus: bool = False, weights: RankingWeights = DEFAULTS) -> None:
    """Score rag on both eval sets as `rag eval` does (the docstring queries on the doc-stripped
    corpora, the dev questions on the original ones; indexes brought up to date first) and print
    one line per set: hit@4, MRR@10 and the mean size of the top-4 passages, after `label`, ranked
    with `weights`; with
    `per_corpus`, then each corpus's hit@4/MRR@10."""
    from rag.evaluation import run_eval

    for name, questions, root in (
        ("docstring", "docstring-queries.jsonl", CORPORA / "docstring-stripped"),
        ("dev", "dev-questions.jsonl", CORPORA),
    ):
        # the lexical levers alone
        report = run_eval(SHARED / questions, corpus_root=root, rerank="none", weights=weights)
        m = report.overall
        line = f"{name}: {label}: hit@4 {m.hit_at_4:.3f} MRR@10 {m.mrr_at_10:.4f} top-4 chars {m.mean_top4_chars:,.0f}"
        if per_corpus:
            line += " | " + " ".join(
                f"{c.split('-')[0]} {v.hit_at_4:.2f}/{v.mrr_at_10:.2f}" for c, v in report.per_corpus.items()
            )
        print(line, flush=True)


def require_corpora() -> None:
    """Exit with a hint when the shared corpora have not been fetched."""
    missing = [c for c in CORPUS_NAMES if not (CORPORA / c).is_dir()]
    if missing:
        sys.exit(
            f"corpora missing in {CORPORA}: {', '.join(missing)} — run {SHARED}/fetch-corpora "
            f"and {SHARED}/make-docstring-eval first"
        )


@dataclass(frozen=True)
class Run:
    seconds: float
    max_rss_mb: float
    returncode: int
    stdout: str


def floors(root: Path, files: list[str]) -> tuple[float, float, int]:
    """Seconds to read and decode every file, and to run one regex tokenising pass; bytes."""
    start = time.perf_counter()
    texts = [(root / f).read_bytes().decode("utf-8", "replace") for f in files]
    read = time.perf_counter() - start
    word = re.compile(r"[^\W_]+")
    start = time.perf_counter()
    for text in texts:
        word.findall(text)
    return read, time.perf_counter() - start, sum(len(t.encode()) for t in texts)


def versions() -> str:
    """Describe the interpreter and machine the figures come from."""
    return f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}"


def _tree_rss_kb(pid: int) -> int:
    """Sum the resident memory (kB) of a process and all its descendants, from /proc."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue  # the process ended while we looked
    return total


def run_process_tree(
    args: list[str],
    cwd: Path | None = None,
    interval: float = 0.05,
    report_every: float = 0.0,
) -> tuple[Run, float]:
    """Run a command, timing it and sampling the summed RSS of its process tree.

    wait4's peak is that of the largest single process (the parent or one worker); a
    command that forks workers holds their memory at the same time, so the sampled sum
    (every `interval` s, so a short spike can be missed) is the figure to hold against a
    memory budget. With `report_every`, print elapsed time and memory to stderr that often.
    """
    import threading

    peak = 0
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        last = start
        while not done.wait(interval):
            rss = _tree_rss_kb(proc.pid)
            peak = max(peak, rss)
            now = time.perf_counter()
            if report_every and now - last >= report_every:
                print(
                    f"    ... {now - start:5.0f} s, tree RSS {rss / 1024:6.0f} MB (peak {peak / 1024:.0f})",
                    file=sys.stderr,
                    flush=True,
                )
                last = now

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    done.set()  # stop sampling before the child is reaped, so its pid is not reused under us
    sampler.join()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(seconds, usage.ru_maxrss / 1024, proc.returncode, out), peak / 1024


def percentile(values: list[float], p: float) -> float:
    """Return the p-th percentile (0-100) of values, nearest-rank."""
    ordered = sorted(values)
    rank = -(-p * len(ordered) // 100)  # ceil(p% of n), 1-based
    return ordered[min(len(ordered), max(1, int(rank))) - 1]


# Runs a command and reports its own wall time and peak RSS. Started with -I -S it is small
# (~8 MB), so the command it forks does not inherit a large high-water mark: wait4's ru_maxrss
# counts the memory of the process that forked, as it was at the fork, because the mark
# survives exec. A bench that has loaded corpora or numpy would otherwise inflate every peak.
_TRAMPOLINE = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
os.write(2, f"{seconds} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}".encode())
"""


def compile_package() -> None:
    """Write the package's bytecode now. With PYTHONDONTWRITEBYTECODE set (as on the
    development machine) an edited module would otherwise be compiled again in every timed
    process, which is not what a user's installed copy does."""
    import compileall

    compileall.compile_dir(PROJECT / "rag", quiet=2)


_compiled = False


def run_isolated(args: list[str], cwd: Path | None = None) -> Run:
    """Run a command, timing it, forked from a small trampoline process so that its
    peak RSS is its own and not this (possibly large) process's memory at fork time. The
    package's bytecode is written before the first run (compile_package)."""
    global _compiled
    if not _compiled:
        compile_package()
        _compiled = True
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _TRAMPOLINE, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, report = proc.communicate()
    if proc.returncode != 0 or len(report.split()) != 3:
        return Run(0.0, 0.0, proc.returncode or 1, out)
    seconds, max_rss_kb, code = report.split()
    return Run(float(seconds), int(max_rss_kb) / 1024, int(code), out)


def median_isolated(args: list[str], repeat: int, cwd: Path | None = None) -> tuple[float, float]:
    """Return (median seconds, max peak MB) over `repeat` runs of run_isolated."""
    runs = [run_isolated(args, cwd) for _ in range(repeat)]
    bad = [r for r in runs if r.returncode != 0]
    if bad:
        sys.exit(f"command failed ({bad[0].returncode}): {' '.join(args)}")
    return statistics.median(r.seconds for r in runs), max(r.max_rss_mb for r in runs)


def whole_process(
    index: Path, questions: list[str], repeat: int, options: tuple[str, ...] = ()
) -> tuple[float, float, float]:
    """Median seconds and max peak MB of the query script over `questions` (with `options`, e.g.
    ("--rerank", "none")), and the median of `python -c "import click"` run between them (so
    both see the same machine load)."""
    query = [sys.executable, str(PROJECT / "query.py"), "--json", "--no-llm", *options, "--index", str(index)]
    click = [sys.executable, "-c", "import click"]
    times, clicks, peak = [], [], 0.0
    for _ in range(repeat):
        for q in questions:
            run = run_isolated([*query, q])
            if run.returncode != 0:
                sys.exit(f"query failed (exit {run.returncode}): {q!r}")
            times.append(run.seconds)
            peak = max(peak, run.max_rss_mb)
            clicks.append(run_isolated(click).seconds)
    return statistics.median(times), peak, statistics.median(clicks)
