"""Shared fixtures: a clean environment for every test, and small repositories on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

WORKED_EXAMPLE = {
    "refunds.txt": "Refunds go back to the original card after billing approves them.\n",
    "team.txt": "For billing, ask billing support or the billing team.\n",
    "invoices.txt": "Billing sends invoices monthly.\n",
    "plans.txt": "Billing plans renew each year.\n",
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Remove user settings and keys, and point user state at a temporary folder."""
    for name in ("ANTHROPIC_API_KEY", "RAG_BACKEND", "RAG_MODEL", "RAG_INDEX", "RAG_GROUPS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files (text or bytes) below root and return root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


@pytest.fixture
def worked_repo(tmp_path: Path) -> Path:
    """The four-file worked example of the original design."""
    return write_tree(tmp_path / "billing", WORKED_EXAMPLE)
