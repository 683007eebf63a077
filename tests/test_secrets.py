"""Tests for rag.secrets. Fake secrets are assembled from parts so that this file trips no scanner."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from rag.secrets import Finding, find_secrets, is_secret_file, redact

# ---- is_secret_file -----------------------------------------------------------------------------

SECRET_FILES = [
    (".env", True),
    ("app/.env", True),
    (".env.local", True),
    ("deploy/.env.production", True),
    (".env.example", False),
    (".env.sample", False),
    (".env.template", False),
    (".env.dist", False),
    (".env.local.example", False),
    ("env.py", False),
    (".envrc.md", False),
    (".envrc", True),
    (".env_local", True),
    ("deploy/.env-prod", True),
    (".env-example", False),
    (".env_sample", False),
    (".environment.ts", False),
    (".env.local.txt", True),
    ("certs/server.pem", True),
    ("config/jwt/public.pem", False),
    ("certs/ca.pem", False),
    ("certs/fullchain.pem", False),
    ("keys/capital.pem", True),
    ("tls/server.key", True),
    ("store.p12", True),
    ("store.PFX", True),
    ("home/.ssh/id_rsa", True),
    ("id_dsa", True),
    ("id_ecdsa", True),
    ("id_ed25519", True),
    ("id_ed25519.pub", False),
    ("id_rsa.pub", False),
    (".npmrc", True),
    (".pypirc", True),
    (".netrc", True),
    ("_netrc", True),
    ("gcp/credentials.json", True),
    ("credentials-prod.json", True),
    ("credentials.yaml", False),
    ("android/release.keystore", True),
    ("signing.jks", True),
    (".aws/credentials", True),
    ("home/.aws/credentials", True),
    ("deploy/credentials", True),
    ("aws/credentials.md", False),
    ("credentials.py", False),
    ("src/credentials/__init__.py", False),
    (".pgpass", True),
    (".git-credentials", True),
    ("git-credentials.md", False),
    (".my.cnf", True),
    ("docker/mysql/my.cnf", False),
    (".htpasswd", True),
    (".docker/config.json", True),
    ("home/.docker/config.json", True),
    ("config.json", False),
    ("docker/config.json", False),
    ("application_default_credentials.json", True),
    ("client_secret_1234-abc.apps.googleusercontent.com.json", True),
    ("client_secrets.json", True),
    ("gcp_credentials_test.json", True),
    ("mycredentials.json", False),
    ("terraform.tfstate", True),
    ("env/prod/terraform.tfstate.backup", True),
    ("docs/tfstate.md", False),
    ("deploy/bastion.ppk", True),
    ("AppData/Roaming/postgresql/pgpass.conf", True),
    ("pgpass.conf.md", False),
    # the credential stores of package managers, cloud CLIs, cluster tools and VCS hosts
    (".kube/config", True),
    ("home/.kube/config", True),
    ("deploy/prod.kubeconfig", True),
    ("kube/config.md", False),
    (".terraformrc", True),
    (".terraform.d/credentials.tfrc.json", True),
    (".config/gh/hosts.yml", True),
    ("hosts.yml", False),
    (".cargo/credentials.toml", True),
    ("Cargo.toml", False),
    (".composer/auth.json", True),
    ("src/auth.json", False),
    (".m2/settings.xml", True),
    ("settings.xml", False),
    (".gradle/gradle.properties", True),
    ("gradle.properties", False),
    (".vault-token", True),
    ("home/deploy/.erlang.cookie", True),
    ("agent-home/.p4tickets", True),
    (".s3cfg", True),
    (".azure/accessTokens.json", True),
    ("src/keys.py", False),
    ("docs/keyboard.md", False),
    ("monkey.json", False),
    ("README.md", False),
]


@pytest.mark.parametrize(("path", "expected"), SECRET_FILES, ids=[p for p, _ in SECRET_FILES])
def test_is_secret_file(path: str, expected: bool) -> None:
    assert is_secret_file(path) is expected


# ---- real-shaped fake secrets -------------------------------------------------------------------

AWS_ID = "AKIA" + "Z7QW3RT5YU8IOP2L"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq3Hj9Lm2U"
GH_CLASSIC = "ghp_" + "1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2wX"
GH_FINE = (
    "github_pat_" + "11ABCDEFG0123456789abc_" + "Q7w2Er9Ty4Ui1Op6As3D" + "Yz0123456789AbCdEfGhIjKlMnOpQrStUvW"
)
GITLAB = "glpat-" + "x8Yq2Lm4Np6Rs8Tu0Wv2"
SLACK = "xoxb-" + "2419876543210-2419876543211-" + "Zq8mN3pL7kR2vB9xT4cW1yHd"
SLACK_HOOK_PATH = "T0AB1CD2E/B0FG3HI4J/" + "q7Rk2Lm9Xw3Zp8Ns5Vb1Tc6Y"
STRIPE = "sk_" + "live_" + "51HqL2eKx9Zb7Vm3Np4Rt8Wy"
OPENAI = "sk-" + "Ab3dEf7hIj1lMn5pQr9tUv2xYz4BcD6fGh8jKl0nMp2qRs4t"
OPENAI_PROJ = "sk-" + "proj-" + "Ab3dEf7hIj1lMn5pQr9tUv2x_Yz4BcD6fGh8jKl0n-Mp2qRs4tUv6wXy8z"
ANTHROPIC = "sk-" + "ant-" + "api03-Xy7Kp2Lm9Qw4Er6Ty1Ui3Op5As8Df0Gh2Jk4Lz6Xc8Vb-1234AbCd"
JWT = ".".join(
    [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ]
)
KEY_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" * 3
GOOGLE = "AIza" + "SyB7xK2mQ9pL4vN8wR3tZ6yC1dF5gH0jE2k"
HUGGINGFACE = "hf_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYz2"
NPM = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SENDGRID = "SG." + "aB3dE5fG7hJ9kL2mN4pQ6r" + "." + "sT8uV0wX2yZ4aB6cD8eF0gH2iJ4kL6mN8oP0qR2sT4u"
AZURE = ("aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY" + "z2cD4eF6gH8iJ0kL2mN4oP6qR8sT0uV2wX4" * 2)[:86] + "=="
RSA_KEY = "-----BEGIN " + "RSA PRIVATE KEY-----\n" + KEY_BODY + "-----END RSA PRIVATE KEY-----"
OPENSSH_KEY = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n" + KEY_BODY + "-----END OPENSSH PRIVATE KEY-----"

# (text, kind, the secret that must disappear)
TRUE_CASES = [
    (f"aws_access_key_id = {AWS_ID}", "aws-access-key", AWS_ID, "aws-access-key-id"),
    ("ASIA" + "Y34FZKBOKMUTVV7A", "aws-access-key", "ASIA" + "Y34FZKBOKMUTVV7A", "aws-session-key-id"),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws-secret-key", AWS_SECRET, "aws-secret-ini"),
    (f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', "aws-secret-key", AWS_SECRET, "aws-secret-env"),
    (f"  secretAccessKey: '{AWS_SECRET}',", "aws-secret-key", AWS_SECRET, "aws-secret-js"),
    (f"token = '{GH_CLASSIC}'", "github-token", GH_CLASSIC, "github-classic"),
    ("gho_" + GH_CLASSIC[4:], "github-token", "gho_" + GH_CLASSIC[4:], "github-oauth"),
    (f"GITHUB_TOKEN={GH_FINE}", "github-token", GH_FINE, "github-fine-grained"),
    (f"private_token: {GITLAB}", "gitlab-token", GITLAB, "gitlab"),
    (f"SLACK_BOT_TOKEN={SLACK}", "slack-token", SLACK, "slack-bot"),
    (f"'https://hooks.slack.com/services/{SLACK_HOOK_PATH}'", "slack-webhook", SLACK_HOOK_PATH, "slack-hook"),
    (f'stripe.api_key = "{STRIPE}"', "stripe-key", STRIPE, "stripe-live"),
    ("rk_" + STRIPE[3:], "stripe-key", "rk_" + STRIPE[3:], "stripe-restricted"),
    ("sk_" + "test_" + STRIPE[8:], "stripe-key", "sk_" + "test_" + STRIPE[8:], "stripe-test"),
    (f"OPENAI_API_KEY={OPENAI}", "openai-key", OPENAI, "openai-legacy"),
    (f"client = OpenAI(api_key='{OPENAI_PROJ}')", "openai-key", OPENAI_PROJ, "openai-project"),
    (f"ANTHROPIC_API_KEY={ANTHROPIC}", "anthropic-key", ANTHROPIC, "anthropic"),
    (f"Authorization: Bearer {JWT}", "jwt", JWT, "jwt"),
    (f"KEY = '''{RSA_KEY}'''\n", "private-key", KEY_BODY.splitlines()[0], "rsa-key-block"),
    (OPENSSH_KEY, "private-key", KEY_BODY.splitlines()[0], "openssh-key-block"),
    (
        "-----BEGIN " + "PRIVATE KEY-----\n" + KEY_BODY + "(truncated)",
        "private-key",
        KEY_BODY.splitlines()[0],
        "key-without-end",
    ),
    ("DB=postgres://app:" + "Tr0ub4dor&3x" + "@db.internal/app", "url-password", "Tr0ub4dor&3x", "url-pg"),
    ("redis://:" + "Zx9kQ2mPw7" + "@cache:6379/0", "url-password", "Zx9kQ2mPw7", "url-no-user"),
    ("ftp://ops:" + "pa$$W0rd*7" + "@files", "url-password", "pa$$W0rd*7", "url-dollar-star-in-pw"),
    ("https://deploy:" + "p@ss" + "W0rd9x@git.example.com/r", "url-password", "p@ssW0rd9x", "url-at-in-pw"),
    (
        "postgres://app:" + "Kq7/vXz9Lm2Pw" + "@db.internal:5432/prod",
        "url-password",
        "Kq7/vXz9Lm2Pw",
        "url-slash-in-pw",
    ),
    ("redis://:" + "Zx9k#Lq2Wv7" + "@cache:6379", "url-password", "Zx9k#Lq2Wv7", "url-hash-in-pw"),
    (
        "# " + OPENSSH_KEY.replace("\n", "\n# "),
        "private-key",
        KEY_BODY.splitlines()[0],
        "key-block-in-comments",
    ),
    (
        "# -----BEGIN "
        + "RSA PRIVATE KEY-----\n# "
        + "\n# ".join([KEY_BODY.splitlines()[0]] * 52)  # 3.5 KB
        + "\n# -----END RSA PRIVATE KEY-----",
        "private-key",
        KEY_BODY.splitlines()[0],
        "key-4096-bit-size",
    ),
    ("> " + RSA_KEY.replace("\n", "\n> "), "private-key", KEY_BODY.splitlines()[0], "key-block-quoted"),
    (
        "// -----BEGIN " + "PRIVATE KEY-----\n// " + KEY_BODY.replace("\n", "\n// ") + "(truncated)",
        "private-key",
        KEY_BODY.splitlines()[0],
        "key-without-end-in-comments",
    ),
    (
        "headers = {'Authorization': 'Bearer " + "abcdef0123456789abcdef0123456789" + "'}",
        "bearer-token",
        "abcdef0123456789abcdef0123456789",
        "bearer-opaque",
    ),
    (
        'DB_PASSWORD = "' + "Tr0ub4dor&3-xkcd" + '"',
        "password-assignment",
        "Tr0ub4dor&3-xkcd",
        "password-env-style",
    ),
    ("password = 's3cr3t-" + "hunter-42'", "password-assignment", "s3cr3t-hunter-42", "password-lowercase"),
    (
        '  "client_secret": "' + "9f8e7d6c5b4a39281706" + '",',
        "password-assignment",
        "9f8e7d6c5b4a39281706",
        "client-secret-json",
    ),
    ("db_pwd: '" + "Zq8mN3pL7kR2'", "password-assignment", "Zq8mN3pL7kR2", "pwd-yaml"),
    ("CONNECT etl_owner/Gl4cier#Mint@RPTPRD", "url-password", "Gl4cier#Mint", "sqlplus-connect-command"),
    ("  conn hr/Gl4cier#Mint;", "url-password", "Gl4cier#Mint", "sqlplus-conn-command"),
    (
        "CONNECT app/Welcome#2031;  -- reporting\r\n",
        "url-password",
        "Welcome#2031",
        "sqlplus-connect-and-a-comment",
    ),
    ("connect sys/Gl4cier#Mint as sysdba", "url-password", "Gl4cier#Mint", "sqlplus-connect-as-sysdba"),
    ('opts.SetPassword("Gl4cier#Mint").', "password-assignment", "Gl4cier#Mint", "go-setter"),
    ("  password: !!str Gl4cier-Mint-Quarry", "password-assignment", "Gl4cier-Mint", "after-a-yaml-tag"),
    (
        "mysql -u root -p" + "SuperSecret123" + " mydb < dump.sql",
        "command-line-password",
        "SuperSecret123",
        "mysql-p",
    ),
    ("const dbPwd = '" + "Xk9mQ2vLp4" + "'", "password-assignment", "Xk9mQ2vLp4", "camelcase-pwd"),
    ("mysql -u root -p'" + "Xk9mQ2vLp4" + "' app", "command-line-password", "Xk9mQ2vLp4", "mysql-quoted"),
    (
        "mysql -u root -p'" + "Pa$$w0rd 2024" + "' app",
        "command-line-password",
        "Pa$$w0rd 2024",
        "mysql-single-quoted-dollar-space",
    ),
    (
        'mysqldump -p"' + "Xk9 mQ2vLp4" + '" app',
        "command-line-password",
        "Xk9 mQ2vLp4",
        "mysql-double-quoted-space",
    ),
    (
        "HF_TOKEN=hf_" + "CyWkRMDRyIbhgvcUTKRzRMzgnNYrduCyyT",
        "huggingface-token",
        "hf_" + "CyWkRMDRyIbhgvcUTKRzRMzgnNYrduCyyT",
        "huggingface-letters-only",
    ),
    (f"GOOGLE_MAPS_KEY = '{GOOGLE}'", "google-api-key", GOOGLE, "google-api-key"),
    (f"HF_TOKEN={HUGGINGFACE}", "huggingface-token", HUGGINGFACE, "huggingface"),
    (f"//registry.npmjs.org/:_authToken={NPM}", "npm-token", NPM, "npm"),
    (f"SENDGRID_API_KEY={SENDGRID}", "sendgrid-key", SENDGRID, "sendgrid"),
    (
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE};EndpointSuffix=core.windows.net",
        "azure-storage-key",
        AZURE,
        "azure-storage",
    ),
    # 38 characters: not AWS's shape, still a secret by its name
    (
        "SECRET_KEY = 'Zx9kQ2mPw7" + "aB3cD4eF5gH6iJ7kL8mN9oP0qR1s'",
        "password-assignment",
        "Zx9kQ2mPw7" + "aB3cD4eF5gH6iJ7kL8mN9oP0qR1s",
        "secret-key-not-aws-shape",
    ),
]


@pytest.mark.parametrize(
    ("text", "kind", "secret"), [c[:3] for c in TRUE_CASES], ids=[c[3] for c in TRUE_CASES]
)
def test_redacts_secret(text: str, kind: str, secret: str) -> None:
    redacted, counts = redact(text)
    assert counts == {kind: 1}
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    assert redacted.count("\n") == text.count("\n")


def test_url_password_keeps_scheme_user_host() -> None:
    text = "clone https://user:" + "hK8s2Lq9Zp" + "@host/repo.git"
    assert redact(text) == ("clone https://user:[REDACTED:url-password]@host/repo.git", {"url-password": 1})


def test_key_block_becomes_one_marker() -> None:
    redacted, _ = redact(f"a\n{RSA_KEY}\nb")
    assert redacted == "a\n[REDACTED:private-key]" + "\n" * 4 + "\nb"


# ---- look-alikes that must survive --------------------------------------------------------------

FALSE_CASES = [
    ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8", "git-commit-hash"),
    ("id = '123e4567-e89b-12d3-a456-426614174000'", "uuid"),
    ("FIXTURE = 'SGVsbG8gV29ybGQhIFRoaXMgaXMgYSB0ZXN0IGZpeHR1cmUgZm9yIGJhc2U2NA=='", "base64-fixture"),
    ("sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256-digest"),
    ("run the task-runner and check disk-usage", "sk-inside-words"),
    ("pip install risk-assessment-framework-configuration-options-v2", "sk-long-kebab-word"),
    ("sk-learn-compatible-estimator-interface-version-2", "sk-kebab-lowercase"),
    ("git clone git@github.com:org/repo.git", "scp-style-git-url"),
    ("DATABASE_URL = 'postgres://localhost/db'", "url-no-credentials"),
    ("http://localhost:8000/path?x=1", "url-with-port"),
    ("https://example.com:8080/users/@alice", "url-port-path-at"),
    ("see http://localhost:3000/#/profile@home", "url-port-fragment-at"),
    ("hf_hub_download_with_retries_and_backoff_v2", "hf-snake-identifier"),
    ("model = 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.from_pretrained(name)", "hf-camelcase-name"),
    ("def 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():", "hf-camelcase-def"),
    ("password = 'password123'", "password-stock-word"),
    ("PASSWORD = 'changeme2024'", "password-changeme"),
    ("user.set_password('sekrit')", "password-call-not-assignment"),
    ("password = '${DB_PASSWORD_42}'", "password-template"),
    ("password: '<your password 1>'", "password-angle-placeholder"),
    ("password_hash = 'pbkdf2_sha256$600000$abc'", "name-continues-after-password"),
    ("SECRET_KEY = os.environ['SECRET_KEY_2']", "secret-from-environment"),
    ("password = 'correcthorsebatterystaple'", "password-letters-only"),
    ("Authorization: Bearer YOUR_ACCESS_TOKEN_HERE", "bearer-placeholder"),
    ("psql -h db -p 5432 -U app", "psql-port"),
    ("mysql -u root -p mydb", "mysql-prompted-password"),
    ("npm_config_registry_url_for_private_packages", "npm-snake-identifier"),
    ("ssh://git@github.com:22/org/repo", "url-user-only"),
    ("color: #a1b2c3; background: #FFAABB;", "css-colors"),
    ("getUserAccountSettingsByOrganizationIdentifierAndRegion2", "camelcase-identifier"),
    ("postgres://user:password@localhost/db", "url-placeholder-password"),
    ("postgres://user:${PASS}@localhost/db", "url-env-reference"),
    ("postgres://user:<password>@localhost/db", "url-angle-placeholder"),
    ("f'postgres://{user}:{password}@{host}/db'", "url-fstring"),
    ("'postgres://%s:%s@%s/db' % (user, pw, host)", "url-percent-format"),
    ("postgres://admin:****@db", "url-masked"),
    ("postgres://app:$DB_PASSWORD@db", "url-shell-variable"),
    ("postgres://app:{{ db_password }}@db", "url-jinja"),
    ("postgres://postgres:postgres@localhost/db", "url-user-equals-password"),
    ("http://foo:bar:baz@example.com", "url-metasyntactic"),
    ("amqp://guest:changeme123@rabbit", "url-changeme"),
    ("if pem.startswith('-----BEGIN RSA PRIVATE KEY-----'):", "key-label-only"),
    ("-----BEGIN PUBLIC KEY-----\n" + KEY_BODY + "-----END PUBLIC KEY-----", "public-key-block"),
    ("token = 'ghp_" + "x" * 36 + "'", "github-placeholder"),
    ("AKIA" + "IOSFODNN7EXAMPLEXYZ", "aws-id-too-long"),
    ("AWS_ACCESS_KEY_ID=AKIA" + "X" * 16, "aws-id-filled-with-x"),
    # AWS's documentation examples, in its docs and SDKs' examples
    ("aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE", "aws-documentation-key-id"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", "aws-documentation-secret"),
    ("publishable = 'pk_" + "live_51HqL2eKx9Zb7Vm3Np4Rt8Wy'", "stripe-publishable"),
    ("stripe_key = 'sk_" + "test_" + "x" * 24 + "'", "stripe-placeholder"),
    ("eyJhbGciOiJub25lIn0.e30.", "jwt-unsigned"),
    ("eyJ" + "notreallyjson123.eyJabcdefghijklmn.abcdefghijklmnopqrstu", "jwt-header-not-json"),
    ("https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24, "slack-webhook-placeholder"),
]


@pytest.mark.parametrize("text", [c[0] for c in FALSE_CASES], ids=[c[1] for c in FALSE_CASES])
def test_leaves_lookalikes(text: str) -> None:
    assert redact(text) == (text, {})


# ---- credentials assigned to names: unquoted or quoted, any spelling ------------------------------

P, K, T, B = (
    f"[REDACTED:{kind}]"
    for kind in ("password-assignment", "api-key-assignment", "token-assignment", "basic-auth")
)

# (text, the same text redacted); values are assembled from parts, like the fakes above
ASSIGNMENT_CASES = [
    ("password = Zebra9" + "Pass4", f"password = {P}", "my-cnf"),
    ("spring.datasource.password=s3cr3t" + "Value", f"spring.datasource.password={P}", "java-properties"),
    ("DB_PASSWORD=abcDEF" + "123xyz", f"DB_PASSWORD={P}", "env-line"),
    ("      - DB_PASSWORD=abcDEF" + "123xyz", f"      - DB_PASSWORD={P}", "compose-environment"),
    ("export PGPASSWORD=abcDEF" + "123xyz", f"export PGPASSWORD={P}", "shell-export"),
    (
        "PGPASSWORD=abcDEF" + "123xyz psql -h db -U app",
        f"PGPASSWORD={P} psql -h db -U app",
        "env-prefix-command",
    ),
    ("export PGPASSWORD=abcDEF" + "123xyz; psql", f"export PGPASSWORD={P}; psql", "shell-semicolon"),
    # an upper-case name alone on its line: the value runs to its end, brackets, commas, colons and all
    ("DB_PASSWORD=p@ss(w0" + "rd)123", f"DB_PASSWORD={P}", "env-value-with-brackets"),
    (
        "      - MYSQL_ROOT_PASSWORD: Xy7:kq2" + "Lm9Qz",
        f"      - MYSQL_ROOT_PASSWORD: {P}",
        "compose-value-with-colon",
    ),
    (
        "export API_TOKEN=ab(12)cd" + "EF,gh",
        "export API_TOKEN=[REDACTED:token-assignment]",
        "env-token-with-comma",
    ),
    ('  - "DB_PASSWORD=p@ss(w0' + 'rd)123"', f'  - "DB_PASSWORD={P}"', "compose-quoted-item"),
    ("ENV DB_PASSWORD=p@ss(w0" + "rd)123", f"ENV DB_PASSWORD={P}", "dockerfile-env"),
    ("set DB_PASSWORD=p@ss(w0" + "rd)123", f"set DB_PASSWORD={P}", "windows-set"),
    ("SECRET_KEY=ab(12)cd" + "34ef", f"SECRET_KEY={P}", "bare-name-with-brackets"),
    ("DB_PASSWORD=p@ss(w0" + "rd)123\r", f"DB_PASSWORD={P}\r", "env-line-crlf"),
    ("API_KEY=0x1a2b3c4d" + "5e6f7a8b", "API_KEY=[REDACTED:api-key-assignment]", "hex-key-of-64-bits"),
    # a lower-case password name in a config line: the value is the rest of the line, colons and all
    ("db.password=Pa55:w0" + "rd!x", f"db.password={P}", "properties-value-with-colon"),
    ("  password: Xy7:kq2" + "Lm9Qz", f"  password: {P}", "yaml-value-with-colon"),
    ("password = Zk3:9qLm" + "2Xy7  ", f"password = {P}  ", "ini-value-with-colon"),
    ("db.password=Pa55:w0" + "rd!x # prod", f"db.password={P} # prod", "properties-trailing-comment"),
    ("dbPassword=Pa55:w0" + "rd!x", f"dbPassword={P}", "ini-mixed-case-name"),
    ("export db_password=Pa55:w0" + "rd!x", f"export db_password={P}", "lower-case-export"),
    ("password: hunter2" + "Secret99", f"password: {P}", "yaml"),
    ("  password: hunter2" + "Secret99  # prod", f"  password: {P}  # prod", "yaml-comment"),
    ("password: Zebra!" + "Pass", f"password: {P}", "symbol-without-digit"),
    ("PassWord = Qw7rT5" + "yU9", f"PassWord = {P}", "mixed-case-name"),
    ("MYSQL_ROOT_PASS=Qw7rT5" + "yU9", f"MYSQL_ROOT_PASS={P}", "pass-word"),
    ("dbPass: 'Qw7!rT5" + "y'", f"dbPass: '{P}'", "camel-pass"),
    ("'password' => 'Tr0ub4" + "dor&3',", f"'password' => '{P}',", "php-arrow"),
    ("db_pwd := Zq8mN3" + "pL7kR2", f"db_pwd := {P}", "walrus"),
    (
        "aws_secret_access_key = abc123" + "XYZshort",
        f"aws_secret_access_key = {P}",
        "aws-secret-not-40-chars",
    ),
    ("client_secret = Gx7-kP2" + "qL9mZ", f"client_secret = {P}", "client-secret-unquoted"),
    ('"clientSecret": "Gx7-kP2' + 'qL9mZ",', f'"clientSecret": "{P}",', "client-secret-camel-json"),
    ('hmac_secret = b"Zq8mN3' + 'pL7kR2"', f'hmac_secret = b"{P}"', "python-bytes-literal"),
    ('API_KEY="a1b2c3d4' + 'e5f6g7h8"', f'API_KEY="{K}"', "api-key-quoted"),
    ("api_key: 9f8e7d6c" + "5b4a3921", f"api_key: {K}", "api-key-yaml"),
    ("apiKey: 'Xk9mQ2vL" + "p4Rt'", f"apiKey: '{K}'", "api-key-camel"),
    ("X-API-Key: 0123abcd" + "4567ef89", f"X-API-Key: {K}", "api-key-header"),
    ("APIKEY=0123abcd" + "4567ef89", f"APIKEY={K}", "apikey-upper"),
    (
        "curl 'https://api.example.com/v1?api_key=abc123" + "def456&q=1'",
        f"curl 'https://api.example.com/v1?api_key={K}&q=1'",
        "api-key-in-query",
    ),
    ("private_key = 4c0883a6" + "9102937d6231471b5dbb6204fe512961", f"private_key = {K}", "private-key-hex"),
    ("ENCRYPTION_KEY=Zq8mN3" + "pL7kR2", f"ENCRYPTION_KEY={K}", "encryption-key"),
    ("  secret_key_base: 9f8e7d6c" + "5b4a3921", f"  secret_key_base: {P}", "rails-secret-key-base"),
    ("auth_token = 7fGh2Jk9" + "Lm4Np", f"auth_token = {T}", "auth-token"),
    ("access_token: ya29.a0AfH6" + "SMBx7kQ", f"access_token: {T}", "access-token-dotted"),
    (
        "//registry.npmjs.org/:_authToken=7fGh2Jk9" + "Lm4Np",
        f"//registry.npmjs.org/:_authToken={T}",
        "npmrc-authtoken",
    ),
    ("Authorization: Basic dXNlcjpw" + "YXNz", f"Authorization: Basic {B}", "basic-auth-header"),
    ('      "auth": "dXNlcjpwYXNz' + 'd29yZA=="', f'      "auth": "{B}"', "docker-config-auth"),
    ("_auth=dXNlcjpw" + "YXNz", f"_auth={B}", "npmrc-auth"),
    (
        "machine api.github.com login me password Zq8mN3" + "pL7kR2",
        "machine api.github.com login me password [REDACTED:netrc-password]",
        "netrc-line",
    ),
    # a character that lengthens when lowered: the names are then matched in the text itself
    ("# İzmir\nPassword: Zebra9" + "Pass4", f"# İzmir\nPassword: {P}", "unicode-lengthening"),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[:2] for c in ASSIGNMENT_CASES], ids=[c[2] for c in ASSIGNMENT_CASES]
)
def test_redacts_assigned_credentials(text: str, expected: str) -> None:
    kind = expected.partition("[REDACTED:")[2].partition("]")[0]
    assert redact(text) == (expected, {kind: 1})


def test_config_file_keeps_its_lines() -> None:
    text = (
        "[client]\nuser = app\npassword = Zebra9" + "Pass4\nhost = db\n\n"
        "machine db.internal\n  login app\n  password Zq8mN3" + "pL7kR2\n"
    )
    assert redact(text) == (
        f"[client]\nuser = app\npassword = {P}\nhost = db\n\n"
        "machine db.internal\n  login app\n  password [REDACTED:netrc-password]\n",
        {"password-assignment": 1, "netrc-password": 1},
    )


# code, templates, placeholders and prose: a name that holds credentials, no literal credential
ASSIGNMENT_LOOKALIKES = [
    # what an audit of 40,893 files of site-packages and docs found the assignment rules redacting
    ('    "AWS::ApiGateway::ApiKey": "48a9c1e07f3b22a3",', "cloudformation-type-name"),
    ('    "AWS::MSK::BatchScramSecret": "ff01a2b3c4d5e6b0",', "cloudformation-secret-type"),
    ('    "ChangeToken": "abcd1234-5678-90ef-8f8f-123456789a8f",', "aws-change-token"),
    ('    "NextToken": "eyJOZXh0VG9rZW4iOiBudWxsfQ==",', "pagination-token"),
    ('    "output_token": "StreamDescription.Shards[-1].ShardId",', "paginator-config"),
    ('    "ARN": "arn:aws:secretsmanager:us-west-2:123456789012:secret:MyTestSecret-a1b2c3",', "arn"),
    ('    "encryptionKey": "arn:aws:kms:us-west-2:123456789012:alias/aws/s3",', "arn-as-key"),
    (
        '    "password": "pbkdf2_sha256$10000$s9sH4pRqPwlh$hz9xu8kEg0YDh8W8nL+vpZHf1GbbzPDo7bfnWkbJvyM=",',
        "password-hash",
    ),
    ('    "hashed_password": "fakehashedsecret2",', "hashed-password-field"),
    ("MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey", "dotted-module-path"),
    ('TEST_SECRET = "lcccccccX2kcccccccY2ccccccc"', "repeated-test-vector"),
    ('CSRF_TOKEN = "1bcdefghij2bcdefghij3bcdefghij4bcdefghij"', "ascending-test-vector"),
    ("password = request.POST['password']", "request-lookup"),
    ("PASSWORD=${DB_PASS:-changeme}", "env-default-placeholder"),
    ("PASSWORD=${DB_PASS}", "env-reference"),
    ("DB_URL=${DATABASE_URL:-postgres://localhost/app}", "env-default-not-a-credential"),
    ("API_KEY=$(cat /run/secrets/api_key)", "env-command-substitution"),
    ("NEXT_TOKEN=abc123XYZ(1)", "env-pagination-token"),
    ("token = 0x7fffffff;", "hex-number"),
    ("password = get_password(user2)", "config-line-call"),
    ("  password: req.body.password1,", "object-literal-member"),
    ("  pwd: process.env.PWD!,", "object-literal-non-null"),
    ("this.password = newPassword1;", "attribute-set-to-variable"),
    ("password = input1.value;", "statement-with-semicolon"),
    ("password = os.environ['DB_PW2']", "config-line-subscript"),
    ("password = settings.DB_PASSWORD_2", "config-line-dotted"),
    ("SSH_PRIVATE_KEY=~/.ssh/id_ed25519", "env-path"),
    ("ACCESS_TOKEN: access_token_v2", "env-code-name"),
    ("password=None", "none"),
    ("password: str", "annotation"),
    ("password: SecretStr = Field(min_length=8)", "annotation-with-default"),
    ("access_token: OAuth2Token = Depends(oauth2_scheme)", "annotation-with-digit"),
    ("token: Optional[str] = None", "optional-annotation"),
    ("password = getpass()", "call"),
    ("password = getpass.getpass(prompt2)", "dotted-call"),
    ("password = self.password", "attribute"),
    ("SECRET_KEY = settings.SECRET_KEY_V2", "dotted-constant"),
    ('api_key = os.environ["API_KEY"]', "environ"),
    ('password = form.cleaned_data.get("password")', "method-chain"),
    ("def login(user, password):", "parameter"),
    ("def login(user, password=DEFAULT_PASSWORD_2):", "parameter-default-constant"),
    ("password=password", "keyword-same-name"),
    ("connect(host=h, password=pw1234567, port=5432)", "keyword-variable-with-digit"),
    ("token = next_page_token_2", "snake-variable"),
    ("dollarToken = +dollarToken;", "unary-expression"),
    ("axios.CancelToken = CancelToken$1;", "bundler-binding"),
    ("token => token.trim()", "arrow-function"),
    ("cancelToken: source.token,", "object-property"),
    ("apiKey: process.env.API_KEY,", "process-env"),
    ("password: ${{ secrets.DB_PASSWORD }}", "actions-secret"),
    ("password: ${DB_PASSWORD}", "env-reference"),
    ("DB_PASSWORD=${DB_PASSWORD:-}", "env-default"),
    ("password: '{{ vault_db_password }}'", "jinja"),
    ("password: '%(db_password)s'", "percent-format"),
    ("password: !vault |", "yaml-tag"),
    ("password: *default_password1", "yaml-alias"),
    ("password: /run/secrets/db_password1", "path"),
    ("PWD=/home/user/project2", "shell-pwd"),
    ("password: ENC(Zq8mN3pL7kR2)", "encrypted-value"),
    ("password = changeme", "changeme"),
    ("password: xxx", "xxx"),
    ("password: <password>", "angle-placeholder"),
    ("password: ***", "mask"),
    ("password: '********'", "quoted-mask"),
    ("api_key: your-api-key", "your-api-key"),
    ('API_KEY="your-api-key-1234"', "your-api-key-with-digits"),
    ("api_key = 'xxxxxxxxxxxx1234'", "x-fill"),
    ("password = 'password123'", "stock-word"),
    ("password_hash = Zq8mN3pL7k", "name-continues"),
    ("bypass = abc123xyz9", "bypass-not-pass"),
    ("secret: my-secret-name", "kebab-words"),
    ("cache_key = Zq8mN3pL7k", "not-a-secret-key-name"),
    ("monkey: Zq8mN3pL7k", "key-inside-a-word"),
    ('publicKeyToken="1fc8b3b9a1e18e3b"', "public-key-token"),
    ("jsonnet_token = r'[^\\W\\d]\\w*'", "regex-literal"),
    ("The password is stored hashed; the API key is read from the settings.", "prose"),
    ("Password: at least 8 characters, with 1 digit.", "prose-colon"),
    ("auth_token: the token the server returned", "prose-yaml-like"),
    ('WWW-Authenticate: Basic realm="api"', "basic-realm"),
    ("Basic authentication and basic configuration", "basic-prose"),
    ("a machine learning password policy", "machine-prose"),
]


@pytest.mark.parametrize(
    "text", [c[0] for c in ASSIGNMENT_LOOKALIKES], ids=[c[1] for c in ASSIGNMENT_LOOKALIKES]
)
def test_leaves_code_and_placeholders_assigned_to_credential_names(text: str) -> None:
    assert redact(text) == (text, {})


# ---- line structure and counts ------------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_line_numbers_unchanged(newline: str) -> None:
    lines = ["import os", f"KEY = '''{RSA_KEY}'''", f"TOKEN = '{GH_CLASSIC}'", "def after():", "    return 1"]
    text = "\n".join(lines).replace("\n", newline)
    redacted, _ = redact(text)
    assert redacted.splitlines() == redacted.split(newline)
    assert len(redacted.splitlines()) == len(text.splitlines())
    assert redacted.splitlines()[-2:] == ["def after():", "    return 1"]
    assert redacted.splitlines()[text.splitlines().index(f"TOKEN = '{GH_CLASSIC}'")] == (
        "TOKEN = '[REDACTED:github-token]'"
    )


def test_counts_per_kind() -> None:
    text = f"a = '{GH_CLASSIC}'\nb = '{'gho_' + GH_CLASSIC[4:]}'\nc = '{JWT}'\nd = '{AWS_ID}'\n"
    redacted, counts = redact(text)
    assert counts == {"github-token": 2, "jwt": 1, "aws-access-key": 1}
    assert redacted == (
        "a = '[REDACTED:github-token]'\nb = '[REDACTED:github-token]'\n"
        "c = '[REDACTED:jwt]'\nd = '[REDACTED:aws-access-key]'\n"
    )


def test_find_secrets_spans() -> None:
    text = f"x {AWS_ID} y"
    assert find_secrets(text) == [Finding("aws-access-key", 2, 2 + len(AWS_ID))]
    assert find_secrets("nothing to see") == []


def test_redact_is_idempotent() -> None:
    once, _ = redact(f"{RSA_KEY}\nhttps://u:" + "Qw9rT5yU2i" + f"@h\n{OPENAI}")
    assert redact(once) == (once, {})
    once, counts = redact("\n".join(c[0] for c in ASSIGNMENT_CASES))
    assert sum(counts.values()) == len(ASSIGNMENT_CASES)
    assert redact(once) == (once, {})


@pytest.mark.parametrize(
    "text",
    [
        "ALLOWED_ORIGINS=" + ",".join(f"http://host{i}.example.com:8080/app/v1/" for i in range(2000)),
        "://a:" * 20_000,
        "-----BEGIN " + "PRIVATE KEY-----\n" + " " * 100_000 + "x",
        "mysql " * 20_000,
        "password='" * 10_000,
        "Bearer " * 15_000,
        ("-----BEGIN " + "PRIVATE KEY-----\n") * 4_000,  # BEGIN lines and never an END
        "password=" * 11_000,  # each a candidate, each token stopped by the next '='
        "api_key:" * 12_500,
        'token="' * 14_000,
        "password: " + "a1" * 50_000 + "(",  # one long token, then code
        ("password = " + "a1" * 100 + "(") * 470,
        "pass" * 25_000 + "=",
        "password" + " " * 100_000 + "=",
        "key=" * 25_000,
        "İpassword=" * 10_000,  # lowering changes the length: the IGNORECASE fallback
        "Basic " * 16_000,
        "Basic " + "QUJD" * 25_000 + "!",
        'auth: "' * 14_000,
        "machine " * 12_500,
        "machine h " + "login machine " * 7_000,
        "PASS" * 25_000 + "=",  # an upper-case name grown one letter at a time
        "SECRET" * 17_000,  # a gate that ran to the end of the capitals after each SECRET: 13 s
        ("x" * 40 + "password=" + "a1:" * 30 + "\n") * 1_000,  # config lines whose value never ends the line
        "password" * 12_000,
        "SECRET_" * 15_000,
        "DB_PASSWORD=" + "a1" * 50_000 + " x",  # a long value, then not the end of the line
        ("DB_PASSWORD=" + "a1" * 40 + " x\n") * 1_000,
        # the shapes of the escaped, joined and encoded forms' candidates
        "\\n" * 50_000,
        '"password\\": \\"' * 7_000,
        "a \\\n" * 25_000,
        'password = "a1" \\\n' * 5_000,
        'password = ("a1"\n' * 6_000,
        "password: >\n" * 8_000,
        "password: |\n  a1 b\n" * 5_000,
        "LS0tLS1CRUdJT " * 7_000,
        "kind: Secret\n" + "username: QUJDREVGR0hJSktM\n" * 4_000,
        "PuTTY-User-Key-File-2: Private-Lines: 1\n" * 2_500,
        "define('DB_PASSWORD', 'a1!" * 4_000,
        "os.environ.get('TOKEN', 'a" * 4_000,
        "?sv=1&sig=" * 10_000,
        "pgpass a:1:b:c:" * 7_000,
        "requirepass " * 8_000,
        "redis-cli -a " * 8_000,
    ],
    ids=[
        "many-urls",
        "url-prefixes",
        "key-then-blanks",
        "mysql-words",
        "password-quotes",
        "bearer-words",
        "begins-without-end",
        "assignments",
        "colon-assignments",
        "quoted-assignments",
        "long-token-then-call",
        "tokens-then-calls",
        "pass-words",
        "blanks-before-operator",
        "key-assignments",
        "unicode-fallback",
        "basic-words",
        "long-basic-token",
        "auth-quotes",
        "netrc-machines",
        "netrc-logins",
        "env-name-growth",
        "config-lines",
        "password-runs",
        "secret-runs",
        "secret-underscore-runs",
        "env-long-value",
        "env-lines-not-ending",
        "escaped-newlines",
        "escaped-quotes",
        "continued-lines",
        "continued-literals",
        "open-parentheses",
        "block-scalar-heads",
        "block-scalars-of-prose",
        "encoded-key-prefixes",
        "secret-manifest-entries",
        "putty-heads",
        "php-defines-unclosed",
        "env-defaults-unclosed",
        "sas-sigs",
        "pgpass-colons",
        "requirepass-words",
        "redis-cli-flags",
    ],
)
def test_adversarial_lines_are_scanned_in_linear_time(text: str) -> None:
    # 100 KB each: a pattern that backtracks quadratically (or cubically, as one did) would
    # take minutes here and stall the suite; none of these holds a secret
    assert redact(text) == (text, {})


# ---- inputs whose shape made a rule slow: each counts the characters its patterns scan -----------


class Counting:
    """Stand in for a compiled pattern, counting the characters each search, match or finditer covers."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.scanned = pattern, 0

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        m = self.pattern.search(text, pos)
        self.scanned += (m.end() if m else len(text)) - pos
        return m

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        m = self.pattern.match(text, pos)
        self.scanned += m.end() - pos if m else 1
        return m

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> Iterator[re.Match[str]]:
        endpos = len(text) if endpos is None else min(endpos, len(text))
        self.scanned += max(0, endpos - pos)
        return self.pattern.finditer(text, pos, endpos)


def test_begin_lines_without_end_are_scanned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # a lazy body of up to 8,000 characters was tried after each BEGIN: 9 s on 1 MB of BEGIN lines
    from rag.secrets import finders

    counters = {
        name: Counting(getattr(finders, name)) for name in ("_KEY_BEGIN", "_NOT_KEY_BODY", "_KEY_LINES")
    }
    for name, counter in counters.items():
        monkeypatch.setattr(finders, name, counter)
    finds: list[int] = []
    monkeypatch.setattr(
        finders, "_next", lambda text, needle, pos: finds.append(pos) or text.find(needle, pos)
    )
    text = ("-----BEGIN " + "PRIVATE KEY-----\n") * 4_000 + RSA_KEY + "\n"
    redacted, counts = redact(text)
    assert counts == {"private-key": 1} and KEY_BODY.splitlines()[0] not in redacted
    assert sum(c.scanned for c in counters.values()) < 3 * len(text)
    assert len(finds) <= 2  # the END line is looked for once per label, not once per BEGIN


def test_command_words_are_scanned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # a lazy run of up to 300 characters after each `mysql` was tried by three rules: 7 s on 1 MB
    from rag.secrets import finders

    counters = {
        name: Counting(getattr(finders, name)) for name in ("_FLAG_COMMANDS", "_MYSQL_FLAG", "_OTHER_FLAG")
    }
    for name, counter in counters.items():
        monkeypatch.setattr(finders, name, counter)
    text = "mysql -u " * 20_000 + "\nmysql -u root -p" + "Zq8mN3" + "pL7kR2" + " app\n"
    redacted, counts = redact(text)
    assert counts == {"command-line-password": 1} and "Zq8mN3" + "pL7kR2" not in redacted
    assert sum(c.scanned for c in counters.values()) < 3 * len(text)


# ---- forms an audit found reaching the index: escaped, encoded, split over lines, other formats ---

PW = "Zq8mN3" + "pL7kR2"  # a password (fake, assembled)
TOK = "t0K3n" + "Vx9Qw2Lm8Rz4"
B64 = __import__("base64").b64encode
PUTTY_PRIVATE = "AAABAQC3" + "kL9xQ2mN8pR4tV6wY1zA3bC5dE7fG9hJ0kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0fG2h"
AWS_CSV_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzq3Hj9Lm2T"

# (text, kind, the secret that must disappear, id)
CLASS_CASES = [
    # values split over lines
    (
        f'DB_PASSWORD = (\n    "{PW[:6]}"\n    "{PW[6:]}"\n)\n',
        "password-assignment",
        PW[:6],
        "parenthesised-concatenation",
    ),
    (
        f'password = "{PW[:6]}" \\\n    "{PW[6:]}"\n',
        "password-assignment",
        PW[6:],
        "backslash-continued-literals",
    ),
    (f"export DB_PASSWORD=\\\n{PW}\n", "password-assignment", PW, "backslash-continued-shell"),
    (f"db:\n  password: >\n    {PW}\n  host: db\n", "password-assignment", PW, "yaml-folded"),
    (
        f"auth:\n  token: |-\n    {TOK[:8]}\n    {TOK[8:]}\n",
        "token-assignment",
        TOK[8:],
        "yaml-literal-split",
    ),
    # escaped and encoded forms: a notebook's JSON, a serialised config, base64 in manifests
    (
        '   "text": [\n    "    \\"password\\": \\"' + PW + '\\",\\n",\n',
        "password-assignment",
        PW,
        "notebook-json-escaped-quotes",
    ),
    (
        '{"env": "DEBUG=0\\nDB_PASSWORD=' + PW + '\\nPORT=80"}',
        "password-assignment",
        PW,
        "json-escaped-env-lines",
    ),
    (
        '{"private_key": "' + RSA_KEY.replace("\n", "\\n") + '\\n"}',
        "private-key",
        KEY_BODY.splitlines()[0],
        "json-escaped-key-block",
    ),
    (
        "users:\n- name: admin\n  user:\n    client-key-data: " + B64(RSA_KEY.encode()).decode() + "\n",
        "private-key",
        B64(RSA_KEY.encode()).decode()[20:60],
        "kubeconfig-client-key-data",
    ),
    (
        "apiVersion: v1\nkind: Secret\ndata:\n  .env: "
        + B64(f"DEBUG=0\nDB_PASSWORD={PW}\n".encode()).decode()
        + "\n",
        "password-assignment",
        B64(f"DEBUG=0\nDB_PASSWORD={PW}\n".encode()).decode()[8:],
        "k8s-secret-env-file",
    ),
    # (a name the plain rules do not know: `api-token: <base64>` is redacted as written already)
    (
        "apiVersion: v1\nkind: Secret\ndata:\n  db-credential: " + B64(PW.encode()).decode() + "\n",
        "password-assignment",
        B64(PW.encode()).decode(),
        "k8s-secret-credential",
    ),
    # other formats
    (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\n"
        f"Private-Lines: 1\n{PUTTY_PRIVATE}\nPrivate-MAC: 0a1b2c3d4e5f\n",
        "private-key",
        PUTTY_PRIVATE,
        "putty-key",
    ),
    (f'echo "db.internal:5432:app:deploy:{PW}" > ~/.pgpass', "pgpass-password", PW, "pgpass-line"),
    (
        f"User name,Password,Access key ID,Secret access key\ndeploy,,{AWS_ID},{AWS_CSV_SECRET}\n",
        "aws-secret-key",
        AWS_CSV_SECRET,
        "aws-csv-export",
    ),
    (
        f'creds = Credentials("{AWS_ID}", "{AWS_CSV_SECRET}")',
        "aws-secret-key",
        AWS_CSV_SECRET,
        "aws-positional",
    ),
    (
        f'creds = Credentials(\n    "{AWS_ID}",\n    "{AWS_CSV_SECRET}",\n)',
        "aws-secret-key",
        AWS_CSV_SECRET,
        "aws-positional-over-lines",
    ),
    (
        'client = Client("AC'
        + "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d"
        + '", "'
        + "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
        + '")',
        "twilio-auth-token",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "twilio-sid-and-token",
    ),
    (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey="
        + "q7Rk2Lm9Xw3Zp8Ns5Vb1"
        + "Tc6YaB3dE5fG7hJ9kL2m=",
        "azure-key",
        "q7Rk2Lm9Xw3Zp8Ns5Vb1",
        "azure-shared-access-key",
    ),
    (
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=r&se=2030-01-01&sig="
        + "q7Rk2Lm9Xw3Zp8Ns5Vb1"
        + "Tc6Y%2BaB3dE5fG7hJ9kL2m%3D",
        "azure-sas-signature",
        "q7Rk2Lm9Xw3Zp8Ns5Vb1",
        "azure-sas-sig",
    ),
    (
        "STRIPE_WEBHOOK = 'whsec_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY'",
        "webhook-secret",
        "aB3dE5fG7hJ9kL2mN4pQ6r",
        "webhook-signing-secret",
    ),
    (f"define('DB_PASSWORD', '{PW}');", "password-assignment", PW, "php-define"),
    (
        "define( 'AUTH_KEY', 'e+2|c@:S)G8" + "kq!Lm9^Zx~Wv3#Rt' );",
        "api-key-assignment",
        "e+2|c@:S)G8",
        "php-define-salt",
    ),
    (f'password = os.environ.get("DB_PASSWORD", "{PW}")', "password-assignment", PW, "environ-get-default"),
    (f"token = os.getenv('GITHUB_TOKEN', '{TOK}')", "token-assignment", TOK, "getenv-default"),
    (f"const key = process.env.API_KEY || '{TOK}';", "api-key-assignment", TOK, "process-env-default"),
    (f"redis-server --requirepass {PW}", "command-line-password", PW, "redis-requirepass"),
    (
        f'subprocess.run(["mysql", "-u", "root", "-p{PW}", "app"])',
        "command-line-password",
        PW,
        "mysql-exec-array",
    ),
    (f"mysqldump --password={PW} app > dump.sql", "command-line-password", PW, "mysql-password-flag"),
    (f"redis-cli -h cache -a {PW} ping", "command-line-password", PW, "redis-cli-a"),
    (f"sshpass -p '{PW}' ssh deploy@host", "command-line-password", PW, "sshpass-p"),
]


@pytest.mark.parametrize(
    ("text", "kind", "secret"), [c[:3] for c in CLASS_CASES], ids=[c[3] for c in CLASS_CASES]
)
def test_redacts_each_form(text: str, kind: str, secret: str) -> None:
    redacted, counts = redact(text)
    assert counts == {kind: 1} | (
        {"aws-access-key": 1} if AWS_ID in text else {}
    )  # the key id, beside its secret
    assert secret not in redacted
    assert redacted.count("\n") == text.count("\n")


CLASS_LOOKALIKES = [
    ('pwd = "/home/deploy1/project"', "path-assigned-to-pwd"),
    ("PWD: '~/src/app2'", "home-path-assigned-to-pwd"),
    ('hash_key = "sha256"', "algorithm-assigned-to-hash-key"),
    ('signing_key = "HMAC-SHA256"', "algorithm-assigned-to-signing-key"),
    ('encryption_key = "AES-256-GCM"', "cipher-assigned-to-key"),
    ('private_key = "rsa-sha256"', "signature-scheme-assigned-to-key"),
    ('api_key = "x-api-key-1"', "header-name-assigned-to-key"),
    (
        '<script integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC">',
        "sri-hash",
    ),
    ("commit = '9fceb02d0ae598e95dc970b74767f19372d61af8'", "git-sha-assigned"),
    ("request_id = '123e4567-e89b-12d3-a456-426614174000'", "uuid-assigned"),
    ('os.environ.get("DB_HOST", "db1.internal")', "environ-default-not-secret-name"),
    ('os.getenv("PASSWORD_RESET_URL", "https://x/reset1")', "environ-default-url-name"),
    ('os.environ.get("DB_PASSWORD", "changeme123")', "environ-default-placeholder"),
    ("define('DB_PASSWORD', 'password_here');", "php-define-placeholder"),
    ("define('AUTH_KEY', 'put your unique phrase here');", "php-define-wordpress-placeholder"),
    ("define('DB_NAME', 'wordpress2');", "php-define-not-secret"),
    ("redis-server --requirepass foobared", "requirepass-stock-example"),
    ("mysql -u root -p -h db1 app", "mysql-prompted-password-flag"),
    ("localhost:5432:*:postgres:*", "pgpass-wildcards"),
    ("12:30:45:00:11", "times-not-pgpass"),
    ("PuTTY-User-Key-File-2: ssh-rsa\nPublic-Lines: 1\nAAAAB3NzaC1yc2E", "putty-public-only"),
    ("data:\n  description: >\n    The password for the cache\n", "yaml-folded-prose"),
    ('print("password: %s\\n" % pw)', "escaped-newline-after-format"),
    ('"{\\"token\\": \\"${TOKEN}\\"}"', "escaped-json-template"),
    (
        "kind: Secret\ndata:\n  username: " + B64(b"admin-user1").decode() + "\n",
        "k8s-secret-not-a-secret-name",
    ),
    (
        "certificate-authority-data: "
        + B64(
            ("-----BEGIN " + "CERTIFICATE-----\n" + KEY_BODY + "-----END CERTIFICATE-----").encode()
        ).decode(),
        "kubeconfig-ca-data",
    ),
    ('message = (\n    "Your password "\n    "is reset2"\n)\n', "parenthesised-prose"),
    ('"sig=abc" and "sv=1"', "sig-too-short"),
]


@pytest.mark.parametrize("text", [c[0] for c in CLASS_LOOKALIKES], ids=[c[1] for c in CLASS_LOOKALIKES])
def test_leaves_lookalikes_of_each_form(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    "after",
    [
        ",2019-01-01T00:00:00Z,active",
        ",arn:aws:iam::123456789012:user/deploy-bot-01",
        ", " + "0123456789" * 4,
    ],
    ids=["date", "arn", "digits"],
)
def test_a_key_id_alone_is_the_only_finding(after: str) -> None:
    assert redact(AWS_ID + after) == ("[REDACTED:aws-access-key]" + after, {"aws-access-key": 1})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"env": "A=\\u00e9\\t\\"x\\"\\nDB_PASSWORD=' + PW + '\\nPORT=80"}',
            '{"env": "A=\\u00e9\\t\\"x\\"\\nDB_PASSWORD=[REDACTED:password-assignment]\\nPORT=80"}',
        ),
        (
            'x = 1\ncell = "\\\\n\\"api_key\\": \\"' + PW + '\\"\\n"\n',
            'x = 1\ncell = "\\\\n\\"api_key\\": \\"[REDACTED:api-key-assignment]\\"\\n"\n',
        ),
        (
            'password = "' + PW[:6] + '" \\\n    "' + PW[6:] + '"\nnext = 1\n',
            'password = "[REDACTED:password-assignment]\n"\nnext = 1\n',
        ),  # the line break is kept
        (
            "db:\n  password: >-\n    " + PW + "\n  host: db\n",
            "db:\n  password: >-\n    [REDACTED:password-assignment]\n  host: db\n",
        ),
    ],
    ids=["after-escapes", "after-escaped-backslash", "continued", "yaml-block"],
)
def test_a_secret_found_in_the_decoded_text_is_redacted_in_place(text: str, expected: str) -> None:
    kind = expected.partition("[REDACTED:")[2].partition("]")[0]
    assert redact(text) == (expected, {kind: 1})


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('POSTGRES_PASSWORD: "${POSTGRES_PASSWORD:-6dG!!6!Yw41X7ZNj*f}"', "6dG!!6!Yw41X7ZNj*f"),
        ("PASSWORD=${DB_PASS:-fallback1}", "fallback1"),
        ("spring.datasource.password=${LEDGER_DB_PASSWORD:Fuh*P-ZrCv~4p_usK0}", "Fuh*P-ZrCv~4p_usK0"),
        ("{{ smtp_relay_password | default('j~Wus4-01HMJuvSp') }}", "j~Wus4-01HMJuvSp"),
        ('{{ .Values.db.password | default "hunter2hunter2!" }}', "hunter2hunter2!"),
    ],
    ids=["compose", "shell", "spring", "jinja", "helm"],
)
def test_the_literal_default_of_a_credentials_interpolation_is_redacted(text: str, secret: str) -> None:
    redacted, _ = redact(text)
    assert secret not in redacted and redacted == text.replace(secret, "[REDACTED:password-assignment]")


@pytest.mark.parametrize(
    "text",
    [
        "mongorestore --username restore_svc --password 'BJL4isnsZ7*.DW~jMY9s'",
        "Invoke-Restore -Password 'Tr0ub4dor&3x'",
        "docker login registry.example.internal -u release-bot -p VL5RqFCWR-nEQKmqEcqlnc",
        '  default   = "ZheCWvmS^m4HPj~OjBVC"',
    ],
    ids=["long-flag", "powershell-flag", "docker-login", "generated-with-symbols"],
)
def test_a_password_passed_as_a_flag_or_generated_with_symbols_is_redacted(text: str) -> None:
    redacted, found = redact(text)
    assert found and redacted.count("[REDACTED:") == 1
    assert not any(word in redacted for word in ("BJL4", "Tr0ub", "VL5Rq", "ZheCW"))


def test_literals_joined_into_a_token_are_redacted_as_one() -> None:
    text = (
        '_GH_TOKEN = "".join([\n    "github_pat_11A8L13WBGS99",\n    "4RN2URC43_CYLFK4GzizkV0V",\n'
        '    "bnzpeuA3Q8YZDFQVZd2KKB2r",\n    "zMLL2DAe00uoJgpTUJ6ke",\n])\nPATH = "/".join(["usr", "local"])\n'
    )
    redacted, found = redact(text)
    assert found == {"github-token": 1}
    assert redacted.splitlines() == [
        "_GH_TOKEN = [REDACTED:github-token]",
        "",
        "",
        "",
        "",
        "",
        'PATH = "/".join(["usr", "local"])',
    ]


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ('var k = string.Concat("M4kq9RzT", "w2XbLp7N", "c8VdHs3J");', 'var k = string.Concat("a", "b");'),
        (
            'val k = listOf("M4kq9RzT", "w2XbLp7N", "c8VdHs3J").joinToString("")',
            'val k = listOf("read", "write").joinToString("")',
        ),
        (
            'k := strings.Join([]string{"M4kq9RzT", "w2XbLp7N", "c8VdHs3J"}, "")',
            'k := strings.Join([]string{"a", "b"}, "")',
        ),
    ],
    ids=["csharp-concat", "kotlin-join-to-string", "go-strings-join"],
)
def test_literals_concatenated_by_a_call_are_read_as_one(text: str, joined: str) -> None:
    assert redact(text) == (
        text.split("=")[0] + "= [REDACTED:random-value]" + text[text.rfind(")") + 1 :],
        {"random-value": 1},
    )
    assert redact(joined) == (joined, {})  # words joined are words


def test_a_value_continued_on_the_next_line_is_read_whole() -> None:
    text = "relay.user=ops\nrelay.pass=M4kq9RzTw2\\\n    XbLp7Nc8Vd\nrelay.host=smtp.example\\\n    .com\n"
    redacted, found = redact(text)
    assert found == {"password-assignment": 1} and "M4kq" not in redacted and "XbLp" not in redacted
    assert redacted.endswith("relay.host=smtp.example\\\n    .com\n")


@pytest.mark.parametrize(
    "text",
    [
        "PublicKey = rsHrpywdnPGp/MF1uqre+U/dKVD3GlXrTm1jKScPPVM=",
        "script-src 'self' 'nonce-Nm0dca5b+VVhODg+yUEg0g==' https://cdn.example.net",
        '<script nonce="Nm0dca5b+VVhODg+yUEg0g==">',
        "INFO gateway trace_id=79b731a8e1393c641c1a04575d587844 method=GET",
        '{"id": "chk_g5RvGLSudutB7hYMdaEOOeeq", "status": "open"}',
        "partner_id,last_request_id\ncc48,req_W9e9S9BhLN11FzmrkufkLagR\n",
        'const RFC8439_KEY_HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";',
    ],
    ids=[
        "public-key-name",
        "csp-nonce",
        "nonce-attribute",
        "trace-id",
        "json-id",
        "id-column",
        "counting-bytes",
    ],
)
def test_a_random_value_named_as_a_public_thing_is_kept(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    "text",
    [
        "PrivateKey = rsHrpywdnPGp/MF1uqre+U/dKVD3GlXrTm1jKScPPVM=",
        "session_id=79b731a8e1393c641c1a04575d587844",
        'secret_id = "Q8Hc2LmZ0pWx7RtY4vNb1KsD"',
    ],
    ids=["private-key-name", "session-id", "secret-id"],
)
def test_an_id_or_key_named_by_a_credentials_word_is_still_redacted(text: str) -> None:
    assert redact(text)[1]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "connect = rpt_reader/bD3_pJYdUy_rf26k@(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(PORT=1521)))",
            "bD3_pJYdUy_rf26k",
        ),
        ("sqlplus -s app_user/Tr0ub4dor3@ORCLPDB1 @script.sql", "Tr0ub4dor3"),
        ("cx_Oracle.connect('hr/W3lcome#2024@//db.internal:1521/XEPDB1')", "W3lcome#2024"),
    ],
    ids=["descriptor", "sqlplus", "ezconnect"],
)
def test_an_oracle_connect_strings_password_is_redacted(text: str, secret: str) -> None:
    assert redact(text) == (text.replace(secret, "[REDACTED:url-password]"), {"url-password": 1})


@pytest.mark.parametrize(
    "text", ["sqlplus / as sysdba", "sqlplus $DB_USER/$DB_PASS@$TNS", "see docs/a@//b and x/y@z"]
)
def test_an_oracle_login_without_a_literal_password_is_kept(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    "text",
    [
        "callbackKey = BS.pack [ 0x58, 0xe5, 0x01, 0x0c, 0xbd, 0x49, 0x16, 0x41, 0xc0, 0x38, 0x28, 0x37, 0xae, 0x41, 0xb9, 0x6c\n"
        "                     , 0x40, 0x51, 0x01, 0x65, 0xfe, 0xba, 0x72, 0x28, 0xa0, 0x2e, 0xa7, 0x21, 0xd9, 0x67, 0xf0, 0xf8 ]",
        "pw = bytes.fromhex('7169724d6839516938787162336c386e696b3069').decode()",
        'let k = ["sk-proj-GJXvFuD80Ic5RC_qwXz4", "mZtXYGxSkQiPphmbagPSTg1hthQ31nXu"].joined()',
    ],
    ids=["haskell-leading-commas", "hex-of-text-of-a-sha-length", "swift-joined"],
)
def test_key_material_hex_text_and_swift_joins_are_redacted(text: str) -> None:
    assert redact(text)[1]


@pytest.mark.parametrize(
    "text",
    [
        'pins = @[@"sha256/TMbN8gCHGky0Rtwd4UmRVvWW7czMspsbPCorc7q9a6A="]',
        "db-01 ansible_host=10.20.2.21 host_key_fp=SHA256:73ql8qfsvpBpuer6xQDV13MMC1RPgfgppN73fFarrqg",
        "    uid: PTMYM2SA54NNKYHF6Q",
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 fixes it",
    ],
    ids=["pin-sha256", "fingerprint-after-a-name", "uid", "git-id"],
)
def test_pins_fingerprints_uids_and_git_ids_are_kept(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    "text",
    [
        "Session ID: Vq7KpZ3mX9tLw2RbN8yHcF4d",
        '"Session Id": "Vq7KpZ3mX9tLw2RbN8yHcF4d"',
        "curl -u my-client-id:Vq7KpZ3mX9tLw2RbN8yHcF4d https://api.example.com",
        "api_token_id=Vq7KpZ3mX9tLw2RbN8yHcF4d",
        "csrf_nonce=Vq7KpZ3mX9tLw2RbN8yHcF4d",
        "secret id,x\nVq7KpZ3mX9tLw2RbN8yHcF4d,1\n",
        "P_k4B8pwGANwyv2_NV6h-w",
        "K3KUQtXdjBDep3h-ekxEeZUk4p-o9Oud4UseYwyB-Rw",
    ],
    ids=[
        "session-id",
        "quoted-session-id",
        "id-and-secret-pair",
        "token-id",
        "csrf-nonce",
        "secret-id-column",
        "urlsafe-16",
        "urlsafe-32",
    ],
)
def test_a_credential_named_by_words_before_its_id_or_beside_one_is_redacted(text: str) -> None:
    assert redact(text)[1]


@pytest.mark.parametrize(
    "text",
    [
        "image: ${SECRETS_MANAGER_IMAGE:-hashicorp/vault:1.15}",
        '{{ .Values.auth.existingSecret | default "redis-auth-2" }}',
        "${PASSWORD_ENCRYPTION:-scram-sha-256}",
        "${TOKEN_HEADER:-X-Auth-Token2}",
        "${app.jwt.secret:classpath:keys/jwt-2.pem}",
        'files = ["Microsoft.VC14*.CRT"]',
        'url = "q%3DrHk9x2Lm%26page%3D2"',
        '("http://xn--hckqz9bzb1cyrb.jp/")',
    ],
    ids=["image", "existing-secret", "encryption", "header", "classpath", "glob", "url-escapes", "punycode"],
)
def test_defaults_globs_escapes_and_domain_names_that_are_no_credentials_are_kept(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('${PGPASSWORD:-"Xk9mQ2vLp7wRtZ"}', "Xk9mQ2vLp7wRtZ"),
        ('{{ default "Xk9mQ2vLp7wRtZ" .Values.password }}', "Xk9mQ2vLp7wRtZ"),
        ("${app.jwt-secret:Xk9mQ2vLp7wRtZ}", "Xk9mQ2vLp7wRtZ"),
    ],
    ids=["quoted", "helm-order", "spring-dashed-name"],
)
def test_more_forms_of_a_credentials_default_are_redacted(text: str, secret: str) -> None:
    redacted, found = redact(text)
    assert found and secret not in redacted


def test_a_default_finding_inside_a_named_one_yields_to_it_on_a_long_line() -> None:
    unit = "--auth-token aB3dE5fG7hJ9kL2mx "
    text = unit * 2000
    redacted, found = redact(text)
    assert found == {"token-assignment": 2000}
    assert redacted == "--auth-token [REDACTED:token-assignment] " * 2000
