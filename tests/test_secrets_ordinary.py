"""Values assigned to credential names that are not credentials: paths, file names, identifiers,
placeholders. None is redacted; the secrets they resemble still are."""

from __future__ import annotations

import pytest

from rag.secrets import redact

# A settings module of the kind every service has: each name holds a credential's word, each value
# names where the credential is, or what it is called, or stands in for it
SETTINGS = '''"""Settings for the ingest worker: development defaults; production reads the environment."""

from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent

# TLS material lives beside the deployment, never in the repository
private_key = "keys/server-2024.pem"
PRIVATE_KEY = "certs/private/worker-01.key"
public_key = "keys/server-2024.pub"
SSL_KEYFILE = "deploy/tls/privkey1.pem"
signing_key = "config/jwt-signing-2.key"
ssh_private_key = "~/.ssh/deploy_ed25519"
encryption_key = "kms/projects/app/keys/ingest-2024"
master_key = "config/master_v2.key"

# secrets are mounted as files
secret = "secrets.v1.yaml"
SECRET = "secrets/prod-eu-1.enc"
secret_key = "settings.SECRET_KEY_V2"
client_secret = "oauth/client_secret_1234.json"
password = "secrets/db_password2.txt"
db_password = "DB_PASSWORD_FILE_2"
pwd = "src/app2"
passphrase = "gpg/passphrase-2024.asc"
password_hasher = "django.contrib.auth.hashers.Argon2PasswordHasher"
password_validator = "auth.validators.MinLength12"

# tokens: the tokenizer, the token model, where tokens are cached
token = "tokenizer_v2"
TOKEN = "bert_base_tokenizer_v3"
token_model = "accounts.ApiToken"
access_token = "access_token_v1"
refresh_token = "refresh_tokens.sqlite3"
auth_token = "auth/token_store_v2"
api_token = "API_TOKEN_2"
csrf_token = "csrf_token_cookie_2"

# API keys are read from the environment; these are their names and placeholders
api_key = "INGEST_API_KEY_2"
API_KEY = "<your-api-key>"
apiKey = "${INGEST_API_KEY}"
stripe_key = "sk_test_xxxxxxxxxxxxxxxx"
secret_key_base = "{{ vault_secret_key_base }}"
hmac_key = "HMAC-SHA256"
password_placeholder = "********"
DB_PASSWORD = "changeme2024"
DEMO_PASSWORD = "P@55w0rd!"

# and the names of the templates, endpoints and variables around them
google_credentials = "service-account-2024.json"
PASSWORD_RESET_TEMPLATE = "registration/password_reset_email2.html"
token_endpoint = "/api/v2/token"
keystore_password = "keystore/pass_2024.txt"
TWILIO_AUTH_TOKEN = "TWILIO_AUTH_TOKEN_V2"
jwt_secret = "JWT_SECRET_V3"
oauth_token = "oauth.tokens.OAuth2Token"
'''


def test_settings_of_ordinary_assignments_redact_nothing() -> None:
    assignments = [line for line in SETTINGS.splitlines() if ' = "' in line]
    assert len(assignments) >= 40
    assert redact(SETTINGS) == (SETTINGS, {})


CONFIG_YAML = """# config/app.yaml
tls:
  private_key: keys/server-2024.pem
  password_file: /etc/app/db_password
auth:
  token: tokenizer_v2
  secret: secrets.v1.yaml
  secret_key: settings.SECRET_KEY_V2
  signing_key: jwt-signing-2.key
  client_secret: oauth/client_secret_1234.json
storage:
  encryption_key: kms/keys/ingest-2024
  password: vault/db/creds-v3
"""

ENV_EXAMPLE = """# .env.example: copy to .env and fill in
DB_PASSWORD=
API_KEY=<your-api-key>
GITHUB_TOKEN=${GITHUB_TOKEN}
JWT_PRIVATE_KEY=keys/jwt-2024.pem
SESSION_SECRET=session_secret_v2
SIGNING_KEY=config/signing_2024.key
PASSWORD=secrets/db_password2.txt
"""

TYPESCRIPT_CONFIG = """export const config = {
  apiKey: "INGEST_API_KEY_2",
  token: "tokenizer_v2",
  secret: "secrets.v1.yaml",
  privateKey: "keys/server-2024.pem",
  authToken: "auth/token_store_v2",
};
const tokenCache =
  "redis_token_cache_v2";
"""


@pytest.mark.parametrize(
    "text", [CONFIG_YAML, ENV_EXAMPLE, TYPESCRIPT_CONFIG], ids=["yaml", "env-example", "typescript"]
)
def test_config_files_of_ordinary_values_redact_nothing(text: str) -> None:
    assert redact(text) == (text, {})


# the secrets these values resemble: assembled from parts, as in test_secrets
@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        ('password = "Kq7/vXz9' + 'Lm2Pw"', "password-assignment", "Kq7/vXz9Lm2Pw"),  # a slash, not a path
        ('secret = "zq8mn3_' + 'pl7kr2"', "password-assignment", "zq8mn3_pl7kr2"),  # not snake words
        ('token = "ya29.a0Af' + 'H6SMBx7kQ"', "token-assignment", "ya29.a0AfH6SMBx7kQ"),  # dotted, not a name
        ('api_key = "Zebra9' + 'Pass4"', "api-key-assignment", "Zebra9Pass4"),  # CamelCase, no dot
        ('password = "hunter2-very-' + 'secret"', "password-assignment", "hunter2-very-secret"),
        (
            'private_key = "wJalrXUtnFEMI/K7MDENG/' + 'bPxRfiCYzq3Hj9Lm2T"',
            "api-key-assignment",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq3Hj9Lm2T",
        ),
    ],
    ids=["slash", "snake-with-digits-inside", "dotted-token", "camel", "kebab-passphrase", "base64-slashes"],
)
def test_secrets_that_resemble_ordinary_values_are_still_found(text: str, kind: str, secret: str) -> None:
    redacted, counts = redact(text)
    assert counts == {kind: 1} and secret not in redacted


# a password of plain words: redacted under a password's name where the value is a literal; a
# name of what a value is for, or code, stays
@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ('password = "velvet-ticket-' + 'harbour-lamp"\n', "velvet-ticket-harbour-lamp"),
        (
            "  environment:\n    MINIO_ROOT_PASSWORD: velvet-ticket-" + "harbour-lamp\n",
            "velvet-ticket-harbour-lamp",
        ),
        ("db_password: copper_pylon_" + "saffron83\n", "copper_pylon_saffron83"),
        ("PGPASSWORD=copper.gravel." + "quiet pg_dump -h db claims > out.sql\n", "copper.gravel.quiet"),
        ("db.password: copper.gravel." + "quiet\n", "copper.gravel.quiet"),
        ("DSN=host=db user=app password=copper_pylon_" + "saffron83 dbname=app\n", "copper_pylon_saffron83"),
        ('conn = connect(host="db", password="marble-' + 'orchard")\n', "marble-orchard"),
        ('export PGPASSWORD="${PGPASSWORD:-marble-' + 'orchard}"\n', "marble-orchard"),
        ('password = ENV.fetch("DB_PASSWORD", "marble-' + 'orchard")\n', "marble-orchard"),
        (
            "curl -fsS \\\n  -u 'admin:marble-" + "orchard' \\\n  https://grafana.example.com/api\n",
            "marble-orchard",
        ),
    ],
    ids=[
        "quoted",
        "compose",
        "yaml-snake",
        "environment-dotted",
        "properties-dotted",
        "libpq-keywords",
        "two-words-argument",
        "two-words-shell-default",
        "two-words-ruby-default",
        "two-words-curl-user",
    ],
)
def test_passphrases_of_plain_words_under_a_password_name_are_redacted(text: str, phrase: str) -> None:
    redacted, counts = redact(text)
    assert phrase not in redacted and sum(counts.values()) == 1


@pytest.mark.parametrize(
    "text",
    [
        "password = generated_secure_phrase\n",  # a variable in code
        "connect(password=generated_secure_phrase)\n",
        "self.password = generated_secure_phrase\n",
        "passwordSecret: grafana-admin-credentials\n",  # the name of a secret in a store
        'password = "db-admin-password"\n',
        'token = "velvet-ticket-harbour-lamp"\n',  # plain words under a token's name: a name
        "'password' => '--password='.$conn['password'],\n",  # code after the name's literal
        "url = parse('https://db.example.com:5432,replica:6543@gw.example.com/app')\n",  # a list of hosts
        'password = "auto-generated"\n',  # two words that say no password is here
        'password = "not-set"\n',
        "curl -u admin https://grafana.example.com/api\n",  # curl asks for the password
        "curl -u builder42:builder42 https://ci.example.com/hook\n",  # the user again
        'curl -u "$GRAFANA_USER:$GRAFANA_PASSWORD" https://grafana.example.com/api\n',
        "docker run -p 8080:80 -u app nginx\n",  # a port, not a password
        "openssl rsa -in key.pem -passin pass:$KEY_PASS -out plain.pem\n",
        'variable "region" {\n  sensitive = true\n  default   = "eu-west-1"\n}\n',  # a word, not a secret
    ],
    ids=[
        "variable",
        "argument",
        "attribute",
        "store-name",
        "naming-words",
        "token-name",
        "php-concat",
        "host-list",
        "two-words-state",
        "two-short-words",
        "curl-user-alone",
        "curl-user-again",
        "curl-references",
        "docker-port",
        "openssl-reference",
        "terraform-word",
    ],
)
def test_plain_words_that_name_or_are_code_stay(text: str) -> None:
    assert redact(text) == (text, {})


# a password passed to a command by its role, whatever its shape
@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("curl --user ops:Tr0ub4dor3 -X POST https://grafana.example.com/api\n", "Tr0ub4dor3"),
        ("  - twine upload -u ci-publisher -p .Vd_kPz3nT8QwL.hen_ dist/*\n", ".Vd_kPz3nT8QwL.hen_"),
        ("docker login -u deploy -p 'Qx7-harbor-Lamp' registry.example.com\n", "Qx7-harbor-Lamp"),
        ("helm registry login -u ci --password Zq4-lantern-Fox oci.example.com\n", "Zq4-lantern-Fox"),
        (
            "openssl enc -aes-256-cbc -pbkdf2 -pass pass:plum-Garden-Wall! -in a.dump -out a.enc\n",
            "plum-Garden-Wall!",
        ),
    ],
    ids=["curl-user", "twine", "docker-login", "helm-registry", "openssl-pass"],
)
def test_a_password_a_command_is_given_is_redacted(text: str, secret: str) -> None:
    redacted, counts = redact(text)
    assert secret not in redacted and counts == {"command-line-password": 1}


# a Terraform variable's default is a secret when its block says `sensitive = true` or its name is a
# credential's, whatever the value's shape: a hex key, plain words
@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            'variable "metrics_app_key" {\n  type      = string\n  sensitive = true\n  default   = <<-EOT\n'
            "    5d0c8e7a1b2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d\n  EOT\n}\n",
            "5d0c8e7a1b2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d",
        ),
        (
            'variable "grafana_admin" {\n  sensitive = true\n  default   = "marble-orchard"\n}\n',
            "marble-orchard",
        ),
        (
            'variable "signing_key" {\n  type    = string\n  default = "3f9a1c2b7d4e5f60"\n}\n',
            "3f9a1c2b7d4e5f60",
        ),
    ],
    ids=["sensitive-heredoc-hex", "sensitive-words", "credential-name-hex"],
)
def test_a_sensitive_terraform_default_is_redacted(text: str, secret: str) -> None:
    redacted, counts = redact(text)
    assert secret not in redacted and sum(counts.values()) == 1
