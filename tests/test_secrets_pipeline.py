"""Secrets never enter the index, so they can never be retrieved, printed or sent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner
from conftest import write_tree

from rag import Index, ingest, search
from rag.answer.prompts import build_prompt
from rag.cli import main

AWS_KEY = "AKIA" + "Z7QW3RTY8UIOPLKJ"  # built from parts so scanners do not flag this file
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def secret_repo(root: Path) -> Path:
    return write_tree(
        root,
        {
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
        },
    )


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


# unquoted and config-style credentials, and files that hold nothing but credentials (values built from parts)
DB_PASS = "Zebra9" + "Pass4"
PROPS_PASS = "s3cr3t" + "Value"
ENV_PASS = "abcDEF" + "123xyz"
YAML_PASS = "hunter2" + "Secret99"
API_KEY = "a1b2c3d4" + "e5f6g7h8"
BASIC = "dXNlcjpw" + "YXNz"
AWS_SHORT = "abc123XYZ" + "short"


def config_repo(root: Path) -> Path:
    return write_tree(
        root,
        {
            ".aws/credentials": f"[default]\naws_secret_access_key = {AWS_SHORT}\n",
            ".pgpass": f"db:5432:app:app:{ENV_PASS}\n",
            ".git-credentials": f"https://me:{ENV_PASS}@github.com\n",
            ".docker/config.json": f'{{"auths": {{"registry.example.com": {{"auth": "{BASIC}"}}}}}}\n',
            "deploy/my.cnf": f"[client]\nuser = app\npassword = {DB_PASS}\n",
            "src/main/resources/application.properties": f"spring.datasource.password={PROPS_PASS}\n",
            "docker-compose.yml": f"services:\n  db:\n    environment:\n      - DB_PASSWORD={ENV_PASS}\n"
            f"      password: {YAML_PASS}\n",
            "scripts/backup.sh": f'export PGPASSWORD={ENV_PASS}\nAPI_KEY="{API_KEY}"\n'
            f"curl -H 'Authorization: Basic {BASIC}' https://backup.example.com\n",
            "app/settings.py": "import os\n\n\ndef database_password():\n"
            "    password = os.environ['DB_PASSWORD']\n    return password\n",
        },
    )


def test_config_credentials_never_reach_the_index_or_prompt(tmp_path: Path) -> None:
    report = ingest(config_repo(tmp_path / "r"))
    assert report.skipped["secret"] == 4  # .aws/credentials, .pgpass, .git-credentials, .docker/config.json
    assert report.redacted == {"password-assignment": 5, "api-key-assignment": 1, "basic-auth": 1}
    with Index(report.index_path) as index:
        hits = search(index, "database password api key authorization basic backup", k=10)
        prompt = build_prompt("what is the database password?", hits)
        assert any("os.environ['DB_PASSWORD']" in hit.chunk.text for hit in hits)  # code is left as is
    raw = report.index_path.read_bytes()
    for secret in (DB_PASS, PROPS_PASS, ENV_PASS, YAML_PASS, API_KEY, BASIC, AWS_SHORT):
        assert secret not in prompt.text
        assert secret.encode() not in raw
