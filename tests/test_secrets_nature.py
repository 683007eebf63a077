"""Secrets found by what they are: a random value in a credential context, whatever the form; and
look-alikes of every kind left as written. Fakes are assembled from parts, as in test_secrets."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from rag.secrets import redact
from rag.secrets.randomness import looks_random

TOKEN = "Xk9mQ2vLp4" + "Rt7Zq8mN3pL7"  # 22 random letters and digits
B64 = "/wp+qTKueLft" + "vvysV53K8jBATufzv356x18U9VAr3OI="  # base64 of 32 bytes, starting with `/`
PLUS = "+KvMq3uraWUQ" + "ixDIyindRW0vcM6E/RyPBiBhw+01E0s="
PW = "cciad1!nr8w" + "AWL#8!"  # a generated password
KEY_BODY = "\n".join(["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"] * 3)

# (text, the secret that must disappear, id)
FORMS = [
    # the first character, the quoting, a line break between name and value decide nothing
    (f"DB_PASSWORD={B64}", B64, "unquoted-value-starting-with-slash"),
    (f"api_key: {PLUS}", PLUS, "unquoted-value-starting-with-plus"),
    (f"app:\n  encryption_key:\n    {B64}\n", B64, "yaml-value-on-the-next-line"),
    # headers other than Authorization: Bearer
    (f'curl -H "X-Api-Key: {TOKEN}" https://api.example.com', TOKEN, "curl-header"),
    (f"GET /v1/orders\nAuthorization: Token {TOKEN}\n", TOKEN, "authorization-token-scheme"),
    (f'headers.put("X-Auth-Token", "{TOKEN}");', TOKEN, "header-set-in-code"),
    # manifests: name/value lists, in either order; task definitions; XML properties
    (f'        - name: DB_PASSWORD\n          value: "{PW}"\n', PW, "k8s-env-name-then-value"),
    (f'        - value: "{TOKEN}"\n          name: API_TOKEN\n', TOKEN, "k8s-env-value-then-name"),
    (
        json.dumps({"environment": [{"value": B64, "name": "ENCRYPTION_KEY"}]}, indent=2),
        B64,
        "ecs-task-definition",
    ),
    (f'<add key="ApiKey" value="{TOKEN}" />', TOKEN, "xml-add-key-value"),
    (f"  <password>{PW}</password>", PW, "xml-element"),
    # SQL and shell statements that set or pass a password
    (f"CREATE USER 'billing'@'%' IDENTIFIED BY '{PW}';", PW, "sql-identified-by"),
    (f"ALTER ROLE billing WITH LOGIN PASSWORD '{PW}';", PW, "sql-with-password"),
    (f"mytool deploy --auth-token {TOKEN} --region eu-west-1", TOKEN, "flag-then-value"),
    # credentials passed as positional arguments to well-known client calls
    (f'cache = redis.Redis("cache.internal", 6379, 0, "{PW}")', PW, "redis-positional-password"),
    (f'auth = requests.auth.HTTPBasicAuth("deploy", "{PW}")', PW, "http-basic-auth"),
    (f'server.login("alerts@example.com", "{PW}")', PW, "smtp-login"),
    (f'$pdo = new PDO("mysql:host=db;dbname=app", "app", "{PW}");', PW, "php-pdo"),
    (f'var c = new NetworkCredential("deploy", "{PW}");', PW, "dotnet-network-credential"),
    # a token as a URL's user, values split by concatenation
    (f"git clone https://{TOKEN}@github.com/acme/deploy.git", TOKEN, "url-user-token"),
    (f'secret = "{TOKEN[:9]}" + "{TOKEN[9:]}"', TOKEN[9:], "concatenated-literals"),
    (f"$key = '{TOKEN[:9]}' .\n  '{TOKEN[9:]}';", TOKEN[9:], "php-concatenation-over-lines"),
    # tables: CSV and Markdown columns named for a credential
    (f"service,user,api_token,region\nbilling,deploy,{TOKEN},eu-west-1\n", TOKEN, "csv-column"),
    (f"| service | token |\n|---|---|\n| billing | {TOKEN} |\n", TOKEN, "markdown-column"),
    # a notebook's source lines (JSON strings)
    (json.dumps({"cells": [{"source": [f'SESSION_SECRET = "{B64}"\n']}]}, indent=1), B64, "notebook-source"),
    # types before the value (Rust, TypeScript)
    (f'const SIGNING_KEY: &str = "{TOKEN}";', TOKEN, "rust-typed-constant"),
]


@pytest.mark.parametrize(("text", "secret"), [f[:2] for f in FORMS], ids=[f[2] for f in FORMS])
def test_a_random_value_in_a_credential_context_is_redacted(text: str, secret: str) -> None:
    redacted, counts = redact(text)
    assert counts and secret not in redacted
    assert redacted.count("\n") == text.count("\n")


# key material recognised by its framing, whatever the vendor
KEYS = [
    (
        '---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "rsa-key"\n'
        + KEY_BODY
        + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        "rfc4716",
    ),
    ("---BEGIN EC PRIVATE KEY---\n" + KEY_BODY + "\n---END EC PRIVATE KEY---", "three-dashes"),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
        + KEY_BODY
        + "\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----",
        "pgp",
    ),
    ("identity: AGE-SECRET-KEY-1" + "QGL9ZGTX79CNV4NSZPJPPU29ENX8GX3AESFL8T75VF4RAQXH07XS42FX67", "age"),
    (
        "wallet = 'xprv9s21ZrQH143K"
        + "3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi'",
        "bip32-xprv",
    ),
]


@pytest.mark.parametrize("text", [k[0] for k in KEYS], ids=[k[1] for k in KEYS])
def test_key_material_is_known_by_its_framing(text: str) -> None:
    redacted, counts = redact(text)
    assert counts == {"private-key": 1}
    assert "MIIEowIBAAKCAQEA" not in redacted and "QGL9ZGTX" not in redacted and "3QTDL4LX" not in redacted


# A lock file, a manifest, settings and docs full of values that look random but are no credential
LOCK_FILE = """{
  "name": "app",
  "lockfileVersion": 3,
  "packages": {
    "node_modules/axios": {
      "version": "1.7.9",
      "resolved": "https://registry.npmjs.org/axios/-/axios-1.7.9.tgz",
      "integrity": "sha512-LhLcE7Hbiryz8oMDdDptSrWowmB4Bl6RCt6sIJKpRB4XtVf0iEgewX3au/pKqm6Py/7ZDlzWwQtMc9Dv7MJCBw=="
    }
  }
}
"""
POETRY_LOCK = """[[package]]
name = "requests"
version = "2.32.3"
files = [
    {file = "requests-2.32.3-py3-none-any.whl", hash = "sha256:70761cfe03c773ceb22aa2f671b4757976145175cdfca038c02654d061d6dcc6"},
]
"""
SETTINGS = """# settings that name credentials, and hold none
password_hint = "Use at least 8 characters"
PASSWORD_RESET_TIMEOUT = 259200
api_key = "<your-api-key>"
API_TOKEN = "${API_TOKEN}"
SECRET_KEY = os.environ["SECRET_KEY"]
db_password = "changeme"
session_id = "123e4567-e89b-12d3-a456-426614174000"
request_key = "9fceb02d0ae598e95dc970b74767f19372d61af8"
public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx3kQ2vLp4Rt7Zq8mN3pL7 deploy@ci"
STRIPE_PUBLISHABLE_KEY = "pk_live_Uxm4M2Fl1SSA2vl5dSLCXt8n"
ENCRYPTION_KEY = "cmVwbGFjZS1tZS1pbi1wcm9kdWN0aW9u"
signing_algorithm = "HMAC-SHA256"
key_id = "AKIAIOSFODNN7EXAMPLE"
cache_key = "user_profile_v2"
version = "1.2.3-beta.4+build5"
allOwnKeys = _ref2$allOwnKeys
hasher_classes = [
    BCryptSHA256PasswordHasher,
    PBKDF2SHA1PasswordHasher,
]
"""
DOCS = """# Deploying

Set `API_TOKEN` to the token from the dashboard, e.g. `export API_TOKEN=<token>`.
The commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the password prompt.

| service | token | region |
|---|---|---|
| billing | (set in the vault) | eu-west-1 |

The signature "3045022100c4" is checked by the client.
"""
MANIFEST = """apiVersion: v1
kind: ConfigMap
data:
  age_recipient: age1dn7jzazzq3wqf5c00zafdlj2wxfkklfgn2un7yurkufrhk6xgf9xk7eats
  xpub: xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8
  ca.crt: |
    -----BEGIN CERTIFICATE-----
    MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun
    -----END CERTIFICATE-----
  public.pem: |
    -----BEGIN PUBLIC KEY-----
    MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun
    -----END PUBLIC KEY-----
"""


@pytest.mark.parametrize(
    "text",
    [LOCK_FILE, POETRY_LOCK, SETTINGS, DOCS, MANIFEST],
    ids=["package-lock", "poetry-lock", "settings", "docs", "manifest"],
)
def test_look_alikes_stay_as_written(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Xk9mQ2vLp4Rt7Zq8mN3pL7", True),  # letters and digits, switching class at every other step
        ("9fceb02d0ae598e95dc970b74767f19372d61af8", True),  # hex, as a key or a token is
        (B64, True),  # base64 of random bytes
        (base64.b64encode(b"admin-user1").decode(), False),  # base64 of a name: judged as the name
        (base64.b64encode(b"deploy:Xk9mQ2vLp4Rt7Zq8").decode(), True),  # of user:random-password
        ("70617373776f72643132333435", False),  # hex of `password12345`
        ("%2BaB3dE5fG7hJ9kL2mN4pQ6rS8tU0v", True),  # URL escapes of random text
        ("getUserAccountSettings2", False),  # a name in camelCase
        ("BCryptSHA256PasswordHasher", False),  # words and acronyms
        ("123e4567-e89b-12d3-a456-426614174000", False),  # a UUID
        ("sha512-abcDEF123456789abcdefghij", False),  # a hash with its algorithm
        ("2014-10-10T14:37:51Z", False),  # a date
        ("<your-api-key>", False),
        ("xxxxxxxxxxxxxxxx", False),
        ("abcdefghijklmnop123", False),  # the alphabet in order
        ("Kq7vX", False),  # too short to tell
    ],
)
def test_looks_random(value: str, expected: bool) -> None:
    assert looks_random(value) is expected


def _random_values(count: int, seed: int) -> list[str]:
    """`count` random values of letters and digits, 20 characters each, that look random (1 in
    200 such strings does not: a run of letters that reads as words)."""
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits
    values: list[str] = []
    while len(values) < count:
        value = "".join(rng.choice(alphabet) for _ in range(20))
        if looks_random(value):
            values.append(value)
    return values


def test_a_file_denser_in_names_than_the_budget_is_redacted_to_its_end() -> None:
    # 6,000 names, more than the finders read one by one in a text this long: the rest are read
    # by one search, and every value is still taken
    values = _random_values(6000, seed=1)
    text = "".join(f'auth_token = "{value}"\n' for value in values)
    redacted, counts = redact(text)
    assert counts == {"token-assignment": 6000}
    assert not any(value in redacted for value in values)


@pytest.mark.parametrize(
    ("header", "row"), [("user,password", "user{i},{value}"), ("password\tuser", "{value}\tuser{i}")]
)
def test_every_row_of_a_long_table_is_redacted(header: str, row: str) -> None:
    values = _random_values(2500, seed=2)
    text = header + "\n" + "".join(row.format(i=i, value=value) + "\n" for i, value in enumerate(values))
    redacted, counts = redact(text)
    assert counts == {"password-assignment": 2500}
    assert not any(value in redacted for value in values)
    assert "user2499" in redacted
