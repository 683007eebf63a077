"""Ingest throughput, whole-process query time and memory, and index size on the shared corpora.

    python bench/speed.py [--corpora flask,django] [--repeat 7]

Floors, measured on the same bytes in the same run: reading them (cat speed) and one
`re.findall(r"[^\\W_]+")` pass. Query time is compared with `python3 -c "import click"` run between
the query runs (bench.common.whole_process), so both see the same machine load.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import (
    CORPORA,
    CORPUS_NAMES,
    PROJECT,
    floors,
    median_isolated,
    require_corpora,
    run_isolated,
    versions,
    whole_process,
)

QUESTIONS = [
    "how does the session cookie get signed",
    "retry a request after a timeout",
    "QuerySet.get_or_create",
    "where are default headers merged into the request config",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default=",".join(CORPUS_NAMES))
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    require_corpora()
    from rag import Index

    names = [n for n in CORPUS_NAMES if any(n.startswith(c) for c in args.corpora.split(","))]
    py = sys.executable
    print(versions())
    click_s, click_mb = median_isolated([py, "-c", "import click"], args.repeat)
    print(
        f"reference: python -c 'import click'  median {click_s * 1000:.0f} ms, peak {click_mb:.0f} MB; x click is "
        "against the `import click` runs interleaved with each corpus's query runs\n"
    )
    header = (
        f"{'corpus':30} {'files':>6} {'chunks':>7} {'MB':>6} {'ingest s':>8} {'MB/s':>6} "
        f"{'read s':>6} {'regex s':>7} {'peak MB':>7} {'index MB':>8} {'query ms':>8} {'x click':>7} {'q MB':>5}"
    )
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        targets = [(n, CORPORA / n, []) for n in names]
        if len(names) > 1:
            targets.append(("all together", CORPORA, [f"--include={n}/*" for n in names]))
        for name, root, extra in targets:
            index = Path(tmp) / f"{name.replace(' ', '-')}.sqlite"
            ingest = run_isolated(
                [py, str(PROJECT / "ingest.py"), str(root), "--index", str(index), "--full", *extra]
            )
            if ingest.returncode != 0:
                sys.exit(f"ingest failed for {name}")
            with Index(index) as idx:
                chunks = idx.manifest.n_chunks
                indexed = list(idx.files())
            read_s, regex_s, n_bytes = floors(root, indexed)
            mb = n_bytes / 1e6
            q_s, q_mb, click_s = whole_process(index, QUESTIONS, args.repeat)
            print(
                f"{name:30} {len(indexed):6d} {chunks:7d} {mb:6.1f} {ingest.seconds:8.2f} {mb / ingest.seconds:6.1f} "
                f"{read_s:6.2f} {regex_s:7.2f} {ingest.max_rss_mb:7.0f} {index.stat().st_size / 1e6:8.1f} "
                f"{q_s * 1000:8.0f} {q_s / click_s:7.2f} {q_mb:5.0f}"
            )


if __name__ == "__main__":
    main()
