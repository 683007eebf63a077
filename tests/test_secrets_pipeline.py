"""Secrets never enter the index, so they can never be retrieved, printed or sent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner
from conftest import write_tree

from rag import Index, ingest, search
from rag.cli import main
from rag.prompts import build_prompt

AWS_KEY = "AKIA" + "Z7QW3RTY8UIOPLKJ"  # built from parts so scanners do not flag this file
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def secret_repo(root: Path) -> Path:
    return write_tree(root, {
        ".env": f"AWS_ACCESS_KEY_ID={AWS_KEY}\n",
        ".env.example": "AWS_ACCESS_KEY_ID=put-your-key-here\n",
        "deploy/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n"
                         "-----END OPENSSH PRIVATE KEY-----\n",
        ".npmrc": "//registry.npmjs.org/:_authToken=secret\n",
        ".ragignore": "internal/\n",
        "internal/notes.md": "# Internal\n\nThe deploy password policy lives here.\n",
        "app/settings.py": f'AWS_KEY = "{AWS_KEY}"  # deploy key\nGITHUB_TOKEN = "{GITHUB}"\n'
                           'DATABASE = "postgres://admin:hunter2-Prod@db.internal:5432/app"\n\n\n'
                           'def deploy_settings():\n    return {"region": "eu-west-1"}\n',
    })


def test_secret_files_are_skipped_and_tokens_redacted(tmp_path: Path) -> None:
    repo = secret_repo(tmp_path / "r")
    report = ingest(repo)
    assert report.skipped["secret"] == 3  # .env, deploy/id_rsa, .npmrc
    assert report.skipped["ragignore"] == 1
    assert report.redacted == {"aws-access-key": 1, "github-token": 1, "url-password": 1}
    with Index(report.index_path) as index:
        assert set(index.files()) == {".env.example", ".ragignore", "app/settings.py"}
        hit = search(index, "deploy key github token database", k=1)[0]
        assert "[REDACTED:aws-access-key]" in hit.chunk.text
        prompt = build_prompt("what is the deploy key?", [hit])
    raw = report.index_path.read_bytes()
    for secret in (AWS_KEY, GITHUB, "hunter2-Prod"):
        assert secret not in prompt.text
        assert secret.encode() not in raw  # not in the chunk texts, terms or anything else stored
    with sqlite3.connect(report.index_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM terms WHERE term LIKE 'akia%'").fetchone()[0] == 0


def test_summary_line_counts_redactions_by_kind_without_printing_them(tmp_path: Path) -> None:
    repo = secret_repo(tmp_path / "r")
    result = CliRunner().invoke(main, ["ingest", str(repo)])
    assert result.exit_code == 0
    assert "secrets redacted: 1 aws-access-key, 1 github-token, 1 url-password" in result.output
    assert "3 secret" in result.output
    assert AWS_KEY not in result.output and GITHUB not in result.output
