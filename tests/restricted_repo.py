"""A repository with a restricted folder (.rag-access), for the tests of what a caller outside its
group sees: the public files, the folder's files and secrets, and how to build and change them."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from rag.indexing.pipeline import IngestOptions, ingest

PUBLIC = {
    "app/auth.py": 'def login(user, password):\n    """Check the password and log the user in."""\n'
    "    return check(user, password)\n",
    "app/settings.py": 'password = "app-secret-value-1"\n',
    "docs/guide.md": "# Guide\n\nLog in, then ask.\n",
    "logo.png": b"\x89PNG\r\n\x1a\n",
}
# the restricted folder: indexed files (one with a redacted secret), a skipped binary, a skipped secret
# file and a skipped folder
HR = {
    "hr/salaries.py": 'def raise_salary(person, percent):\n    """Raise a salary."""\n    return percent\n',
    "hr/config.py": 'password = "hr-secret-value-22"\n',
    "hr/review.md": "# Reviews\n\nOnce a year.\n",
    "hr/scan.pdf": b"%PDF-1.6\n\x00\x01",
    "hr/.env": "BANK_TOKEN=abc\n",
    "hr/node_modules/left-pad/index.js": "module.exports = 1\n",
}
ACCESS = "hr/ hr\n"
# what differs between two indexes whatever they hold: where they are, what they were built from, when
PLACE = ("index", "repository", "built_at")


def build(root: Path, files: dict[str, str | bytes], access: str = ACCESS) -> Path:
    return ingest(
        write_tree(root, {**files, ".rag-access": access}), options=IngestOptions(workers=1)
    ).index_path


def change_files(full: Path, without: Path, opened: Path) -> None:
    """Edit and add a public file everywhere, a restricted one where the folder is: stale lists to compare."""
    for index in (full, without, opened):
        write_tree(
            index.parent.parent,
            {"app/auth.py": "def login():\n    return None  # edited\n", "app/new.py": "x = 1\n"},
        )
    for index in (full, opened):
        write_tree(
            index.parent.parent,
            {"hr/salaries.py": "def raise_salary():\n    return 0  # edited\n", "hr/bonus.py": "y = 2\n"},
        )
