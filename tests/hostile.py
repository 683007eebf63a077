"""Build a hostile repository on disk: shapes of input that break naive indexers."""

from __future__ import annotations

import os
import random
from pathlib import Path


def build_hostile_repo(root: Path, big_line_mb: int = 5, seed: int = 7) -> Path:
    """Create the hostile tree below root and return root."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    for i in range(5):  # random binary files, some with text-looking names
        (root / f"blob{i}{'.txt' if i % 2 else '.bin'}").write_bytes(
            bytes(rng.randrange(256) for _ in range(4096))
        )
    (root / "one_line.txt").write_text("word " * (big_line_mb * 200_000))  # one huge line
    (root / "empty_lines.txt").write_text("\n" * 100_000)
    (root / "sparse.txt").write_text("\n" * 50_000 + "needle in the middle of nothing\n" + "\n" * 50_000)
    deep = root
    for i in range(60):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("# Deep\n\nburied treasure lives at the bottom of the tree\n")
    os.symlink(root, root / "loop")  # a symlink loop
    os.symlink("/etc", root / "etc_link")  # a symlink out of the repo
    (root / "new\nline.txt").write_text("a file whose name has a newline\n")
    (root / os.fsdecode(b"bad\xffname.txt")).write_text("a file whose name is not utf-8\n")
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e recipe\n".encode("latin-1"))
    (root / "not_python.py").write_text(
        "<html>\n  {% if user %}\n  <p>hello {{ user }}</p>\n  {% endif %}\n</html>\n"
    )
    (root / "py2.py").write_text(
        "def main():\n    print 'hello'\n\n\nclass Old:\n    def f(self):\n        exec 'x'\n"
    )
    (root / "broken.js").write_text(
        "function open() {\n  if (x) {\n    return `template ${unclosed\n}\n\nconst re = /}{/;\n"
        "export function after() { return 'still findable'; }\n"
    )
    (root / "unclosed.md").write_text(
        "# Title\n\nintro text\n\n```python\n# not a heading\ncode()\n\n## Also not\n"
    )
    return root


def readable_lines(root: Path) -> dict[str, set[int]]:
    """Map each small text file (relative path) to its non-blank line numbers."""
    out: dict[str, set[int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d for d in dirnames if d not in (".rag",) and not os.path.islink(os.path.join(dirpath, d))
        ]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            data = path.read_bytes()
            if b"\0" in data[:8192] or len(data) > 1_000_000 or not data.strip():
                continue
            text = data.decode("utf-8", "replace")
            rel = os.path.relpath(path, root)
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                continue  # a name that is not UTF-8 is skipped and counted
            lines = {i for i, line in enumerate(text.split("\n"), 1) if line.strip()}
            if lines:
                out[rel] = lines
    return out
