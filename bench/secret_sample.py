"""Draw redactions at random for a reader to classify: is each a secret, or a value a developer
would search for or need in an answer?

Usage: python bench/secret_sample.py TREE [TREE ...] [--n 200] [--seed 1] > sample.jsonl

Every text file of the trees is scanned as bench/secret_scan.py scans it (ingest's reading rules);
of all the findings, N are drawn with `seed`, each written as one JSON line: the file, the line, the
value as written and the lines around it. The values are unmasked, for the reader: keep the file
outside the repository, beside the trees it came from.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.secret_scan import read_text, tree_files  # noqa: E402
from rag.secrets import find_secrets  # noqa: E402

AROUND = 2  # lines of context each side


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", type=Path, nargs="+")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    found: list[dict[str, object]] = []
    for tree in args.trees:
        for path in tree_files(tree):
            text = read_text(path)
            if text is None:
                continue
            lines = text.splitlines()
            for f in find_secrets(text):
                line = text.count("\n", 0, f.start)
                found.append(
                    {
                        "file": f"{tree.name}/{path.relative_to(tree).as_posix()}",
                        "line": line + 1,
                        "value": text[f.start : f.end],
                        "context": "\n".join(lines[max(0, line - AROUND) : line + AROUND + 1])[:1500],
                    }
                )
    drawn = random.Random(args.seed).sample(found, min(args.n, len(found)))
    print(f"{len(found)} redactions; {len(drawn)} drawn", file=sys.stderr)
    for entry in drawn:
        print(json.dumps(entry))


if __name__ == "__main__":
    main()
