"""Redaction time of two versions of the code, interleaved file by file in one process.

    python bench/secret_ab.py --old main [--rounds 3]
    python bench/secret_ab.py --old main --shapes [--mb 1] [--rounds 3]

The old version is the package `rag/` at git revision --old, extracted to a temporary directory;
the new one is this working tree. Both are imported in one process, each under its own modules
(swapped in before each call), and every text file of the eight corpora (read as
bench/secret_scan.py reads them) is redacted by one and then the other, the order alternating
from file to file, so that the load of a busy machine falls on both alike. Each round prints
both totals and their ratio, and how many files the two redact differently.

--shapes times bench/hostile.py's hostile shapes instead (each --mb megabytes, in seconds per
MB), both versions on each shape in turn.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CORPORA, CORPUS_NAMES, PROJECT, versions  # noqa: E402
from bench.hostile import SHAPES  # noqa: E402
from bench.secret_scan import read_text, tree_files  # noqa: E402

Redact = Callable[[str], tuple[str, dict[str, int]]]


def _load(root: str) -> tuple[dict[str, ModuleType], Redact]:
    """Import `rag.secrets` from `root`; return its modules (taken out of sys.modules) and redact."""
    for name in [n for n in sys.modules if n == "rag" or n.startswith("rag.")]:
        del sys.modules[name]
    sys.path.insert(0, root)
    try:
        import rag.secrets
    finally:
        sys.path.remove(root)
    assert Path(rag.secrets.__file__).resolve().is_relative_to(Path(root).resolve()), rag.secrets.__file__
    modules = {n: m for n, m in sys.modules.items() if n == "rag" or n.startswith("rag.")}
    return modules, rag.secrets.redact


def _timed(modules: dict[str, ModuleType], redact: Redact, text: str) -> tuple[float, str]:
    """Redact `text` with one version's modules in place (imports made inside a call find them)."""
    sys.modules.update(modules)
    start = time.perf_counter()
    redacted, _ = redact(text)
    return time.perf_counter() - start, redacted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="git revision of the old version")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shapes", action="store_true", help="time bench/hostile.py's shapes instead")
    parser.add_argument("--mb", type=float, default=1.0, help="size of each shape, in MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(PROJECT), "archive", args.old, "rag"], capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        old = _load(tmp)
        new = _load(str(PROJECT))
        print(versions())
        if args.shapes:
            shapes(old, new, args.old, args.mb, args.rounds)
        else:
            corpora(old, new, args.old, args.rounds)


def corpora(
    old: tuple[dict[str, ModuleType], Redact],
    new: tuple[dict[str, ModuleType], Redact],
    rev: str,
    rounds: int,
) -> None:
    """Redact every file of the corpora with both versions, interleaved; print each round's totals."""
    texts = [t for c in CORPUS_NAMES for p in tree_files(CORPORA / c) if (t := read_text(p)) is not None]
    size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"{len(texts)} files, {size:.1f} MB; old = {rev}, new = working tree")
    for r in range(rounds):
        spent = {"old": 0.0, "new": 0.0}
        differ = 0
        for i, text in enumerate(texts):
            order = [("old", old), ("new", new)] if i % 2 == 0 else [("new", new), ("old", old)]
            out = {}
            for name, (modules, redact) in order:
                seconds, out[name] = _timed(modules, redact, text)
                spent[name] += seconds
            differ += out["old"] != out["new"]
        print(
            f"round {r + 1}: old {spent['old']:.2f} s, new {spent['new']:.2f} s, "
            f"new/old {spent['new'] / spent['old']:.3f}; files redacted differently: {differ}",
            flush=True,
        )


def shapes(
    old: tuple[dict[str, ModuleType], Redact],
    new: tuple[dict[str, ModuleType], Redact],
    rev: str,
    mb: float,
    rounds: int,
) -> None:
    """Time both versions on each hostile shape, in turn; print the best of the rounds in s/MB."""
    print(f"old = {rev}, new = working tree; best of {rounds} rounds, s/MB")
    print(f"{'shape':20} {'old':>7} {'new':>7} {'new/old':>8}")
    for shape, (_, unit) in SHAPES.items():
        text = unit * max(1, int(mb * 1_000_000) // len(unit))
        size = len(text.encode("utf-8")) / 1e6
        best = {"old": float("inf"), "new": float("inf")}
        for r in range(rounds):
            order = [("old", old), ("new", new)] if r % 2 == 0 else [("new", new), ("old", old)]
            for name, (modules, redact) in order:
                best[name] = min(best[name], _timed(modules, redact, text)[0] / size)
        print(
            f"{shape:20} {best['old']:7.2f} {best['new']:7.2f} {best['new'] / best['old']:8.2f}", flush=True
        )


if __name__ == "__main__":
    main()
