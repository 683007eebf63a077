"""What the index holds: bytes and share of each table (and of each column of the big ones), and
the index's size against the source bytes it indexes.

    python bench/index_size.py [--index PATH] [--keep PATH]

Without --index, the eight corpora are ingested together (`ingest.py CORPORA --full
--include=NAME/*` for each, as bench/speed.py's "all together" row) with this checkout's code into
a temporary file (or --keep PATH, reused when it exists). Table bytes are SQLite's own (the dbstat
virtual table: every page of the table's B-tree, its overflow pages, and the indexes on it); a
column's bytes are the payload of its values as SQLite stores them (an integer's 0-8 bytes, a
real's 8, text and blobs their length), without the row headers and the space left free in pages.
The source bytes are the sizes of the indexed files, as the files table records them.
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import CORPORA, CORPUS_NAMES, PROJECT, require_corpora

# columns are listed for the tables holding at least this share of the file
BIG_TABLE = 0.05

# a value's bytes in an SQLite record (https://sqlite.org/fileformat.html#record_format)
_VALUE_BYTES = """CASE typeof({c})
    WHEN 'integer' THEN CASE
        WHEN {c} IN (0, 1) THEN 0 WHEN {c} BETWEEN -128 AND 127 THEN 1
        WHEN {c} BETWEEN -32768 AND 32767 THEN 2 WHEN {c} BETWEEN -8388608 AND 8388607 THEN 3
        WHEN {c} BETWEEN -2147483648 AND 2147483647 THEN 4
        WHEN {c} BETWEEN -140737488355328 AND 140737488355327 THEN 6 ELSE 8 END
    WHEN 'real' THEN 8
    WHEN 'text' THEN length(CAST({c} AS BLOB))
    WHEN 'blob' THEN length({c})
    ELSE 0 END"""


def build(path: Path) -> None:
    """Ingest the eight corpora together into `path` with this checkout's code."""
    require_corpora()
    includes = [f"--include={name}/*" for name in CORPUS_NAMES]
    cmd = [
        sys.executable,
        str(PROJECT / "ingest.py"),
        str(CORPORA),
        "--index",
        str(path),
        "--full",
        *includes,
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=PROJECT)


def report(path: Path) -> None:
    """Print the table and column sizes of the index at `path`."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        total = path.stat().st_size
        source = conn.execute("SELECT SUM(size) FROM files").fetchone()[0]
        owner = dict(
            conn.execute("SELECT name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')")
        )
        tables: dict[str, int] = {}
        for name, size in conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)
            tables[table] = tables.get(table, 0) + size
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0] * page_size
        print(
            f"index {path}: {total / 1e6:.1f} MB for {source / 1e6:.1f} MB of source, {total / source:.2f}x"
        )
        print(f"page size {page_size}, free pages {free / 1e6:.1f} MB\n")
        print(f"{'table / column':28} {'MB':>8} {'share':>6}")
        for table, size in sorted(tables.items(), key=lambda kv: -kv[1]):
            print(f"{table:28} {size / 1e6:8.2f} {size / total:6.1%}")
            if size < BIG_TABLE * total or table.startswith("sqlite_"):
                continue
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            sums = conn.execute(
                "SELECT " + ", ".join(f"SUM({_VALUE_BYTES.format(c=c)})" for c in columns) + f" FROM {table}"
            ).fetchone()
            for column, n in zip(columns, sums):
                print(f"  {column:26} {(n or 0) / 1e6:8.2f} {(n or 0) / total:6.1%}")
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, help="an existing index to measure")
    parser.add_argument("--keep", type=Path, help="build the eight corpora's index here (reused if present)")
    args = parser.parse_args()
    if args.index is not None:
        report(args.index)
        return
    if args.keep is not None:
        if not args.keep.exists():
            build(args.keep)
        report(args.keep)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "index.sqlite"
        build(path)
        report(path)


if __name__ == "__main__":
    main()
