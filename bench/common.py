"""Helpers shared by the benchmark scripts: corpora location, timing whole processes."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
SHARED = PROJECT.parent / "shared" / "eval"
CORPORA = Path(os.environ.get("RAG_CORPORA", Path.home() / ".cache" / "rag-corpora"))
CORPUS_NAMES = [
    "flask-3.1.3", "requests-2.34.2", "django-5.2.19", "fastapi-0.165.0", "express-5.3.0",
    "axios-1.21.1", "tanstack-query-core-5.108.4", "zod-4.6.7",
]


def require_corpora() -> None:
    """Exit with a hint when the shared corpora have not been fetched."""
    missing = [c for c in CORPUS_NAMES if not (CORPORA / c).is_dir()]
    if missing:
        sys.exit(f"corpora missing in {CORPORA}: {', '.join(missing)} — run {SHARED}/fetch-corpora "
                 f"and {SHARED}/make-docstring-eval first")


@dataclass(frozen=True)
class Run:
    seconds: float
    max_rss_mb: float
    returncode: int
    stdout: str


def run_process(args: list[str], cwd: Path | None = None) -> Run:
    """Run a command, returning its wall time and peak resident memory (from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(seconds, usage.ru_maxrss / 1024, proc.returncode, out)


def median_run(args: list[str], repeat: int, cwd: Path | None = None) -> tuple[float, float]:
    """Return (median seconds, max peak MB) over `repeat` runs."""
    runs = [run_process(args, cwd) for _ in range(repeat)]
    bad = [r for r in runs if r.returncode != 0]
    if bad:
        sys.exit(f"command failed ({bad[0].returncode}): {' '.join(args)}")
    return statistics.median(r.seconds for r in runs), max(r.max_rss_mb for r in runs)


def versions() -> str:
    """Describe the interpreter and machine the figures come from."""
    return f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}"
