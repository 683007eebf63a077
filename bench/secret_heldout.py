"""Score a planting set kept outside the repository: ingest its folder, then look for each planted
secret in everything the index holds, and for each look-alike in its passages.

Usage: python bench/secret_heldout.py DIR [--misses]

DIR holds `repo/` (the planted files) and `manifest.json`: a list of {"file", "value", "kind":
"secret" | "lookalike", "family", "parts": [...] (optional: the pieces of a split or encoded value as
written)}. A secret leaks when any of its pieces of 8+ characters (the value itself, or each of
`parts`) is in a passage's text, or is a term of the index as the tokenizer would write it (lower
case); it is caught otherwise, whether redacted or its file skipped. A look-alike is wrongly
redacted when its value (one of its `parts`, or of its lines when it spans several: passages may
split it) is no longer in its file's passages (files not indexed, skipped as secret files or left
out by name, count apart).
The set itself, written by someone who never read the detector, stays outside the repository.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag import Index, ingest  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--misses", action="store_true", help="list each leak and each look-alike redacted")
    args = ap.parse_args()
    manifest = json.loads((args.folder / "manifest.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        index_path = Path(tmp) / "heldout.idx"
        ingest(args.folder / "repo", index_path)
        with Index(index_path) as index:
            texts: dict[str, list[str]] = {}
            terms: set[str] = set()
            for _, chunk, chunk_terms in index.all_chunks():
                texts.setdefault(chunk.path, []).append(chunk.text)
                terms.update(chunk_terms)
            skipped = set(index.skipped_files())
    everything = "\n".join(t for parts in texts.values() for t in parts)
    totals: Counter[str] = Counter()
    by_family: dict[str, Counter[str]] = {}
    for entry in manifest:
        pieces = [p for p in entry.get("parts") or [entry["value"]] if len(p) >= 8]
        family = str(entry.get("family"))
        if entry["kind"] == "secret":
            leaked = [p for p in pieces if p in everything or p.lower() in terms]
            outcome = "leaked" if leaked else "caught"
            by_family.setdefault(family, Counter())[outcome] += 1
        else:
            if entry["file"] in skipped or entry["file"] not in texts:
                outcome = "look-alike in a file not indexed"  # skipped (a secret file) or left out by name
            else:
                held = "\n".join(texts.get(entry["file"], []))
                # (an indented PEM block, or one that chunks split: its lines)
                written = entry.get("parts") or [
                    line.strip() for line in entry["value"].splitlines() if line.strip()
                ]
                outcome = "look-alike kept" if all(p in held for p in written) else "look-alike redacted"
        totals[outcome] += 1
        if args.misses and outcome in ("leaked", "look-alike redacted"):
            print(
                f"  {outcome}: {entry['file']} family {family}: {entry['value'][:60]!r} ({entry.get('note', '')})"
            )
    secrets = totals["caught"] + totals["leaked"]
    alikes = sum(n for k, n in totals.items() if k.startswith("look-alike"))
    print(
        f"secrets caught {totals['caught']} / {secrets}; look-alikes redacted {totals['look-alike redacted']} / {alikes}"
        f" ({totals['look-alike in a file not indexed']} more in files not indexed)"
    )
    for family, counts in sorted(by_family.items()):
        print(f"  family {family}: caught {counts['caught']} of {counts['caught'] + counts['leaked']}")


if __name__ == "__main__":
    main()
