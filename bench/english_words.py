"""Write rag/data/english-words.txt.gz: the common English words that spelling correction never
replaces (rag.retrieval.spelling).

    apt-get install wamerican        # Debian's SCOWL list, size 50 (2020.12.07-2 here)
    python bench/english_words.py    # reads /usr/share/dict/american-english

The source is SCOWL (Spell Checker Oriented Word Lists, Kevin Atkinson), as Debian packages it in
`wamerican`: American English words of SCOWL's size 50, with their inflections. Its licence is a
permissive one (use, copy, modify, distribute and sell, the copyright notice kept with every copy),
and the lists it draws on are public domain or under notices of the same kind; the package's
copyright file, /usr/share/doc/wamerican/copyright, is copied whole, as '#' lines, to the head of
the output, so that the notices travel with the words.

Kept: the words written in lowercase ASCII letters alone, of 4 letters or more (a shorter word is
never corrected: rag.retrieval.spelling.MIN_LETTERS). Left out: names (capitalised), possessives
('s) and words with accents. One word a line, sorted; gzip with no timestamp, so that the same
source gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from rag.retrieval.spelling import MIN_LETTERS  # noqa: E402

SOURCE = Path("/usr/share/dict/american-english")
NOTICE = Path("/usr/share/doc/wamerican/copyright")
OUT = Path(__file__).resolve().parent.parent / "rag" / "data" / "english-words.txt.gz"
WORD = re.compile(rf"[a-z]{{{MIN_LETTERS},}}")


def build(source: Path, notice: Path) -> str:
    """Return the file's text: the notice as '#' lines, then the kept words, one a line."""
    words = sorted({w for w in source.read_text(encoding="utf-8").split() if WORD.fullmatch(w)})
    head = [
        "# Common English words that rag's spelling correction never replaces: the lowercase words of",
        f"# {MIN_LETTERS} letters or more of SCOWL size 50, American, from Debian's wamerican package",
        "# (bench/english_words.py). Its copyright file follows.",
        "#",
    ]
    head += ["# " + line if line else "#" for line in notice.read_text(encoding="utf-8").splitlines()]
    return "\n".join(head + words) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=SOURCE, help="the word list, one word a line")
    ap.add_argument("--notice", type=Path, default=NOTICE, help="its copyright file")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    for path in (args.source, args.notice):
        if not path.is_file():
            sys.exit(f"{path} is missing — apt-get install wamerican, or pass --source and --notice")
    text = build(args.source, args.notice)
    args.out.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    words = sum(1 for line in text.splitlines() if not line.startswith("#"))
    print(f"{words} words, {args.out.stat().st_size:,} bytes -> {args.out}")


if __name__ == "__main__":
    main()
