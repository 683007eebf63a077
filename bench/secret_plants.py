"""Plant generated credentials of many kinds in many containers, with look-alikes of each kind,
and measure what redaction finds and what it wrongly takes, beside detect-secrets on the same files.

Usage: python bench/secret_plants.py [--seed 43] [--variants 3] [--detect-secrets] [--misses] [--keep DIR]

Every credential is made at run time from a seeded generator (random characters, random key
bodies: never a real credential), so two runs with the same seed plant the same files. Each file
is one container (a Python module, a Kubernetes manifest, a SQL script, a notebook, ...) holding
one credential, placed the way that container keeps one (a name, a header, a flag, a column, a
call's argument, a URL's user, literals joined by `+`), and one look-alike of the same kind (a
hash in a lock file, a UUID, a commit SHA, a placeholder, a public key, a sentence). Each
(kind, container) pair is planted in `--variants` placements.

A plant is found when none of its secret parts (8+ characters each) is left in the redacted
text; a look-alike is a false alarm when its value is no longer there; any other redaction in a
file is counted apart ("other"). detect-secrets (the `bench` extra) is scored on the same files:
a plant is found when it reports a line of the plant, a look-alike is flagged when it reports
one of the look-alike's lines.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import string
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.secrets import find_secrets, redact  # noqa: E402

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "023456789acdefghjklmnpqrstuvwxyz"
SYMBOLS = "!#%^&*-_=+@"


def chars(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(rng: random.Random, n_bytes: int, urlsafe: bool = False) -> str:
    raw = rng.randbytes(n_bytes)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=") if urlsafe else base64.b64encode(raw).decode()


def pem(label: str, body: str, dashes: int = 5, headers: str = "") -> str:
    d = "-" * dashes
    pad = " " if dashes == 4 else ""
    return f"{d}{pad}BEGIN {label}{pad}{d}\n{headers}{body}\n{d}{pad}END {label}{pad}{d}"


def key_body(rng: random.Random, n_bytes: int, prefix: bytes = b"") -> str:
    data = base64.b64encode(prefix + rng.randbytes(n_bytes)).decode()
    return "\n".join(data[i : i + 64] for i in range(0, len(data), 64))


# ---- kinds: a credential made at run time, the names it goes by, and its look-alikes ---------------


@dataclass(frozen=True)
class Kind:
    name: str
    make: Callable[[random.Random], str]
    names: tuple[str, ...]  # the names it is kept under (any case and separator)
    lookalikes: tuple[tuple[str, Callable[[random.Random], str]], ...]  # (name, value) that must stay
    block: bool = False  # several lines (key material)
    url: bool = False  # a URL holding the credential in its user part


def _sha1(rng: random.Random) -> str:
    return hashlib.sha1(rng.randbytes(16)).hexdigest()


def _base64_starting(rng: random.Random) -> str:
    """32 random bytes in base64; every second one made to start with `/` or `+` (1 in 32 does)."""
    value = b64(rng, 32)
    while rng.random() < 0.5 and value[0] not in "/+":
        value = b64(rng, 32)
    return value


def _jwt(rng: random.Random) -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = json.dumps({"sub": str(rng.randrange(10**6)), "iat": 1700000000 + rng.randrange(10**6)})
    payload = base64.urlsafe_b64encode(claims.encode()).decode().rstrip("=")
    return f"{header}.{payload}.{b64(rng, 32, urlsafe=True)}"


def _password(rng: random.Random) -> str:
    return chars(rng, B62 + SYMBOLS, rng.randrange(16, 25))


KINDS = (
    Kind(
        "aws-secret-key",
        lambda r: chars(r, B62 + "/+", 40),
        ("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "secretAccessKey"),
        (("aws_secret_access_key", lambda r: "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"),),
    ),
    Kind(
        "github-token",
        lambda r: "ghp_" + chars(r, B62, 36),
        ("GITHUB_TOKEN", "gh_token", "githubToken"),
        (("GITHUB_TOKEN", lambda r: "ghp_" + "x" * 36), ("commit", _sha1)),
    ),
    Kind(
        "api-key",
        lambda r: chars(r, B62, 32),
        ("API_KEY", "apiKey", "X-Api-Key", "service_api_key"),
        (
            ("API_KEY", lambda r: "<your-api-key>"),
            ("request_id", lambda r: str(uuid.UUID(int=r.getrandbits(128)))),
        ),
    ),
    Kind(
        "hex-secret",
        lambda r: chars(r, HEX, 64),
        ("SECRET_KEY", "webhook_secret", "signingSecret", "HMAC_KEY"),
        (("checksum", lambda r: "sha256:" + hashlib.sha256(r.randbytes(8)).hexdigest()), ("rev", _sha1)),
    ),
    Kind(
        "base64-secret",
        _base64_starting,
        ("ENCRYPTION_KEY", "encryption_key", "masterKey", "JWT_SECRET"),
        (
            ("integrity", lambda r: "sha512-" + b64(r, 64)),
            ("ENCRYPTION_KEY", lambda r: base64.b64encode(b"replace-me-in-production").decode()),
        ),
    ),
    Kind(
        "password",
        _password,
        ("DB_PASSWORD", "password", "dbPassword", "MYSQL_ROOT_PASSWORD", "smtp_pass"),
        (
            ("password_hint", lambda r: "Use at least 12 characters"),
            ("DB_PASSWORD", lambda r: "${DB_PASSWORD}"),
            ("password", lambda r: "changeme"),
        ),
    ),
    Kind(
        "jwt",
        _jwt,
        ("id_token", "ACCESS_TOKEN", "authToken"),
        (
            ("id_token", lambda r: "<jwt>"),
            ("version", lambda r: f"{r.randrange(1, 9)}.{r.randrange(20)}.{r.randrange(40)}"),
        ),
    ),
    Kind(
        "opaque-token",
        lambda r: b64(r, 30, urlsafe=True),
        ("access_token", "AUTH_TOKEN", "refreshToken", "X-Auth-Token"),
        # a random value under any name is redacted (rag.secrets.anywhere); a digest in an etag is public
        (("access_token", lambda r: "YOUR_ACCESS_TOKEN"), ("etag", lambda r: chars(r, HEX, 64))),
    ),
    Kind(
        "rsa-private-key",
        lambda r: pem("RSA PRIVATE KEY", key_body(r, 600)),
        ("private_key", "TLS_KEY", "signingKey"),
        (
            ("public_key", lambda r: pem("PUBLIC KEY", key_body(r, 270))),
            ("tls_cert", lambda r: pem("CERTIFICATE", key_body(r, 700))),
        ),
        block=True,
    ),
    Kind(
        "openssh-private-key",
        lambda r: pem("OPENSSH PRIVATE KEY", key_body(r, 300, b"openssh-key-v1\0")),
        ("ssh_private_key", "DEPLOY_KEY", "sshKey"),
        (("ssh_public_key", lambda r: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + b64(r, 24) + " deploy@ci"),),
        block=True,
    ),
    Kind(
        "pgp-private-key",
        lambda r: pem(
            "PGP PRIVATE KEY BLOCK", key_body(r, 500) + "\n=" + b64(r, 3), headers="Version: GnuPG v2\n\n"
        ),
        ("gpg_private_key", "SIGNING_KEY", "pgpKey"),
        (("gpg_public_key", lambda r: pem("PGP PUBLIC KEY BLOCK", key_body(r, 400) + "\n=" + b64(r, 3))),),
        block=True,
    ),
    Kind(
        "framed-private-key",
        lambda r: r.choice(
            [
                pem("SSH2 ENCRYPTED PRIVATE KEY", key_body(r, 400), 4, 'Comment: "rsa-key-20261204"\n'),
                pem("EC PRIVATE KEY", key_body(r, 120), 3),
                pem("ENCRYPTED PRIVATE KEY", key_body(r, 300), 6),
            ]
        ),
        ("client_key", "SERVER_KEY", "privateKey"),
        (("ca_cert", lambda r: pem("CERTIFICATE", key_body(r, 500), 4)),),
        block=True,
    ),
    Kind(
        "age-secret-key",
        lambda r: "AGE-SECRET-KEY-1" + chars(r, BECH32, 58).upper(),
        ("AGE_KEY", "age_identity", "sopsAgeKey"),
        (("age_recipient", lambda r: "age1" + chars(r, BECH32, 58)),),
    ),
    Kind(
        "xprv-key",
        lambda r: "xprv9s21ZrQH143K" + chars(r, BASE58, 95),
        ("wallet_key", "HD_MASTER_KEY", "xprvKey"),
        (("xpub", lambda r: "xpub661MyMwAqRbc" + chars(r, BASE58, 95)),),
    ),
    Kind(
        "url-token",
        lambda r: r.choice(
            [
                f"https://{chars(r, B62, 40)}@github.com/acme/deploy.git",
                f"https://oauth2:{b64(r, 20, urlsafe=True)}@gitlab.example.com/acme/app.git",
                f"postgres://app:{chars(r, B62, 24)}@db.internal:5432/app",
            ]
        ),
        ("REPO_URL", "databaseUrl", "remote"),
        (
            ("REPO_URL", lambda r: "https://git@github.com/acme/deploy.git"),
            ("DATABASE_URL", lambda r: "postgres://app:${DB_PASSWORD}@db.internal:5432/app"),
        ),
        url=True,
    ),
    Kind(
        "session-secret",
        lambda r: b64(r, 32, urlsafe=True),
        ("SESSION_SECRET", "session_key", "cookieSecret"),
        (("session_id", lambda r: str(uuid.UUID(int=r.getrandbits(128)))),),
    ),
    Kind(
        "stripe-key",
        lambda r: "sk_live_" + chars(r, B62, 24),
        ("STRIPE_SECRET_KEY", "stripe_key", "stripeApiKey"),
        (("STRIPE_PUBLISHABLE_KEY", lambda r: "pk_live_" + chars(r, B62, 24)),),
    ),
    Kind(
        "basic-auth",
        lambda r: base64.b64encode(f"deploy:{chars(r, B62, 20)}".encode()).decode(),
        ("Authorization: Basic", "auth", "basicAuth"),
        (("Authorization: Basic", lambda r: "<credentials>"),),
    ),
)


# ---- containers: the files real repositories keep credentials in --------------------------------------


def _pieces(value: str) -> list[str]:
    """The parts of a planted value that must not survive (8+ characters each)."""
    if "://" in value:
        rest = value.split("://", 1)[1].rsplit("@", 1)[0]
        return [p for p in rest.split(":") if len(p) >= 8]
    return [line.strip() for line in value.splitlines() if len(line.strip()) >= 8]


def split_in_two(value: str, rng: random.Random) -> tuple[str, str]:
    """The value in two literals, cut at random (short values: whole, then an empty literal)."""
    if len(value) < 12:
        return value, ""
    cut = rng.randrange(4, len(value) - 4)
    return value[:cut], value[cut:]


@dataclass(frozen=True)
class Container:
    name: str
    ext: str
    # (name, value, variant, rng) -> the lines holding it; multi-line values too
    place: Callable[[str, str, int, random.Random], str]
    wrap: Callable[[str], str] = lambda body: body
    named: int = 0  # the placement under a name, where a look-alike goes


def _snake(name: str) -> str:
    """The name in snake case (apiKey, X-Api-Key, API_KEY: api_key)."""
    name = name.replace("-", "_").replace(":", "").replace(" ", "_")
    if not name.isupper() and not name.islower():
        name = "".join(
            "_" + c if c.isupper() and i and name[i - 1].islower() else c for i, c in enumerate(name)
        )
    return name.lower().strip("_")


def _header(name: str) -> tuple[str, str] | None:
    """A header's name and the value's prefix when `name` is one (`X-Api-Key`, `Authorization: Basic`)."""
    if name.startswith("Authorization:"):
        return "Authorization", name.split(":", 1)[1].strip() + " "
    if name.startswith("X-"):
        return name, ""
    return None


def py_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f'{_snake(name).upper()} = """{value}\n"""'
    header = _header(name)
    if header:
        return f'HEADERS = {{"{header[0]}": "{header[1]}{value}", "Accept": "application/json"}}'
    var = _snake(name)
    match variant % 5:
        case 0:
            return f'{var.upper()} = "{value}"'
        case 1:
            return f'SETTINGS = {{\n    "{var}": "{value}",\n    "timeout": 30,\n}}'
        case 2:
            a, b = split_in_two(value, rng)
            return f'{var} = "{a}" + "{b}"'
        case 3:
            calls = [
                f'cache = redis.Redis("cache.internal", 6379, 0, "{value}")',
                f'auth = requests.auth.HTTPBasicAuth("deploy", "{value}")',
                f'server.login("alerts@example.com", "{value}")',
                f'conn = pymysql.connect("db.internal", "app", "{value}", "orders")',
            ]
            return calls[rng.randrange(len(calls))]
        case _:
            return f'{var} = os.environ.get("{var.upper()}", "{value}")'


def js_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"export const {_snake(name).upper()} = `{value}\n`;"
    header = _header(name)
    if header:
        return f'const headers = {{ "{header[0]}": "{header[1]}{value}" }};'
    camel = _snake(name).split("_")
    camel_name = camel[0] + "".join(w.title() for w in camel[1:])
    match variant % 3:
        case 0:
            return f'const {camel_name} = "{value}";'
        case 1:
            return f"module.exports = {{\n  port: 8080,\n  {camel_name}: '{value}',\n}};"
        case _:
            a, b = split_in_two(value, rng)
            return f"const {camel_name} =\n  '{a}' +\n  '{b}';"


def ts_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"export const {_snake(name)}: string = `{value}\n`;"
    return f'export const {_snake(name).upper()}: string = "{value}";'


def go_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"const {_snake(name)} = `{value}\n`"
    if variant % 2:
        return f'os.Setenv("{_snake(name).upper()}", "{value}")'
    return f'const {_snake(name).title().replace("_", "")} = "{value}"'


def java_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        body = '\\n" +\n        "'.join(value.splitlines())
        return f'    private static final String {_snake(name).upper()} =\n        "{body}";'
    if variant % 3 == 2:
        return f'    Connection c = DriverManager.getConnection("jdbc:mysql://db/app", "app", "{value}");'
    return f'    private static final String {_snake(name).upper()} = "{value}";'


def cs_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f'        var {_snake(name)} = @"{value}";'
    if variant % 3 == 2:
        return f'        var credential = new NetworkCredential("deploy", "{value}");'
    return f'        private const string {_snake(name).title().replace("_", "")} = "{value}";'


def rb_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"{_snake(name).upper()} = <<~KEY\n{value}\nKEY"
    return f"config.{_snake(name)} = '{value}'" if variant % 2 else f"{_snake(name).upper()} = '{value}'"


def php_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"${_snake(name)} = '{value}';"
    match variant % 3:
        case 0:
            return f"define('{_snake(name).upper()}', '{value}');"
        case 1:
            return f"    '{_snake(name)}' => '{value}',"
        case _:
            return f'$pdo = new PDO("mysql:host=db;dbname=app", "app", "{value}");'


def rs_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f'const {_snake(name).upper()}: &str = r#"{value}"#;'
    return f'const {_snake(name).upper()}: &str = "{value}";'


def sh_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"cat > ~/.ssh/deploy_key <<'EOF'\n{value}\nEOF"
    header = _header(name)
    if header:
        return f'curl -sS -H "{header[0]}: {header[1]}{value}" https://api.example.com/v1/deploys'
    match variant % 4:
        case 0:
            return f"export {_snake(name).upper()}={value}"
        case 1:
            return f"mytool deploy --{_snake(name).replace('_', '-')} {value} --region eu-west-1"
        case 2:
            return f'{_snake(name).upper()}="{value}" ./run-migrations.sh'
        case _:
            return f"mysql -h db.internal -u root -p'{value}' app < schema.sql"


def dockerfile_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return "RUN printf '%s' '" + value.replace("\n", "\\n") + "' > /root/.ssh/id_key"
    return (
        f"ENV {_snake(name).upper()}={value}" if variant % 2 == 0 else f"ARG {_snake(name).upper()}={value}"
    )


def _yaml_block(value: str, indent: int) -> str:
    pad = " " * indent
    return "|\n" + "\n".join(pad + line for line in value.splitlines())


def compose_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"      {_snake(name).upper()}: {_yaml_block(value, 8)}"
    return (
        f"      - {_snake(name).upper()}={value}"
        if variant % 2
        else f'      {_snake(name).upper()}: "{value}"'
    )


def k8s_env_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"        - name: {_snake(name).upper()}\n          value: {_yaml_block(value, 12)}"
    if variant % 2:
        return f'        - value: "{value}"\n          name: {_snake(name).upper()}'
    return f'        - name: {_snake(name).upper()}\n          value: "{value}"'


def k8s_secret_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    key = _snake(name).replace("_", "-")
    if variant % 2:
        return f"data:\n  {key}: {base64.b64encode(value.encode()).decode()}"
    if "\n" in value:
        return f"stringData:\n  {key}: {_yaml_block(value, 4)}"
    return f'stringData:\n  {key}: "{value}"'


def ecs_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    entry = {"name": _snake(name).upper(), "value": value}
    if variant % 2:
        entry = {"value": value, "name": _snake(name).upper()}
    return json.dumps({"environment": [{"name": "PORT", "value": "8080"}, entry]}, indent=2)[1:-1]


def tf_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"{_snake(name)} = <<EOT\n{value}\nEOT"
    return f'  {_snake(name)} = "{value}"'


def yaml_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"  {_snake(name)}: {_yaml_block(value, 4)}"
    if variant % 2:
        return f"  {_snake(name)}:\n    {value}"  # the value on the line below its name
    return f"  {_snake(name)}: {value}"


def json_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    return json.dumps({"service": {"region": "eu-west-1", name.split(":")[0].strip(): value}}, indent=2)[1:-1]


def toml_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f'{_snake(name)} = """\n{value}\n"""'
    return f'{_snake(name)} = "{value}"'


def ini_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"app.{_snake(name).replace('_', '.')}=" + value.replace("\n", "\\n\\\n    ")
    return f"app.{_snake(name).replace('_', '.')}={value}" if variant % 2 else f"{_snake(name)} = {value}"


def xml_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    tag = _snake(name).replace("_", "-")
    if "\n" in value or variant % 2 == 0:
        return f"  <{tag}>{value}</{tag}>"
    return f'  <add key="{name.split(":")[0].replace(" ", "")}" value="{value}" />'


def sql_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"INSERT INTO service_keys (service, {_snake(name)}) VALUES ('billing', '{value}');"
    match variant % 3:
        case 0:
            return f"CREATE USER 'billing'@'%' IDENTIFIED BY '{value}';"
        case 1:
            return f"ALTER ROLE billing WITH LOGIN PASSWORD '{value}';"
        case _:
            return f"SET @{_snake(name)} = '{value}';"


def md_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    if "\n" in value:
        return f"Put the key in `deploy_key`:\n\n```\n{value}\n```"
    if variant % 2:
        return f"| service | {_snake(name)} | region |\n|---|---|---|\n| billing | {value} | eu-west-1 |"
    return f"Then run:\n\n```sh\nexport {_snake(name).upper()}={value}\nmake deploy\n```"


def csv_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    cell = '"' + value.replace('"', '""') + '"' if "\n" in value or "," in value else value
    return f"service,user,{_snake(name)},region\nbilling,deploy,{cell},eu-west-1"


def http_place(name: str, value: str, variant: int, rng: random.Random) -> str:
    header = _header(name) or ("X-" + _snake(name).replace("_", "-").title(), "")
    if "\n" in value:
        return (
            'POST https://api.example.com/v1/keys\nContent-Type: application/json\n\n{"key": "'
            + value.replace("\n", "\\n")
            + '"}'
        )
    return f"GET https://api.example.com/v1/orders\n{header[0]}: {header[1]}{value}\nAccept: application/json"


def notebook_wrap(body: str) -> str:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Orders by region\n"]},
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "outputs": [],
            "source": [line + "\n" for line in ("import os", "import requests", *body.splitlines())],
        },
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


CONTAINERS = (
    Container(
        "python", "py", py_place, lambda b: f'"""Service settings."""\nimport os\n\n{b}\n\nTIMEOUT = 30\n'
    ),
    Container("javascript", "js", js_place, lambda b: f"'use strict';\n\n{b}\n\nconst retries = 3;\n"),
    Container("typescript", "ts", ts_place, lambda b: f'import {{ env }} from "./env";\n\n{b}\n'),
    Container("go", "go", go_place, lambda b: f'package config\n\nimport "os"\n\nfunc init() {{\n{b}\n}}\n'),
    Container("java", "java", java_place, lambda b: f"public class Config {{\n{b}\n}}\n"),
    Container(
        "csharp", "cs", cs_place, lambda b: f"namespace App {{\n    class Settings {{\n{b}\n    }}\n}}\n"
    ),
    Container("ruby", "rb", rb_place, lambda b: f"Rails.application.configure do\n{b}\nend\n"),
    Container("php", "php", php_place, lambda b: f"<?php\n$config = [\n{b}\n];\n"),
    Container("rust", "rs", rs_place, lambda b: f"// settings\n{b}\n"),
    Container("shell", "sh", sh_place, lambda b: f"#!/bin/sh\nset -eu\n{b}\necho done\n"),
    Container(
        "dockerfile", "Dockerfile", dockerfile_place, lambda b: f'FROM python:3.12-slim\n{b}\nCMD ["app"]\n'
    ),
    Container(
        "compose",
        "yml",
        compose_place,
        lambda b: f"services:\n  app:\n    image: app:1.4\n    environment:\n{b}\n",
    ),
    Container(
        "k8s-deployment",
        "yaml",
        k8s_env_place,
        lambda b: (
            f"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n{b}\n"
        ),
    ),
    Container(
        "k8s-secret",
        "yaml",
        k8s_secret_place,
        lambda b: f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n{b}\n",
    ),
    Container("ecs-task", "json", ecs_place, lambda b: f'{{\n  "family": "app",\n{b}\n}}\n'),
    Container("terraform", "tf", tf_place, lambda b: f'resource "app_config" "main" {{\n{b}\n}}\n'),
    Container("yaml", "yaml", yaml_place, lambda b: f"app:\n{b}\n  workers: 4\n"),
    Container("json", "json", json_place, lambda b: f"{{{b}}}\n"),
    Container("toml", "toml", toml_place, lambda b: f"[app]\n{b}\nworkers = 4\n"),
    Container(
        "properties", "properties", ini_place, lambda b: f"# application settings\n{b}\napp.workers=4\n"
    ),
    Container(
        "xml", "xml", xml_place, lambda b: f'<?xml version="1.0"?>\n<configuration>\n{b}\n</configuration>\n'
    ),
    Container(
        "sql",
        "sql",
        sql_place,
        lambda b: f"-- provisioning\n{b}\nGRANT SELECT ON app.* TO 'billing'@'%';\n",
        2,
    ),
    Container("markdown", "md", md_place, lambda b: f"# Deploying\n\n{b}\n\nThat is all.\n"),
    Container("csv", "csv", csv_place),
    Container("notebook", "ipynb", py_place, notebook_wrap),
    Container("http", "http", http_place, lambda b: f"### orders\n{b}\n"),
)


# ---- planting and scoring --------------------------------------------------------------------------


@dataclass
class Planted:
    kind: str
    container: str
    path: str
    text: str
    secret: str  # the credential's value
    lookalike: str  # the look-alike's value
    secret_lines: tuple[int, int]  # first and last line (1-based) of each
    lookalike_lines: tuple[int, int]


def _lines_of(text: str, snippet: str) -> tuple[int, int]:
    at = text.find(snippet)
    if at < 0:
        return (0, 0)
    first = text.count("\n", 0, at) + 1
    return first, first + snippet.count("\n")


def plant(seed: int, variants: int) -> list[Planted]:
    """Make every (kind, container, variant) file, deterministically from `seed`."""
    rng = random.Random(seed)
    out = []
    for kind in KINDS:
        for container in CONTAINERS:
            for variant in range(variants):
                secret = kind.make(rng)
                name = kind.names[rng.randrange(len(kind.names))]
                look_name, look_make = kind.lookalikes[rng.randrange(len(kind.lookalikes))]
                lookalike = look_make(rng)
                placed = container.place(name, secret, variant, rng)
                look = container.place(look_name, lookalike, container.named, rng)  # under its own name
                text = container.wrap(f"{placed}\n\n{look}")
                ext = container.ext if container.ext != "Dockerfile" else ""
                path = f"{kind.name}/{container.name}-{variant}{'.' + ext if ext else '/Dockerfile'}"
                out.append(
                    Planted(
                        kind.name,
                        container.name,
                        path,
                        text,
                        secret,
                        lookalike,
                        _lines_of(text, placed) if container.name != "notebook" else (1, text.count("\n")),
                        _lines_of(text, look),
                    )
                )
    return out


def survives(pieces: list[str], text: str, escaped: bool) -> bool:
    """Whether any piece of a value is still in `text` (as written, or as JSON writes it)."""
    for piece in pieces:
        forms = {piece, json.dumps(piece)[1:-1]} if escaped else {piece}
        if any(form in text for form in forms):
            return True
    return False


def score_rag(planted: list[Planted]) -> list[tuple[Planted, bool, bool, int]]:
    """For each file: the plant found, the look-alike redacted, other redactions."""
    out = []
    for p in planted:
        redacted, _ = redact(p.text)
        assert redacted.count("\n") == p.text.count("\n"), p.path
        encoded = [base64.b64encode(p.secret.encode()).decode()] if p.container == "k8s-secret" else []
        pieces = _pieces(p.secret) + [e for e in encoded if e in p.text]
        escaped = p.container in ("notebook", "json", "ecs-task", "http", "dockerfile")
        found = not survives(pieces, redacted, escaped) if pieces else True
        look_pieces = _pieces(p.lookalike) or [p.lookalike]
        look_gone = not survives(look_pieces, redacted, escaped) and survives(look_pieces, p.text, escaped)
        spans = find_secrets(p.text)
        inside = 0
        for f in spans:
            line = p.text.count("\n", 0, f.start) + 1
            a, b = p.secret_lines
            c, d = p.lookalike_lines
            if a <= line <= b or c <= line <= d:
                inside += 1
        out.append((p, found, look_gone, len(spans) - inside))
    return out


def score_detect_secrets(planted: list[Planted], folder: Path) -> list[tuple[Planted, bool, bool]] | None:
    """detect-secrets' default plugins and filters on the same files: (plant found, look-alike flagged)."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        print("detect-secrets is not installed: pip install 'rag-code[bench]'")
        return None
    for p in planted:
        path = folder / p.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(p.text)
    lines: dict[str, set[int]] = {}
    with default_settings():
        secrets = SecretsCollection(root=str(folder))
        for p in planted:
            secrets.scan_file(str(folder / p.path))
        for filename, secret in secrets:
            lines.setdefault(Path(filename).resolve().as_posix(), set()).add(secret.line_number)
    out = []
    for p in planted:
        found = lines.get((folder / p.path).resolve().as_posix(), set())
        a, b = p.secret_lines
        c, d = p.lookalike_lines
        out.append((p, any(a <= n <= b for n in found), any(c <= n <= d for n in found)))
    return out


def table(title: str, rows: dict[str, list[bool]], looks: dict[str, list[bool]]) -> None:
    print(f"\n{title:24} {'found':>9} {'recall':>7} {'look-alikes taken':>21}")
    for key in rows:
        hits, n = sum(rows[key]), len(rows[key])
        print(f"{key:24} {hits:>4}/{n:<4} {hits / n:>7.3f} {sum(looks[key]):>14}/{len(looks[key])}")


def report(name: str, results: list[tuple[Planted, bool, bool]]) -> None:
    by_kind: dict[str, list[bool]] = {}
    by_container: dict[str, list[bool]] = {}
    look_kind: dict[str, list[bool]] = {}
    look_container: dict[str, list[bool]] = {}
    for p, found, look in results:
        by_kind.setdefault(p.kind, []).append(found)
        by_container.setdefault(p.container, []).append(found)
        look_kind.setdefault(p.kind, []).append(look)
        look_container.setdefault(p.container, []).append(look)
    print(f"\n==== {name}")
    table("kind", by_kind, look_kind)
    table("container", by_container, look_container)
    found = sum(f for _, f, _ in results)
    looks = sum(lk for _, _, lk in results)
    worst = min(sum(v) / len(v) for v in by_kind.values())
    print(
        f"\n{name}: recall {found}/{len(results)} = {found / len(results):.3f} (lowest kind {worst:.3f}); "
        f"look-alikes redacted {looks}/{len(results)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--variants", type=int, default=3, help="placements of each kind in each container")
    parser.add_argument(
        "--detect-secrets", action="store_true", help="also score detect-secrets on the files"
    )
    parser.add_argument(
        "--misses", action="store_true", help="print each plant missed and look-alike redacted"
    )
    parser.add_argument("--keep", type=Path, help="write the planted files here (else a temporary folder)")
    args = parser.parse_args()
    planted = plant(args.seed, args.variants)
    print(
        f"{len(planted)} files: {len(KINDS)} kinds x {len(CONTAINERS)} containers x {args.variants} placements "
        f"(seed {args.seed})"
    )
    results = score_rag(planted)
    report("rag", [(p, f, lk) for p, f, lk, _ in results])
    other = Counter(p.container for p, _, _, n in results for _ in range(n))
    print(
        f"rag: other redactions in the files (neither plant nor look-alike): {sum(other.values())} {dict(other)}"
    )
    if args.misses:
        for p, found, look, _ in results:
            if not found or look:
                print(f"--- {'MISSED' if not found else 'LOOK-ALIKE REDACTED'} {p.path}\n{p.text}")
    if args.detect_secrets:
        with tempfile.TemporaryDirectory() as tmp:
            folder = args.keep or Path(tmp)
            reference = score_detect_secrets(planted, folder)
        if reference is not None:
            report("detect-secrets", reference)
    elif args.keep:
        for p in planted:
            (args.keep / p.path).parent.mkdir(parents=True, exist_ok=True)
            (args.keep / p.path).write_text(p.text)


if __name__ == "__main__":
    main()
