"""Run secret redaction over the real corpora: speed, every finding (masked), and a planted-secrets check.

Usage: python bench/secret_scan.py [--python] [--tree DIR ...] [--no-planted]
  (corpora in ${RAG_CORPORA:-~/.cache/rag-corpora}); --python also scans the running interpreter's
  standard library with the site-packages inside it, --tree any other folder. Files are read as
  ingest reads them: no __pycache__ or .git, text under 1 MB. Each finding is one line
  `  path:line  kind  excerpt`, so two runs diff line by line.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CORPUS_NAMES  # noqa: E402
from rag.secrets import Finding, find_secrets, is_secret_file, redact  # noqa: E402

CORPORA = tuple(CORPUS_NAMES)  # the eight eval corpora (bench.common)
# kinds whose first characters are a public prefix (ghp_, AKIA, eyJ, ...) rather than secret material
SHOW_PREFIX = frozenset(
    {
        "aws-access-key",
        "github-token",
        "gitlab-token",
        "slack-token",
        "stripe-key",
        "openai-key",
        "anthropic-key",
        "jwt",
        "private-key",
        "pypi-token",
        "npm-token",
        "huggingface-token",
        "google-api-key",
        "google-oauth-secret",
        "dockerhub-token",
        "digitalocean-token",
        "vault-token",
        "grafana-token",
    }
)


def read_text(path: Path) -> str | None:
    """Return the file's text, or None for binaries and non-UTF-8 files."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def mask(kind: str, secret: str) -> str:
    """Show a secret's shape only: its public prefix for token kinds, then its length."""
    shown = secret.splitlines()[0][:4] if kind in SHOW_PREFIX else ""
    return f"{shown}…<{len(secret)} chars>"


def excerpt(text: str, findings: list[Finding], finding: Finding) -> str:
    """Return the finding's first line with every secret on it masked, trimmed around the finding."""
    line_start = text.rfind("\n", 0, finding.start) + 1
    line_end = text.find("\n", finding.start)
    line_end = len(text) if line_end == -1 else line_end
    out, pos = [], line_start
    for f in findings:
        if f.end <= line_start or f.start >= line_end:
            continue
        start = max(f.start, line_start)
        out.append(text[pos:start])
        out.append(f"«{mask(f.kind, text[f.start : f.end])}»")
        pos = min(f.end, line_end)
    out.append(text[pos:line_end])
    line = "".join(out).strip()
    return line if len(line) <= 160 else line[:157] + "..."


MAX_BYTES = 1_000_000  # ingest's default size limit (rag.sources.reading.DEFAULT_MAX_BYTES)
SKIP_DIRS = frozenset({"__pycache__", ".git", "node_modules"})


def tree_files(tree: Path) -> list[Path]:
    """List a tree's files as ingest would consider them: no caches, no symlinks, under the size limit."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not path.is_symlink() and path.stat().st_size <= MAX_BYTES:
                out.append(path)
    return out


def scan(root: Path, trees: list[Path], title: str) -> None:
    """Redact every text file of the trees; print figures and findings."""
    files = skipped = 0
    size = 0
    elapsed = 0.0
    by_kind: dict[str, int] = {}
    secret_files: list[str] = []
    print(f"== {title}")
    for corpus in trees:
        if not corpus.is_dir():
            print(f"missing corpus: {corpus}")
            continue
        for path in tree_files(corpus):
            rel = path.relative_to(root).as_posix()
            if is_secret_file(rel):
                secret_files.append(rel)
            text = read_text(path)
            if text is None:
                skipped += 1
                continue
            files += 1
            size += len(text.encode("utf-8"))
            t0 = time.perf_counter()
            redacted, counts = redact(text)
            elapsed += time.perf_counter() - t0
            assert redacted.count("\n") == text.count("\n"), rel
            if not counts:
                continue
            findings = find_secrets(text)
            for f in findings:
                line = text.count("\n", 0, f.start) + 1
                print(f"  {rel}:{line}  {f.kind}  {excerpt(text, findings, f)}")
            for kind, n in counts.items():
                by_kind[kind] = by_kind.get(kind, 0) + n
    mb = size / 1e6
    print(f"\nfiles scanned: {files} (skipped {skipped} binary/non-UTF-8)")
    print(f"size: {mb:.1f} MB   redact time: {elapsed:.2f} s   speed: {mb / elapsed:.0f} MB/s")
    print(f"findings by kind: {dict(sorted(by_kind.items())) or 'none'} (total {sum(by_kind.values())})")
    print(f"files is_secret_file() would skip ({len(secret_files)}): {secret_files or 'none'}")


def planted(root: Path) -> None:
    """Plant secrets of every kind in a copy of real text; count how many redact() finds."""
    # kind -> (text before, the secret, text after); secrets are built from parts so this file holds none
    plants: dict[str, tuple[str, str, str]] = {
        "private-key": (
            "",
            "-----BEGIN RSA PRIVATE KEY-----\n"
            + "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" * 3
            + "-----END RSA PRIVATE KEY-----",
            "",
        ),
        "aws-access-key": ("key_id = ", "AKIA" + "Z7QW3RT5YU8IOP2L", ""),
        "aws-secret-key": ("aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq3Hj9Lm2T", ""),
        "github-token": ("token: ", "ghp_" + "1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX", ""),
        "gitlab-token": ("GITLAB=", "glpat-" + "x8Yq2Lm4Np6Rs8Tu0Wv2", ""),
        "slack-token": ("SLACK=", "xoxb-" + "2419876543210-2419876543211-Zq8mN3pL7kR2vB9xT4cW1yHd", ""),
        "slack-webhook": (
            "url = 'https://hooks.slack.com/services/",
            "T0AB1CD2E/B0FG3HI4J/" + "q7Rk2Lm9Xw3Zp8Ns5Vb1Tc6Y",
            "'",
        ),
        "stripe-key": ("stripe.api_key = '", "sk_live_" + "51HqL2eKx9Zb7Vm3Np4Rt8Wy", "'"),
        "openai-key": ("OPENAI_API_KEY=", "sk-proj-" + "Ab3dEf7hIj1lMn5pQr9tUv2xYz4BcD6fGh8jKl0n", ""),
        "anthropic-key": ("ANTHROPIC_API_KEY=", "sk-ant-" + "api03-Xy7Kp2Lm9Qw4Er6Ty1Ui3Op5As8Df0Gh2Jk4", ""),
        "jwt": (
            "Authorization: Bearer ",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "",
        ),
        "url-password": ("DATABASE_URL = 'postgres://app:", "Tr0ub4dor&3x", "@db.internal:5432/app'"),
        "bearer-token": (
            "headers = {'Authorization': 'Bearer ",
            "abcdef0123456789" + "abcdef0123456789",
            "'}",
        ),
        "password-assignment": ('DB_PASSWORD = "', "Tr0ub4dor&3-" + "xkcd", '"'),
        "command-line-password": ("mysql -u root -p", "SuperSecret" + "123", " app < dump.sql"),
        "google-api-key": ("GOOGLE_MAPS_KEY = '", "AIza" + "SyB7xK2mQ9pL4vN8wR3tZ6yC1dF5gH0jE2k", "'"),
        "huggingface-token": ("HF_TOKEN=", "hf_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYz2", ""),
        "npm-token": (
            "//registry.npmjs.org/:_authToken=",
            "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "",
        ),
        "sendgrid-key": (
            "SENDGRID_API_KEY=",
            "SG." + "aB3dE5fG7hJ9kL2mN4pQ6r.sT8uV0wX2yZ4aB6cD8eF0gH2iJ4kL6mN8oP0qR2sT4u",
            "",
        ),
        "azure-storage-key": (
            "AccountName=acct;AccountKey=",
            ("aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY" + "z2cD4eF6gH8iJ0kL2mN4oP6qR8sT0uV2wX4" * 2)[:86] + "==",
            ";EndpointSuffix=core.windows.net",
        ),
        "api-key-assignment": ('API_KEY="', "a1b2c3d4" + "e5f6g7h8", '"'),
        "token-assignment": ("auth_token = ", "7fGh2Jk9" + "Lm4Np", ""),
        "basic-auth": ("Authorization: Basic ", "dXNlcjpw" + "YXNz", ""),
        "netrc-password": ("machine api.example.com login me password ", "Zq8mN3" + "pL7kR2", ""),
    }
    # more of the same kinds, in the spellings an audit found leaking: unquoted, config-file, any case
    more: list[tuple[str, str, str, str]] = [
        ("password-assignment", "password = ", "Zebra9" + "Pass4", ""),  # my.cnf, ini
        ("password-assignment", "spring.datasource.password=", "s3cr3t" + "Value", ""),  # .properties
        ("password-assignment", "      - DB_PASSWORD=", "abcDEF" + "123xyz", ""),  # docker-compose
        ("password-assignment", "export PGPASSWORD=", "abcDEF" + "124xyz", ""),
        ("password-assignment", "password: ", "hunter2" + "Secret99", ""),  # YAML
        ("password-assignment", "aws_secret_access_key = ", "abc123XYZ" + "short", ""),  # not AWS's 40 chars
        ("password-assignment", "client_secret = ", "Gx7-kP2" + "qL9mZ", ""),
        ("api-key-assignment", "api_key: ", "9f8e7d6c" + "5b4a3921", ""),
        ("api-key-assignment", "apiKey: '", "Xk9mQ2vL" + "p4Rt", "'"),
        ("api-key-assignment", "private_key = ", "4c0883a6" + "9102937d6231471b5dbb6204fe512961", ""),
        ("token-assignment", "access_token: ", "ya29.a0AfH6" + "SMBx7kQ", ""),
        ("basic-auth", '    "auth": "', "dXNlcjpwYXNz" + "d29yZA==", '"'),  # docker config.json
        # escaped, encoded, split over lines, and formats the first rules missed
        (
            "password-assignment",
            '    "    \\"password\\": \\"',
            "Hv4tR9" + "xQ2mWx",
            '\\",\\n",',
        ),  # notebook JSON
        ("password-assignment", '{"env": "DEBUG=0\\nDB_PASSWORD=', "Hv4tR9" + "xQ2mWy", '\\nPORT=80"}'),
        (
            "private-key",
            "    client-key-data: ",
            base64.b64encode(
                (
                    "-----BEGIN "
                    + "RSA PRIVATE KEY-----\n"
                    + "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" * 3
                    + "-----END RSA PRIVATE KEY-----\n"
                ).encode()
            ).decode(),
            "",
        ),
        ("password-assignment", "export DB_PASSWORD=\\\n", "Hv4tR9" + "xQ2mWz", ""),
        ("password-assignment", "  password: >\n    ", "Hv4tR9" + "xQ2mWw", "\n  host: db"),
        ("pgpass-password", 'echo "db.internal:5432:app:deploy:', "Hv4tR9" + "xQ2mWv", '" > ~/.pgpass'),
        (
            "aws-secret-key",
            "deploy,,AKIA" + "Z7QW3RT5YU8IOP2M,",
            "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq3Hj9Lm2U",
            "",
        ),
        (
            "azure-key",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey=",
            "q7Rk2Lm9Xw3Zp8Ns5Vb1" + "Tc6YaB3dE5fG7hJ9kL2m=",
            "",
        ),
        ("webhook-secret", "STRIPE_WEBHOOK = '", "whsec_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY", "'"),
        ("password-assignment", "define('DB_PASSWORD', '", "Hv4tR9" + "xQ2mWu", "');"),
        ("token-assignment", "token = os.getenv('GITHUB_TOKEN', '", "t0K3n" + "Vx9Qw2Lm8Rz4", "')"),
        ("command-line-password", 'subprocess.run(["mysql", "-u", "root", "-p', "Hv4tR9" + "xQ2mWt", '"])'),
        # a value on the line below its name, a typed setting, a subscript
        ("password-assignment", 'DB_PASSWORD = (\n    "', "Hv4tR9" + "xQ2mWs", '"\n)'),
        ("password-assignment", 'export const SMTP_PASSWORD =\n  "', "Hv4tR9" + "xQ2mWr", '";'),
        ("password-assignment", '    db_password: SecretStr = "', "Hv4tR9" + "xQ2mWq", '"'),
        ("password-assignment", 'os.environ["DB_PASSWORD"] = "', "Hv4tR9" + "xQ2mWp", '"'),
        # tokens known by their prefix alone, with no name beside them
        (
            "pypi-token",
            "twine upload -u __token__ -p ",
            "pypi-AgEIcHlwaS5vcmc"
            + "Okd2vlDy6QLF5CNu7jxyjDp1WH6g7M3lcxX001hX5x_eukms_mQP6ZHQwJEvhLxDb45eV4o",
            " dist/*",
        ),
        ("gitlab-token", "git clone https://ci:", "gldt-" + "1YMEx09AFaqkeY5q8L9d", "@gitlab.com/a/b.git"),
        (
            "slack-token",
            "App(token='",
            "xapp-1-A0LFMY0ZYA-6915975965903-"
            + "8dd63fb13e173c6535b4fa4091f9a8ec26ad7738a4dae08daab449813d80de7c",
            "')",
        ),
        ("huggingface-token", "login('", "api_org_" + "iTwJZzxESBRxLGPeljEkxVjqDjNdRbTHMa", "')"),
        (
            "google-oauth-secret",
            '{"web": {"client_secret": "',
            "GOCSPX-" + "S9HSWZShNK3X6IZK6MR-jBFhCkg0",
            '"}}',
        ),
        (
            "dockerhub-token",
            "echo ",
            "dckr_pat_" + "e5lxM3JQAf3y1oTDsvwwAxRYvwk",
            " | docker login --password-stdin",
        ),
        (
            "digitalocean-token",
            "doctl auth init --access-token ",
            "dop_v1_" + "a0be6b077dafdafb27cce4b7892d6ba9cefdb4fa84d94d238c2616f662486781",
            "",
        ),
        (
            "vault-token",
            "vault login ",
            "hvs."
            + "CAESILeak0JN4QDZzd7HFyKSr91xhsTSiWesG2pyHmgNX9vuUc-gcTb3gmfIRKBnCNa3Htqg9UJnkkpbtpGiUK7-dIKL0",
            "",
        ),
        (
            "azure-client-secret",
            'ClientSecretCredential(t, c, "',
            "8qN8Q~" + "8-bFe0KpZkdeXRAslSfAOUHhP0u~fpfKTZ",
            '")',
        ),
        ("grafana-token", "api(auth='", "glsa_" + "sRTiaG6RLtg9qlNG94DQVSIipMp0ech9_783a9ec4", "')"),
        # a secret beside its key id, as a constructor's positional arguments
        (
            "twilio-api-secret",
            'Client("SK' + 'ece658bb363f69b6dd6756b98f5b9bd6", "',
            "UBrNuPd5njZkRCED" + "s45yWz2dBAnX3mv5",
            '")',
        ),
        (
            "alibaba-secret-key",
            'AcsClient("LTAI' + 'XDTY6Nd5HOdqqBoB", "',
            "inQmK530fi6qaX9" + "Dg1RnqI4sCKuewc",
            '")',
        ),
        (
            "tencent-secret-key",
            'Credential("AKID' + 'Mto8oYkkxHqwRgVlxoqLKl0XrkDBPhYF", "',
            "8fmtA90cFjrzJUmt" + "zLVHhscVpwPBiAFx",
            '")',
        ),
        (
            "gcs-hmac-secret",
            'client("s3", "auto", None, True, None, None, "GOOG1E'
            + 'HWHM2ZDZYIN62MWSGU4O71CX5V6O3ASZU3NOOUIWQFFG5R1VIC40ZFE", "',
            "QFT8OUCagYtnV29vJbSW" + "EUPJFPKJdosyGwBVvsV5",
            '")',
        ),
    ]
    plants_all = [(kind, *plant) for kind, plant in plants.items()] + more
    base = root / "flask-3.1.3" / "src" / "flask" / "app.py"
    lines = base.read_text(encoding="utf-8").splitlines(keepends=True) if base.exists() else ["x = 1\n"] * 500
    step = max(1, len(lines) // (len(plants_all) + 1))
    for i, (_, before, secret, after) in enumerate(plants_all, start=1):
        lines.insert(i * step, before + secret + after + "\n")
    text = "".join(lines)
    redacted, counts = redact(text)
    print(f"\nplanted-secrets check ({len(plants_all)} secrets, every kind, in a copy of flask/app.py):")
    expected: dict[str, int] = {}
    leaks = 0
    for kind, before, secret, _ in plants_all:
        expected[kind] = expected.get(kind, 0) + 1
        leaked = any(part in redacted for part in secret.splitlines())
        leaks += leaked
        if leaked:
            print(f"  LEAKED {kind:21} {before.strip()} {mask(kind, secret)}")
    for kind, n in expected.items():
        print(f"  {kind:21} found {min(counts.get(kind, 0), n)}/{n}")
    found = len(plants_all) - leaks
    other_kind = sum(max(0, n - counts.get(kind, 0)) for kind, n in expected.items()) - leaks
    extra = sum(counts.values()) - found
    same_lines = redacted.count("\n") == text.count("\n")
    print(
        f"  found {found}/{len(plants_all)} planted ({other_kind} under another kind), {extra} extra; "
        f"line count unchanged: {same_lines}"
    )


def main() -> None:
    """Run the scans and the planted check."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="store_true", help="also scan the stdlib and its site-packages")
    parser.add_argument("--tree", type=Path, action="append", default=[], help="also scan this folder")
    parser.add_argument("--no-corpora", action="store_true", help="skip the eight eval corpora")
    parser.add_argument("--no-planted", action="store_true", help="skip the planted-secrets check")
    args = parser.parse_args()
    root = Path(os.environ.get("RAG_CORPORA", "~/.cache/rag-corpora")).expanduser()
    if not args.no_corpora:
        scan(root, [root / name for name in CORPORA], f"the eight corpora in {root}")
    if args.python:
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        scan(stdlib, [stdlib], f"the standard library and site-packages in {stdlib}")
    for tree in args.tree:
        scan(tree, [tree], str(tree))
    if not args.no_planted:
        planted(root)


if __name__ == "__main__":
    main()
