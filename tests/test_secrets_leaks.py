"""Forms of secrets that reached the index: a value on the line below its name, tokens known by their
prefix alone, a secret passed beside its key id. Fakes are assembled from parts, as in test_secrets."""

from __future__ import annotations

import base64
import gzip
import hashlib
import hmac

import pytest

from rag.secrets import is_secret_file, redact

PW = "Zq8mN3" + "pL7kR2"
PW2 = "Hv4tR9" + "xQ2mWx!"
PW3 = "k7Lw2Pq" + "9Xz4Rt"


def assert_redacted(text: str, secrets: list[str], counts: dict[str, int]) -> str:
    """Redact `text`; check the counts, that every secret is gone and that no line moved."""
    redacted, found = redact(text)
    assert found == counts
    for secret in secrets:
        assert secret not in redacted
    assert redacted.count("\n") == text.count("\n")
    return redacted


# ---- a value on the line below its name ---------------------------------------------------------

PYTHON_SETTINGS = f'''"""Production settings: the base settings with the deployment's services."""

from .base import *  # noqa: F403

DEBUG = False
ALLOWED_HOSTS = ["app.example.com"]

DATABASES["default"]["PASSWORD"] = (
    "{PW}"
)
EMAIL_HOST_USER = "apikey"
EMAIL_HOST_PASSWORD = (
    "{PW2}"  # rotated every quarter
)


class Settings(BaseSettings):
    redis_url: str = "redis://cache:6379/0"
    stripe_webhook_secret: str = (
        "{PW3}"
    )
    page_size: int = (
        50
    )
'''


def test_python_values_in_brackets_below_their_names() -> None:
    redacted = assert_redacted(PYTHON_SETTINGS, [PW, PW2, PW3], {"password-assignment": 3})
    # the literal is redacted where it stands: the brackets, the comment and every line stay
    assert '    "[REDACTED:password-assignment]"  # rotated every quarter\n' in redacted
    assert redacted.count("(\n") == PYTHON_SETTINGS.count("(\n")


TYPESCRIPT_CONFIG = f"""import {{ defineConfig }} from "./config";

export const DB_PASSWORD =
  "{PW}";

const apiToken = (
  "{PW2}"
);

export const SMTP_PASSWORD =
  `{PW3}`;

export default defineConfig({{ port: 8080, retries: 3 }});
"""


def test_javascript_values_below_their_names() -> None:
    assert_redacted(TYPESCRIPT_CONFIG, [PW, PW2, PW3], {"password-assignment": 2, "token-assignment": 1})


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            f'    private static final String SMTP_PASSWORD =\n        "{PW}";\n',
            "password-assignment",
        ),
        (f'    val apiKey =\n        "{PW}"\n', "api-key-assignment"),
        (f"    'password' =>\n        '{PW}',\n", "password-assignment"),
        (f'$config["db_password"] =\n    "{PW}";\n', "password-assignment"),
        (f'    "client_secret": (\n        "{PW}"\n    ),\n', "password-assignment"),
        (f'db_password := (\n    "{PW}"\n)\n', "password-assignment"),
        (f'    db_password: SecretStr = "{PW}"\n', "password-assignment"),
        (f'    api_key: Optional[str] = "{PW}"\n', "api-key-assignment"),
        (f'os.environ["DB_PASSWORD"] = "{PW}"\n', "password-assignment"),
    ],
    ids=[
        "java",
        "kotlin",
        "php-array",
        "php-subscript",
        "python-dict",
        "walrus",
        "typed",
        "typed-optional",
        "subscript",
    ],
)
def test_values_in_other_languages_and_forms(text: str, kind: str) -> None:
    assert_redacted(text, [PW], {kind: 1})


@pytest.mark.parametrize(
    "text",
    [
        f'if password ==\n    "{PW}":\n    pass\n',
        'message = (\n    "Your password was reset2 today"\n)\n',
        'label = (\n    "Password"\n)\n',
        'PASSWORD_HELP =\n    "At least 12 characters, with 1 digit";\n',
        'token_path = (\n    "secrets/api_token_2.txt"\n)\n',
        'api_key_header =\n    "X-Api-Key-V2";\n',
        f'greeting = (\n    "{PW[:10]}"\n)\n',  # a name that holds no credential
        "    password: str = None\n",
        "access_token: OAuth2Token = Depends(oauth2_scheme)\n",
        f'assert response.json()["token"] == "{PW[:10]}"\n',
    ],
    ids=[
        "comparison",
        "prose",
        "a-word",
        "prose-below",
        "path",
        "header-name",
        "not-a-credential-name",
        "typed-none",
        "typed-dependency",
        "subscript-comparison",
    ],
)
def test_values_below_names_that_are_not_credentials(text: str) -> None:
    assert redact(text) == (text, {})


# ---- tokens known by their prefix, anywhere on a line -------------------------------------------

PYPI = (
    "pypi-AgEIcHlwaS5vcmc" + "Okd2vlDy6QLF5CNu7jxyjDp1WH6g7M3lcxX001hX5x_eukms_mQP6ZHQwJEvhLxDb45eV4oSboNjJ"
)
TEST_PYPI = "pypi-AgENdGVzdC5weXBpLm9yZw" + "PAB6FdYZID0KjoR_rAJBsQvfJbxQZhSIWWoBfRqGB8HZu_2qi3R50xJne_27Ur6H"
GHS = "ghs_" + "sj4f4obypwnxtzF9t1QeWridCPTbiIZxVrTJ"
GHU = "ghu_" + "G8NIGZ42TpqmT4RVpGHhl3GI87g9Mpryd6YJ"
GHR = "ghr_" + "SUVVqi2iwBB7IOMluMsokPnGZ7WzmlxiYYoB"
GH_FINE = (
    "github_pat_" + "lNiVVkcYTvz2BpotHHoOo8_" + "JPt9bSpznjG9CYxVijJp5dYdh384IF5jyddVGh3XZLPf9vLtk4Ohexs7B7m"
)
GLPAT = "glpat-" + "KY8e04hA_xVndoTd8ryo"
GLDT = "gldt-" + "1YMEx09AFaqkeY5q8L9d"
GLRT = "glrt-" + "D8nVhY56b83FM-1jYIr-"
XOXB = "xoxb-" + "3353532302144-9295415612894-" + "UJCKdR80OeQuChAnONPL7VYg"
XOXP = "xoxp-" + "6172897206695-2021444533388-4717606001369-" + "0814da76d0ac87d37088ce2885181c7d"
XAPP = (
    "xapp-"
    + "1-A0LFMY0ZYA-6915975965903-"
    + "8dd63fb13e173c6535b4fa4091f9a8ec26ad7738a4dae08daab449813d80de7c"
)
XOXE = "xoxe.xoxp-" + (
    "1-iXJdHeEJm19K88t2Im6mQZi2vLT0LgCTrxNZJIovn3ZVCpU416SPuxEp6JPqc5EVjQ0OD2G6b3jByFYncOT1OO"
    "DrZLrzS7aChROPKjHEAxVL33jvkpZnm3UyKgiSjx3vyk1OdsjxSNWgpB8Zdj"
)
STRIPE = "sk_" + "live_" + "ctIIyFxcMPXhhgkoJG9Fc7HI"
STRIPE_RESTRICTED = "rk_" + "live_" + "d3Lzmom0o9H2cnOOCHZvOuEc"
OPENAI = "sk-" + "jqnf1qAyZHni5YqChZ6SygqjpdcW441sJFhJcrcVi8ylctWJ"
OPENAI_PROJ = (
    "sk-" + "proj-" + "OBM_wj4EOpkVWr8IDEUPQvk98UMD89CPOUMtq6FGC1wfOUfIKFsGEVCCKP38Rp1CICgWa51dgG2vhJ_lgoTd1"
)
ANTHROPIC = (
    "sk-" + "ant-api03-" + "udEjbTGc0fopJzgX_nGFiYMKn3PJdRK0wMWivWaCUNZtcbcYKyO0Snh10fxraOWqRBkXDH-T2OP1u5"
)
HF = "hf_" + "hQldKyyZOmceJfJXjrNSausWIjZInHoCwq"
HF_ORG = "api_org_" + "iTwJZzxESBRxLGPeljEkxVjqDjNdRbTHMa"
NPM = "npm_" + "15hvv4GXx0qfkCvml10busXZ9FiwqmPCjkvQ"
SENDGRID = "SG." + "ZYgRqhCAsgu9TtaQuCAZKe" + "." + "BlcX7hJHib-yRH5HFkouShQ1XgjemsJDIxIEg_lp5YZ"
GOOGLE = "AIza" + "SynnUwYetxQmbhhzxxMPZED4GO9Yy-aS6jG"
GOOGLE_OAUTH = "GOCSPX-" + "S9HSWZShNK3X6IZK6MR-jBFhCkg0"
DOCKER = "dckr_pat_" + "e5lxM3JQAf3y1oTDsvwwAxRYvwk"
DIGITALOCEAN = "dop_v1_" + "a0be6b077dafdafb27cce4b7892d6ba9cefdb4fa84d94d238c2616f662486781"
VAULT = (
    "hvs." + "CAESILeak0JN4QDZzd7HFyKSr91xhsTSiWesG2pyHmgNX9vuUc-gcTb3gmfIRKBnCNa3Htqg9UJnkkpbtpGiUK7-dIKL0VZ"
)
AZURE_SECRET = "8qN8Q~" + "8-bFe0KpZkdeXRAslSfAOUHhP0u~fpfKTZ"
GRAFANA = "glsa_" + "sRTiaG6RLtg9qlNG94DQVSIipMp0ech9_783a9ec4"

DEPLOY_SCRIPT = f"""#!/usr/bin/env bash
# Release: build, publish, tag, announce. Run from the repository root.
set -euo pipefail

python -m build
twine upload -u __token__ -p {PYPI} dist/*
twine upload --repository testpypi -u __token__ -p {TEST_PYPI} dist/*
npm publish --//registry.npmjs.org/:_authToken {NPM}
git push https://x-access-token:{GHS}@github.com/acme/app.git "v$VERSION"
git push https://oauth2:{GLPAT}@gitlab.com/acme/app.git "v$VERSION"
echo {DOCKER} | docker login -u acme-ci --password-stdin
curl -fsS -H "Authorization: Bearer {XOXB}" -d channel=releases -d text="v$VERSION" https://slack.com/api/chat.postMessage
huggingface-cli upload acme/model ./model --token {HF}
"""


def test_deploy_script_tokens_without_names() -> None:
    assert_redacted(
        DEPLOY_SCRIPT,
        [PYPI, TEST_PYPI, NPM, GHS, GLPAT, DOCKER, XOXB, HF],
        {
            "pypi-token": 2,
            "npm-token": 1,
            "github-token": 1,
            "gitlab-token": 1,
            "dockerhub-token": 1,
            "slack-token": 1,
            "huggingface-token": 1,
        },
    )


# (a line with the token and no name that says what it is, the kind, the token)
PREFIXED_TOKENS = [
    (f"twine upload -p {PYPI} dist/*", "pypi-token", PYPI, "pypi"),
    (f"twine upload -p {TEST_PYPI} dist/*", "pypi-token", TEST_PYPI, "test-pypi"),
    (f"gh auth login --with-token <<< {GHU}", "github-token", GHU, "github-user-to-server"),
    (f"refresh({GHR!r})", "github-token", GHR, "github-refresh"),
    (f"requests.get(url, auth=('bot', '{GH_FINE}'))", "github-token", GH_FINE, "github-fine-grained"),
    (
        f"  - git clone https://gitlab-ci:{GLDT}@gitlab.com/acme/app.git",
        "gitlab-token",
        GLDT,
        "gitlab-deploy",
    ),
    (f"gitlab-runner register --token {GLRT}", "gitlab-token", GLRT, "gitlab-runner"),
    (f"app = App(token={XAPP!r})", "slack-token", XAPP, "slack-app-level"),
    (f"slack_sdk.WebClient({XOXP!r})", "slack-token", XOXP, "slack-user"),
    (f"client.auth_test(token='{XOXE}')", "slack-token", XOXE, "slack-rotating"),
    (f"stripe.Charge.list(api_key='{STRIPE}')", "stripe-key", STRIPE, "stripe-live"),
    (
        f"stripe customers list --api-key {STRIPE_RESTRICTED}",
        "stripe-key",
        STRIPE_RESTRICTED,
        "stripe-restricted",
    ),
    (f"OpenAI({OPENAI!r})", "openai-key", OPENAI, "openai"),
    (
        f'curl -H "Authorization: Bearer {OPENAI_PROJ}" https://api.openai.com/v1/models',
        "openai-key",
        OPENAI_PROJ,
        "openai-project",
    ),
    (
        f'curl -H "x-api-key: {ANTHROPIC}" https://api.anthropic.com/v1/messages',
        "anthropic-key",
        ANTHROPIC,
        "anthropic",
    ),
    (f"login({HF_ORG!r})", "huggingface-token", HF_ORG, "huggingface-org"),
    (f"curl --user apikey:{SENDGRID} smtp://smtp.sendgrid.net", "sendgrid-key", SENDGRID, "sendgrid"),
    (
        f"fetch(`https://maps.googleapis.com/maps/api/geocode/json?address=x&key={GOOGLE}`)",
        "google-api-key",
        GOOGLE,
        "google",
    ),
    (
        f'flow = Flow.from_client_config({{"web": {{"client_secret": "{GOOGLE_OAUTH}"}}}})',
        "google-oauth-secret",
        GOOGLE_OAUTH,
        "google-oauth",
    ),
    (f"doctl auth init --access-token {DIGITALOCEAN}", "digitalocean-token", DIGITALOCEAN, "digitalocean"),
    (f"vault login {VAULT}", "vault-token", VAULT, "vault"),
    (
        f'ClientSecretCredential(tenant, client, "{AZURE_SECRET}")',
        "azure-client-secret",
        AZURE_SECRET,
        "azure-client-secret",
    ),
    (f"grafana.api(auth='{GRAFANA}')", "grafana-token", GRAFANA, "grafana"),
]


@pytest.mark.parametrize(
    ("text", "kind", "token"), [c[:3] for c in PREFIXED_TOKENS], ids=[c[3] for c in PREFIXED_TOKENS]
)
def test_tokens_known_by_their_prefix(text: str, kind: str, token: str) -> None:
    assert_redacted(text, [token], {kind: 1})


# ordinary words and names that start as a token does, and tokens of the wrong shape
PREFIX_LOOKALIKES = [
    ("pip install pypi-simple-index-mirror", "pypi-word"),
    ("pypi-AgEIcHlwaS5vcmc" + "x" * 60, "pypi-fill"),
    ("npm_config_cache_directory_for_builds_v2", "npm-snake-name"),
    ("see gldt-deploy-token-rotation-guide-for-teams", "gitlab-kebab-words"),
    ("glrt-runner-authentication-token-docs", "gitlab-runner-words"),
    ("xapp-1-config-loader", "slack-app-words"),
    ("xoxe.xoxp-1-" + "abc", "slack-rotating-too-short"),
    ("api_org_settings_for_organisations_v2", "hf-org-snake-name"),
    ("api_org_" + "OrganizationSettingsPanelWidgetView", "hf-org-camel-name"),
    ("GOCSPX-client-secret-placeholder", "google-oauth-words"),
    ("dckr_pat_example_token_here_x", "dockerhub-words"),
    ("dop_v1_" + "0" * 64, "digitalocean-zeros"),
    ("hvs.token_accessor_lookup", "vault-attribute"),
    ("glc_" + "a" * 40, "grafana-fill"),
    ("the sk-learn-compatible estimator and the SK-" + "0" * 32 + " sample", "sk-words"),
    ("path = ~/Q~home/Q~dir", "azure-tilde-words"),
]


@pytest.mark.parametrize("text", [c[0] for c in PREFIX_LOOKALIKES], ids=[c[1] for c in PREFIX_LOOKALIKES])
def test_prefix_lookalikes_survive(text: str) -> None:
    assert redact(text) == (text, {})


# ---- a secret beside its key id, as an SDK constructor's positional arguments --------------------

TWILIO_KEY_SID = "SK" + "ece658bb363f69b6dd6756b98f5b9bd6"
TWILIO_KEY_SECRET = "UBrNuPd5njZkRCED" + "s45yWz2dBAnX3mv5"
TWILIO_ACCOUNT = "AC" + "16907289049395fe29924cba506906fb"
TWILIO_TOKEN = "9bcebe83bcd5fa54" + "80094010cec4f437"
AWS_ID = "AKIA" + "1MT6ZFKG4LEXOJ61"
AWS_SECRET = "7T639aWJHdhJunDJS2uh" + "RfUm4wgtBCyDTc8uNvBd"
ALIBABA_ID = "LTAI" + "XDTY6Nd5HOdqqBoB"
ALIBABA_SECRET = "inQmK530fi6qaX9" + "Dg1RnqI4sCKuewc"
TENCENT_ID = "AKID" + "Mto8oYkkxHqwRgVlxoqLKl0XrkDBPhYF"
TENCENT_SECRET = "8fmtA90cFjrzJUmt" + "zLVHhscVpwPBiAFx"
GCS_ID = "GOOG1E" + "HWHM2ZDZYIN62MWSGU4O71CX5V6O3ASZU3NOOUIWQFFG5R1VIC40ZFE"
GCS_SECRET = "QFT8OUCagYtnV29vJbSW" + "EUPJFPKJdosyGwBVvsV5"

NOTIFY_SCRIPT = f'''"""Send the nightly report by SMS and upload it to the three clouds it is archived in."""

import boto3
from aliyunsdkcore.client import AcsClient
from tencentcloud.common import credential
from twilio.rest import Client

sms = Client("{TWILIO_KEY_SID}", "{TWILIO_KEY_SECRET}", "{TWILIO_ACCOUNT}")
legacy_sms = Client("{TWILIO_ACCOUNT}", "{TWILIO_TOKEN}")
session = boto3.session.Session(
    "{AWS_ID}",  # the report-uploader user
    "{AWS_SECRET}",
    region_name="eu-west-1",
)
gcs = boto3.client(
    "s3", "auto", None, True, None, "https://storage.googleapis.com", "{GCS_ID}", "{GCS_SECRET}"
)
aliyun = AcsClient("{ALIBABA_ID}", "{ALIBABA_SECRET}", "cn-hangzhou")
tencent = credential.Credential("{TENCENT_ID}", "{TENCENT_SECRET}")


def send(report: str) -> None:
    sms.messages.create(to="+15550100", from_="+15550199", body=report[:160])
'''


def test_secrets_beside_their_key_ids() -> None:
    assert_redacted(
        NOTIFY_SCRIPT,
        [TWILIO_KEY_SECRET, TWILIO_TOKEN, AWS_SECRET, GCS_SECRET, ALIBABA_SECRET, TENCENT_SECRET],
        {
            "twilio-api-secret": 1,
            "twilio-auth-token": 1,
            "aws-access-key": 1,  # the key id is redacted too, as everywhere
            "aws-secret-key": 1,
            "gcs-hmac-secret": 1,
            "alibaba-secret-key": 1,
            "tencent-secret-key": 1,
        },
    )


@pytest.mark.parametrize(
    "text",
    [
        f'sms = Client("{TWILIO_KEY_SID}", os.environ["TWILIO_API_SECRET"], "{TWILIO_ACCOUNT}")',
        f'sms = Client("{TWILIO_KEY_SID}", "{"x" * 32}")',
        f'aliyun = AcsClient("{ALIBABA_ID}", "cn-hangzhou")',
        f'tencent = credential.Credential("{TENCENT_ID}", secret_key)',
        f'print("{GCS_ID}", "{"abcdefghij" * 4}")',
    ],
    ids=["secret-from-environment", "placeholder-fill", "region-not-secret", "variable", "lowercase-words"],
)
def test_key_ids_without_a_secret_beside_them(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    "text",
    [
        "password =\n" * 10_000,
        'password = (\n    "a1"\n' * 5_000,
        "password: " + "Optional[" * 10_000,
        'password = "' + "AB" * 50_000 + 'a"',
        'token = "' + "a1." * 30_000 + 'a1"',
        "gldt-" * 20_000,
        "Q~" * 50_000,
        ("SK" + "a1" * 16 + ", // x\n") * 2_000,
        "1-" * 50_000 + "x",
    ],
    ids=[
        "operators-ending-lines",
        "open-parentheses-one-literal",
        "annotation-brackets",
        "capitals-then-lower",
        "dotted-digits",
        "gitlab-prefixes",
        "tilde-q",
        "key-ids-then-comments",
        "short-groups-then-a-letter",
    ],
)
def test_candidates_of_these_forms_are_scanned_in_linear_time(text: str) -> None:
    # 100 KB each, as test_secrets' adversarial lines: none holds a secret
    assert redact(text) == (text, {})


# ---- forms a credential takes beyond a name and a literal ------------------------------------------

HEXED = PW2.encode().hex()
URLENCODED = "".join(f"%{b:02X}" if not chr(b).isalnum() else chr(b) for b in PW2.encode())
SONAR = "squ_" + "27fa287f79f2f4ce974a" + "75e35846e01fbfaef532"
SLACK_PARTS = ("xoxb-284930102267", "-5518230046031-", "QvWVWTo5b6C9M1EknsUAVfTN")
APP_PASSWORD = "jnen zrao" + " qenr dfag"
KEY_BYTES = hashlib.sha256(b"a seed").digest()  # 32 bytes as random as a key's
UUID = "d6992305-e7c3-4a4b-90d3-1d7c18fc01cc"
HEX48 = hashlib.sha256(b"a key").hexdigest()[:48]
MAIL_BODY = base64.encodebytes(
    f"Hi Ana,\r\n\r\nYour temporary password: {PW2}\r\nPlease change it at first login.\r\n".encode()
).decode()
NOTES_BODY = base64.encodebytes(
    b"The release notes for version 2.4 list three fixes and one new option for the scheduler.\r\n"
).decode()


SPELT = "Lantern^" + "Moss#2871"
CHARS = "Basalt$" + "Heron64"
UTF16 = base64.b64encode(("Heron%" + "Quarry58").encode("utf-16-le")).decode()
PEPPER = "5c0e9a" + "71d3b28f46e0ac95b7124d6f38"
COMPOSER = "3f9b1c" + "e07a52d48866b0f1c93a7e24d5b6c01f8a"


HEX_ESCAPED = "".join(f"\\x{ord(c):02x}" for c in SPELT)  # \x4c\x61...
POINT_ESCAPED = "".join(f"\\u{{{ord(c):X}}}" for c in SPELT)  # \u{4C}\u{61}...

# credentials given their role by a command, a call or a sentence, or spelt another way
ROLE_AND_SPELLING = [
    ('static const char password[] = "Marten$Quill42";\n', "Marten$Quill42", "password-assignment"),
    (
        "static const char unlock[] = {\n  "
        + ", ".join(str(ord(c)) for c in "Marten*Quill*42")
        + ", 0\n};\n",
        ", ".join(str(ord(c)) for c in "Marten*Quill*42"),
        "random-value",
    ),
    ("$password = <<<EOT\nMarten$Quill42\nEOT;\n", "Marten$Quill42", "password-assignment"),
    ("my $password = <<'END';\nMarten$Quill42\nEND\n", "Marten$Quill42", "password-assignment"),
    (
        "  algorithm: SHA1\n  seed: " + "R4TWQ7ZK2MPLX6CN" + "3VJD5BHY2GFS7EQA\n",
        "R4TWQ7ZK2MPLX6CN",
        "random-value",
    ),
    (
        "INSERT INTO api_clients (id, signature) VALUES (1, '"
        + "Wq3nZr8TbXk2Lp5"
        + "VmC9dHs4Jf7Gy1Rt6Ne');\n",
        "Wq3nZr8TbXk2Lp5",
        "random-value",
    ),
    (f'private const RELAY_PASSWORD = "{HEX_ESCAPED}";\n', HEX_ESCAPED, "password-assignment"),
    (f'private let bridgePassword = "{POINT_ESCAPED}"\n', POINT_ESCAPED, "password-assignment"),
    (f'relay = "{HEX_ESCAPED}"\n', HEX_ESCAPED, "random-value"),
    (
        "var route = new string(new[] { " + ",".join(f"'{c}'" for c in CHARS) + " });\n",
        "'B','a','s'",
        "random-value",
    ),
    (
        "String pw = new String(new char[] {" + ", ".join(f"'{c}'" for c in CHARS) + "});\n",
        "'B', 'a', 's'",
        "random-value",
    ),
    (
        f"$nasPassword = [Text.Encoding]::Unicode.GetString([Convert]::FromBase64String('{UTF16}'))\n",
        UTF16,
        "random-value",
    ),
    (
        f"$cred = New-Object PSCredential('svc', (ConvertTo-SecureString '{CHARS}' -AsPlainText -Force))\n",
        CHARS,
        "command-line-password",
    ),
    (
        f"net use J: \\\\files01\\scans /user:CLINIC\\scanner {CHARS} /persistent:no\n",
        CHARS,
        "command-line-password",
    ),
    ("DEPLOY_PASS ?= Walrus=Pebble=83\n", "Walrus=Pebble=83", "password-assignment"),
    (
        f"RUN composer config --global --auth http-basic.repo.example.com deploy {COMPOSER}\n",
        COMPOSER,
        "command-line-password",
    ),
    (
        '  local session = sync.connect("archiver", "Kestrel@Tundra8")\n',
        "Kestrel@Tundra8",
        "credential-argument",
    ),
    (
        "  @signing_key <<" + ", ".join(str(b) for b in KEY_BYTES) + ">>\n",
        ", ".join(str(b) for b in KEY_BYTES[:4]),
        "random-value",
    ),
    (
        "-define(HMAC_KEY, <<" + ",".join(f"16#{b:02X}" for b in KEY_BYTES[:24]) + ">>).\n",
        ",".join(f"16#{b:02X}" for b in KEY_BYTES[:4]),
        "random-value",
    ),
    (
        "Hi, since the update I can't log in. My password is Kestrel$Tundra8 if that helps.\n",
        "Kestrel$Tundra8",
        "password-assignment",
    ),
    (
        "  broker_password = <<-EOT\n    Osprey#Ledger$Tide\n  EOT\n",
        "Osprey#Ledger$Tide",
        "password-assignment",
    ),
    (
        "static const char unlock[] = { " + ", ".join(str(ord(c)) for c in "Osprey*Fern*5521") + ", 0 };\n",
        ", ".join(str(ord(c)) for c in "Osprey*Fern*5521"),
        "random-value",
    ),
    (
        "  static final pin = String.fromCharCodes(\n      ["
        + ", ".join(str(ord(c)) for c in "Osprey*Fern*5521")
        + "]);\n",
        ", ".join(str(ord(c)) for c in "Osprey*Fern*5521"),
        "random-value",
    ),
    (
        '    password = new String(Base64.getDecoder.decode("'
        + base64.b64encode(b"Osprey-Fern-5521").decode()
        + '"), UTF_8)\n',
        base64.b64encode(b"Osprey-Fern-5521").decode(),
        "random-value",
    ),
    (
        'net use %SHARE% /user:CORP\\svc_drop "Osprey.Fern.5521" /persistent:no\n',
        "Osprey.Fern.5521",
        "command-line-password",
    ),
    (
        "  CONNECT TO REPORTS_RO IDENTIFIED BY Osprey_Fern_5521\n",
        "Osprey_Fern_5521",
        "password-assignment",
    ),
    (
        'my $relay = "' + "".join(f"\\x{{{ord(c):02x}}}" for c in "Osprey!Fern9") + '";\n',
        "".join(f"\\x{{{ord(c):02x}}}" for c in "Osprey!Fern9"),
        "random-value",
    ),
    (
        "  printf '" + "".join(f"\\x{ord(c):02x}" for c in "wren7rook") + "' | vault login -\n",
        "".join(f"\\x{ord(c):02x}" for c in "wren7rook"),
        "random-value",
    ),
    ("The password for root is wren7rook, until the next rotation.\n", "wren7rook", "password-assignment"),
    (
        "vault write auth/approle/login role_id=$ROLE secret_id=8c1d2f9a-47e3-4b6c-a0d5-93e7f2b1c864\n",
        "8c1d2f9a-47e3-4b6c-a0d5-93e7f2b1c864",
        "password-assignment",
    ),
    (
        '    pool = oracledb.create_pool("ledger_rw/Pintail#Marsh5@ora-ledger.corp.example:1521/LEDGER")\n',
        "Pintail#Marsh5",
        "url-password",
    ),
    ("ORACLE_DSN=ledger_rw/Pintail#Marsh5@ledger-db/LEDGER\n", "Pintail#Marsh5", "url-password"),
    ("$cfg{smtp_pass} ||= 'Tern!Cove-83';\n", "Tern!Cove-83", "password-assignment"),
    (
        'db = LibPQ.Connection("host=db.example.org dbname=tides user=reader password=Tern&Cove83")\n',
        "Tern&Cove83",
        "password-assignment",
    ),
    ('"Tern_Cove83x" -> smtp_password\n', "Tern_Cove83x", "password-assignment"),
    ("  tide_gauge:\n    password: !!str 0492718365\n", "0492718365", "password-assignment"),
    (
        "wandb login --relogin " + hashlib.sha1(b"a run's key").hexdigest() + "\n",
        hashlib.sha1(b"a run's key").hexdigest(),
        "command-line-password",
    ),
    ("./migrate --db-password Walnut2026# --host db01\n", "Walnut2026#", "command-line-password"),
    ("keytool -list -keystore app.jks -storepass Walnut2026#\n", "Walnut2026#", "command-line-password"),
    (
        f'    // Mixed into each login code before it is hashed.\n    const val LOGIN_PEPPER_HEX = "{PEPPER}"\n',
        PEPPER,
        "random-value",
    ),
]
ROLE_AND_SPELLING_IDS = [
    "a-c-array-declarator",
    "a-c-array-of-codes-over-lines",
    "a-php-heredoc",
    "a-perl-heredoc",
    "a-totp-seed-below-its-algorithm",
    "random-text-in-a-column-named-by-a-digest-word",
    "php-hex-escapes",
    "swift-code-point-escapes",
    "hex-escapes-without-a-name",
    "csharp-char-array",
    "java-char-array",
    "powershell-utf16-base64",
    "powershell-secure-string",
    "net-use-password-after-the-user",
    "make-conditional-with-equals-signs",
    "composer-auth",
    "connect-given-a-user-and-a-password",
    "elixir-binary-of-key-bytes",
    "erlang-binary-of-based-bytes",
    "a-password-in-a-support-ticket",
    "hcl-heredoc",
    "c-char-array-of-codes",
    "dart-char-codes-on-the-next-line",
    "scala-base64-decoder",
    "net-use-quoted-password-to-a-variable-share",
    "oracle-unquoted-password",
    "perl-braced-hex-escapes",
    "hex-escapes-piped-to-a-login",
    "a-password-stated-for-a-user",
    "an-approle-secret-id",
    "perl-hash-element-or-assigned",
    "libpq-keywords-password-last",
    "r-rightward-assignment",
    "yaml-string-tag-on-digits",
    "a-hex-key-given-to-a-login",
    "an-ezconnect-login-given-to-a-pool",
    "an-ezconnect-login-in-an-env-line",
    "a-flag-named-by-a-password",
    "a-flag-whose-name-ends-in-pass",
    "a-pepper-below-a-comment-on-hashing",
]


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (f'CARRIER_PASSWORD = bytes.fromhex("{HEXED}").decode()\n', HEXED, "password-assignment"),
        (f"define( 'DB_PASSWORD', urldecode( '{URLENCODED}' ) );\n", URLENCODED, "password-assignment"),
        (
            'const secret = Buffer.from("' + PW2.encode().hex() + '", "hex").toString();\n',
            PW2.encode().hex(),
            "password-assignment",
        ),
        ('SLACK_BOT_TOKEN = "{}" "{}" "{}"\n'.format(*SLACK_PARTS), SLACK_PARTS[1], "slack-token"),
        (f"SONAR_TOKEN: ${{{{ secrets.SONAR_TOKEN || '{SONAR}' }}}}\n", SONAR, "token-assignment"),
        (f'const key = process.env.STRIPE_SECRET ?? "{PW}";\n', PW, "password-assignment"),
        (f'password = os.environ.get("DB_PASSWORD") or "{PW2}"\n', PW2, "password-assignment"),
        (f'config :app, secret: System.get_env("APP_SECRET") || "{PW}"\n', PW, "password-assignment"),
        (f'return jwt.encode(claims, "{PW2}", algorithm="HS256")\n', PW2, "credential-argument"),
        (f'const t = jwt.sign({{ sub: id }}, "{PW2}");\n', PW2, "credential-argument"),
        (f'val auth = Credentials.basic("svc-android", "{PW2}")\n', PW2, "credential-argument"),
        (f'sig = hmac.new(b"{PW2}", body, hashlib.sha256)\n', PW2, "credential-argument"),
        (
            f'auth := smtp.PlainAuth("", "alerts@example.com", "{APP_PASSWORD}", "smtp.gmail.com")\n',
            APP_PASSWORD,
            "credential-argument",
        ),
        (f"url=jdbc:oracle:thin:billing_app/{PW2}@db.internal:1521/BILLPDB\n", PW2, "url-password"),
        ("password = 'batten down the hatches 1987'\n", "batten down the hatches", "password-assignment"),
        (
            "  db_password => Sensitive('granite kettle umbrella fjord'),\n",
            "granite kettle",
            "password-assignment",
        ),
        ('cloud.auth: "ingest:Wh1sk3y T4ng0 F0xtr0t"\n', "Wh1sk3y T4ng0", "password-assignment"),
        (f"    stats auth admin:{PW2}\n", PW2, "password-assignment"),
        (f'dsn := "app:{PW2}@tcp(db:3306)/app"\n', PW2, "url-password"),
        (f'conn = "account=x1;user=ETL;password=Fjord&{PW};db=K"\n', PW, "password-assignment"),
        ('res = red:auth("' + PW2 + '")\n', PW2, "credential-argument"),
        (
            'storePassword = String(Base64.getDecoder().decode("'
            + base64.b64encode(PW2.encode()).decode()
            + '"))\n',
            base64.b64encode(PW2.encode()).decode(),
            "password-assignment",
        ),
        (f'sh "doppler run --token dp.st.prd.{PW}{PW2[:6]}{PW} -- make"\n', PW, "token-assignment"),
        (
            'KEY = "' + "".join(f"\\x{b:02x}" for b in KEY_BYTES) + '"\n',
            "\\x",
            "random-value",
        ),
        (
            f'cs = "Driver={{ODBC Driver 18}};Uid=report;Pwd={{{PW2};2023}};Encrypt=yes;"\n',
            PW2,
            "password-assignment",
        ),
        (f'my $db_password = pack("H*", "{HEXED}");\n', HEXED, "password-assignment"),
        (
            'static const char kApiKey[] =\n    "' + "".join(f"\\{ord(c):03o}" for c in HEX48[:32]) + '";\n',
            "".join(f"\\{ord(c):03o}" for c in HEX48[:4]),
            "random-value",
        ),
        (
            "const hmacSecret = String.fromCharCode(" + ", ".join(str(ord(c)) for c in PW2) + ");\n",
            ", ".join(str(ord(c)) for c in PW2[2:6]),
            "password-assignment",
        ),
        (f"$secret = @('{PW}', '{PW2[:6]}', '{PW}') -join ''\n", PW2[:6], "password-assignment"),
        (
            '{"bootstrap": "'
            + base64.b64encode(gzip.compress(f'{{"api_secret": "{PW2}"}}'.encode())).decode()
            + '"}\n',
            base64.b64encode(gzip.compress(f'{{"api_secret": "{PW2}"}}'.encode())).decode()[:40],
            "password-assignment",
        ),
        (
            f"SELECT pgp_sym_encrypt(body, '{APP_PASSWORD} anchor') FROM chat;\n",
            APP_PASSWORD,
            "credential-argument",
        ),
        (
            "TravelURL=203.0.113.7:7777?Password=marlin-tuesday-42?Name=Relay\n",
            "marlin-tuesday",
            "password-assignment",
        ),
        (f"user matchmaker on >{PW2} ~mm:* +@read\n", PW2, "password-assignment"),
        (
            'send "username admin secret \\"x\\"\\r"\nsend "Harbor-Quill-Marigold-47\\r"\n',
            "Quill-Marigold",
            "random-value",
        ),
        (f"p4 login -a <<'EOF'\n{PW2}\nEOF\n", PW2, "command-line-password"),
        ("xcrun altool --upload-app -u dev@x.io -p jvoh-wsqp-cfuk-wvwo\n", "jvoh-wsqp", "random-value"),
        (
            'http.DefaultRequestHeaders.Add("Api-Key", "NRAK-QZPWXKVMRTLHJDNBCFGSYAUE")\n',
            "QZPWXKVMRT",
            "api-key-assignment",
        ),
        (f"alter role feeds_rw with password '{PW2}';\n", PW2, "password-assignment"),
        (
            f'mysql_real_connect(conn, "db.internal", "etl", "{PW2}", "app", 3306, NULL, 0);\n',
            PW2,
            "credential-argument",
        ),
        (f"if (!ftp_login($conn, 'archive', '{PW2}')) {{\n", PW2, "credential-argument"),
        (
            'const T: &str = concat!(\n    "'
            + SLACK_PARTS[0]
            + '",\n    "'
            + SLACK_PARTS[1]
            + '",\n    "'
            + SLACK_PARTS[2]
            + '"\n);\n',
            SLACK_PARTS[2],
            "slack-token",
        ),
        (
            f"echo '{PW2}' | docker login -u ci --password-stdin registry.example.com\n",
            PW2,
            "command-line-password",
        ),
        (
            f"printf '%s' '{APP_PASSWORD} quarry' | \\\n  gpg --batch --passphrase-fd 0 -c x.tar\n",
            APP_PASSWORD,
            "command-line-password",
        ),
        (f"echo 'deploy:{PW2}' | chpasswd\n", PW2, "command-line-password"),
        (f"net use Z: \\\\nas\\media {PW2} /user:HQ\\svc /persistent:no\n", PW2, "command-line-password"),
        (f"proxy = build-bot:{PW2}@proxy.corp.internal:3128\n", PW2, "url-password"),
        (
            '<input type="hidden" name="relay_pass" value="' + "".join(f"&#{ord(c)};" for c in PW2) + '">\n',
            "&#".join(f"{ord(c)};" for c in PW2[:3]),
            "password-assignment",
        ),
        (
            '"Password"=hex:' + ",".join(f"{b:02x}" for b in PW2.encode()) + "\n",
            f"{PW2.encode()[1]:02x},",
            "password-assignment",
        ),
        ('Authorization = "Splunk ' + UUID + '"\n', UUID, "password-assignment"),
        ("ENV SCW_SECRET_KEY " + UUID + "\n", UUID, "password-assignment"),
        ('  sdkKey: "sdk-' + UUID + '",\n', UUID, "api-key-assignment"),
        (
            "<key>RevenueCatSecretAPIKey</key>\n<string>sk_" + PW + PW2[:6] + PW + "</string>\n",
            PW,
            "random-value",
        ),
        ('.unwrap_or_else(|_| "sk_' + HEX48 + '".to_string()),\n', HEX48, "random-value"),
        (
            f"//nas/masters /mnt/m cifs username=svc,password={PW2},domain=H,uid=1001 0 0\n",
            PW2,
            "password-assignment",
        ),
        (f"  db_password: !unsafe '{PW2}'\n", PW2, "password-assignment"),
        (
            "Content-Transfer-Encoding: base64\n\n" + MAIL_BODY + "\n",
            MAIL_BODY.splitlines()[0][20:40],
            "password-assignment",
        ),
        *ROLE_AND_SPELLING,
    ],
    ids=[
        "hex-decoded",
        "url-decoded",
        "buffer-from-hex",
        "adjacent-literals",
        "actions-or-default",
        "nullish-default",
        "python-or-default",
        "elixir-or-default",
        "jwt-encode-key",
        "jwt-sign-secret",
        "okhttp-basic",
        "hmac-key",
        "app-password",
        "oracle-jdbc-thin",
        "passphrase",
        "wrapped-passphrase",
        "login-pair-quoted",
        "login-pair-directive",
        "go-mysql-dsn",
        "connection-string-to-its-semicolon",
        "redis-auth-one-argument",
        "decoded-in-a-wrapper",
        "dotted-token-after-a-flag",
        "escaped-key-bytes",
        "odbc-braces",
        "perl-pack-hex",
        "c-octal-escapes",
        "char-codes",
        "powershell-join",
        "gzip-base64",
        "pgcrypto-passphrase",
        "option-string-query",
        "redis-acl",
        "expect-send",
        "heredoc-to-a-login",
        "app-password-anywhere",
        "letters-of-one-case-in-a-header",
        "sql-with-password-lower-case",
        "mysql-c-api",
        "php-ftp-login",
        "rust-concat",
        "docker-login-stdin",
        "gpg-passphrase-stdin",
        "chpasswd",
        "net-use",
        "proxy-without-a-scheme",
        "html-character-references",
        "registry-hex-bytes",
        "uuid-after-an-authorization-scheme",
        "uuid-in-a-dockerfile-env",
        "uuid-with-a-vendor-prefix",
        "plist-string-element",
        "hex-after-a-vendor-prefix",
        "mount-options",
        "yaml-tag",
        "base64-mail-body",
        *ROLE_AND_SPELLING_IDS,
    ],
)
def test_encoded_assembled_defaulted_and_passed_credentials(text: str, secret: str, kind: str) -> None:
    redacted, found = redact(text)
    assert found == {kind: 1}, redacted
    assert secret not in redacted and redacted.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "text",
    [
        "add_header Content-Security-Policy \"script-src 'self' 'sha256-eO/Sp50aG383DQas3q9Y+1a5bBDGPwer4tJzwSh9iqQ='\";\n",
        'msg = greeting or "Hello there, friend"\n',
        'banner = "' + "".join(f"\\x{ord(c):02x}" for c in "Hello World") + '"\n',
        'shebang = "' + "".join(f"\\x{{{ord(c):02x}}}" for c in "/usr/bin/env") + '"\n',
        "The password for each user is generated at first login.\n",
        "aws secretsmanager get-secret-value --secret-id prod-billing-db-credentials\n",
        '{"SecretId": "LedgerReplicaSecret2", "RecoveryWindowInDays": 7}\n',
        'static const char digits[] = "' + "".join(f"\\x{ord(c):02x}" for c in "0123456789abcdef") + '";\n',
        'MAGIC = "' + "".join(f"\\x{ord(c):02X}" for c in "HDR&V2X9") + '"\n',
        "      annotations:\n        checksum/secret: "
        + hashlib.sha256(b"rendered secret").hexdigest()
        + "\n",
        "Releases are signed with key `" + hashlib.sha1(b"release key").hexdigest().upper() + "`.\n",
        'const JWKS_KID = "'
        + base64.urlsafe_b64encode(hashlib.sha256(b"jwk").digest()).decode().rstrip("=")
        + '";\n',
        '<img src="assets/Logo2024@2x.png" srcset="assets/Logo2024@3x.webp 3x">\n',
        "      - uses: ledgerhq/setup-ledger2@v3\n",
        "  password: !!str 12345678\n  port: !!str 5432\n",
        "git log --oneline "
        + hashlib.sha1(b"a commit").hexdigest()
        + "\ndocker login registry.example.com\n",
        '"tides-2024.csv" -> out_file\n',
        "export PGOPTIONS='-c search_path=tides -c statement_timeout=5000'\n",
        "        creds = Login(name=row[0], password=row[1])\n",
        'asset = "app_eb0a5b9302e8d32828d8a73f137cc8f0"\n',
        'label = "first part" "second part"\n',
        'name = bytes.fromhex("00ff10ab20cd30ef").hex()\n',
        'password_error = "must be at least 8 characters"\n',
        'url = "jdbc:oracle:thin:@//db.internal:1521/svc"\n',
        "Pwd={your_password};\n",
        'auth := smtp.PlainAuth("", user, password, host)\n',
        'my $magic = pack("H*", "89504e470d0a1a0a0000000d49484452");\n',
        "Content-Transfer-Encoding: base64\n\n" + NOTES_BODY,
        "skip_secret_key_base: environment_specified? && %w[development test].include?(environment),\n",
        '$options["curl"][\\CURLOPT_USERPWD] = "$value[0]:$value[1]";\n',
        'WS_KEY: Final[bytes] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"\n',
        'idempotencyKey: "' + UUID + '",\n',
        '"lodash": "npm:lodash99@4.17.21",\n',
        "cat <<EOF > notes.txt\nrelease notes for the scheduler\nEOF\n",
        'href="/reset?password=reset&step=2"\n',
        "if user is not None and count >limit:\n",
        'token = "THEQUICKBROWNFOXJUMPSOVER"\n',
        "Contact: mailto:ops.team99@example.com\n",
        "echo 'hello world' | grep stdin\n",
        "net use Z: \\\\nas\\media %PASSWORD% /user:HQ\\svc\n",
        'let private twilioApiKeySid = "SK7991fc63d21e84d6cdc4ca7e41b2534e"\n',
    ],
    ids=[
        "csp-hashes",
        "prose-default",
        "a-greeting-in-hex-escapes",
        "a-path-in-braced-escapes",
        "a-password-for-a-user-described",
        "a-secret-named-for-a-cloud-store",
        "a-cloud-secret-name-with-a-digit",
        "a-hex-alphabet-in-escapes",
        "magic-bytes-in-escapes",
        "a-checksum-of-a-secret-annotation",
        "a-release-key-fingerprint",
        "a-json-web-key-id-in-capitals",
        "retina-images",
        "an-action-at-its-version",
        "yaml-string-tag-on-an-example-and-a-port",
        "a-commit-id-and-a-registry-login",
        "r-rightward-file-name",
        "libpq-options",
        "keyword-arguments-of-subscripts",
        "asset-hash",
        "words-side-by-side",
        "binary-decoded",
        "prose-under-a-password-name",
        "oracle-without-user",
        "odbc-placeholder",
        "plain-auth-variables",
        "binary-packed",
        "base64-mail-body-of-prose",
        "ruby-predicate",
        "php-interpolated-pair",
        "a-protocol-constant-under-a-key-name",
        "uuid-under-a-name-of-no-credential",
        "npm-alias-and-version",
        "a-heredoc-to-no-login",
        "a-query-with-a-word",
        "a-comparison",
        "capitals-of-words",
        "mailto-address",
        "no-password-piped",
        "net-use-reference",
        "an-api-key-sid",
    ],
)
def test_look_alikes_of_these_forms_stay(text: str) -> None:
    assert redact(text) == (text, {})


MAILGUN = "key-816feb089e1b" + "ad2fceb7d47f5d5560b0"
POSTMAN = "PMAK-d0c460f816c628e007b95bf0-" + "63eece1e02a8d4d594e8d439994f27"
CHOSEN = "Okonkwo" + "32*"


@pytest.mark.parametrize(
    ("text", "secrets", "kind"),
    [
        (
            f"INSERT INTO `accounts` (`id`, `name`, `api_secret`, `created`) VALUES\n"
            f"(1, 'mailgun', '{MAILGUN}', NOW()),\n(2, 'it''s', '{PW2}', NOW());\n",
            [MAILGUN, PW2],
            "password-assignment",
        ),
        (
            f"COPY public.users (id, email, api_token) FROM stdin;\n1\ta@b.c\t{PW}\n2\tb@c.d\t\\N\n\\.\n",
            [PW],
            "token-assignment",
        ),
        (f"name,initial_portal_password\nbob,{CHOSEN}\n", [CHOSEN], "password-assignment"),
        (
            f'{{"key": "postman_api_key", "value": "{POSTMAN}", "type": "string"}}\n',
            [POSTMAN],
            "random-value",
        ),
        (f"param sqlAdminPassword string = '{PW2}'\n", [PW2], "password-assignment"),
        (
            "dn: uid=svc,ou=people\nuserPassword:: " + base64.b64encode(PW2.encode()).decode() + "\n",
            [base64.b64encode(PW2.encode()).decode()],
            "password-assignment",
        ),
        (
            'pw, _ := hex.DecodeString("' + PW2.encode().hex() + '")\n',
            [PW2.encode().hex()],
            "random-value",
        ),
        (
            'byte[] pw = Base64.getDecoder().decode("' + base64.b64encode(PW2.encode()).decode() + '");\n',
            [base64.b64encode(PW2.encode()).decode()],
            "random-value",
        ),
    ],
    ids=[
        "sql-insert",
        "sql-copy",
        "csv-chosen",
        "postman-variable",
        "typed",
        "ldif-base64",
        "hex-decoded",
        "base64-decoded",
    ],
)
def test_dumped_typed_and_encoded_credentials(text: str, secrets: list[str], kind: str) -> None:
    redacted, found = redact(text)
    assert found == {kind: len(secrets)}, redacted
    assert not any(s in redacted for s in secrets) and redacted.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "text",
    [
        "INSERT INTO users (id, password_hash) VALUES (1, 'pbkdf2_sha256$260000$abc$def');\n",
        "INSERT INTO t (name, password) VALUES ('x', 'changeme');\n",
        'b64("SGVsbG8gV29ybGQh")\n',  # Hello World!
        'x = "SGVsbG9Xb3JsZDEyMw=="\n',  # HelloWorld123: no symbol, not random
        "if password == other:\n",
        "INSERT INTO user (username, password)\nVALUES\n  ('test', 'pbkdf2:sha256:50000$TCI4GzcX$"
        "0de171a4f4dac32e3364c7ddc7c14f3e2fa61f2d17574483f7ffbf131fc2b3f6');\n",
        'EXPECT_FALSE(safe_strto64_base("34234324487834466a", &value, 10));\n',  # a number, printable in hex
        '    "4041424344454647484950515253545556575859"\n',  # digits' table in hex
        "securely hash the password, and that hash is stored. Since this\nquery modifies data,\n",
    ],
    ids=[
        "hash-column",
        "stock-password",
        "encoded-sentence",
        "encoded-words",
        "comparison",
        "werkzeug-hash-in-a-row",
        "hex-number",
        "hex-table",
        "prose-with-commas",
    ],
)
def test_look_alikes_of_dumps_and_encodings_stay(text: str) -> None:
    assert redact(text) == (text, {})


def test_a_joined_template_a_vendor_dotted_token_and_a_list_of_pins() -> None:
    parts = ["hqLcWxXbsY", "2DBrIJ1HT4", "fZlz3GpLu"]
    joined = "      MasterUserPassword: !Join ['', ['{}', '{}', '{}']]\n".format(*parts)
    assert all(p not in redact(joined)[0] for p in parts)
    fn_join = '{{"MasterUserPassword": {{"Fn::Join": ["", ["{}", "{}", "{}"]]}}}}\n'.format(*parts)
    assert all(p not in redact(fn_join)[0] for p in parts)
    vault = "vault login hvs." + "GIp11NhHY8gdLauupi2l2Rai\n"
    assert "GIp11NhHY8gdLauupi2l2Rai" not in redact(vault)[0]
    pins = (
        "    static let pinnedKeyHashes: [String] = [\n"
        '        "2JwxHrNiIGano/fN2siXkA3A7OswemKH8a0Byu/fZjk=",\n'
        '        "5jaV59FSexanHd8rS7LkGHZx8j3QPWbj+HyV+lNcU7M=",\n'
        "    ]\n"
        "              verify_certificate_spki:\n"
        '                - "3IIKccvWExam0uCfkAP0ra1CSoQJrJWUl7ie5s0YIZ8="\n'
    )
    assert redact(pins) == (pins, {})
    tokens = pins.replace("pinnedKeyHashes", "apiTokens").replace(
        "verify_certificate_spki", "upstream_tokens"
    )
    assert sum(redact(tokens)[1].values()) == 3
    template = "      Value: !Join ['', ['arn:aws:s3:::', !Ref Bucket, '/*']]\n"
    assert redact(template) == (template, {})


KEY16 = [0x49, 0xA1, 0xE4, 0x8C, 0xA3, 0x52, 0xBB, 0x1A, 0xF8, 0x0F, 0x59, 0x94, 0xEC, 0xD9, 0x24, 0x8F]


@pytest.mark.parametrize(
    "text",
    [
        "val Key: Array[Byte] = Array[Byte](\n    "
        + ", ".join(f"0x{b:02x}.toByte" for b in KEY16)
        + "\n  )\n",
        "private static final byte[] KEY = {\n    "
        + ", ".join(f"(byte) 0x{b:02X}" for b in KEY16[:8])
        + ",\n    "
        + ", ".join(f"(byte) 0x{b:02X}" for b in KEY16[8:])
        + "\n};\n",
        "integer(int8), parameter :: k(16) = [ &\n   "
        + ", ".join(f"{b - 256 if b > 127 else b}_int8" for b in KEY16[:8])
        + ", &\n   "
        + ", ".join(f"{b - 256 if b > 127 else b}_int8" for b in KEY16[8:])
        + " ]\n",
        "Key : constant Stream_Element_Array (1 .. 16) :=\n  ("
        + ", ".join(f"16#{b:02X}#" for b in KEY16)
        + ");\n",
    ],
    ids=["scala-to-byte", "java-casts-over-lines", "fortran-int8-continued", "ada-based-literals"],
)
def test_key_bytes_written_in_each_languages_way(text: str) -> None:
    redacted, found = redact(text)
    assert found == {"random-value": 1}, redacted


def test_a_public_key_array_by_its_name_stays() -> None:
    text = "const fw_signing_pub = [32]u8{\n    " + ", ".join(f"0x{b:02x}" for b in KEY16 * 2) + ",\n};\n"
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('let honeybadger_token = "hbp_weqLJWtZo8" ^ "E4qc2G1XnDSol" ^ "IzftIIs7yHZyh"\n', "E4qc2G1XnDSol"),
        ('const ntfy_token = "tk_432sc28m" ++ "jqldpudrpn" ++ "n3gbylb7jl5";\n', "jqldpudrpn"),
        (
            "SharePassword = " + " & ".join(f"Chr({ord(c)})" for c in PW2) + "\n",
            " & ".join(f"Chr({ord(c)})" for c in PW2[:4]),
        ),
        (f'  db_password <<- "{PW2}"\n', PW2),
        ('"ldap_bind_password": {\n  "value": "' + PW2 + '"\n},\n', PW2),
        ("Run, putty.exe -ssh ops@host -pw 1qaz@WSX3edc$RFV\n", "1qaz@WSX3edc$RFV"),
        (
            "CREATE TABLE `tokens` (\n  `id` int NOT NULL,\n  `token` varbinary(255) NOT NULL,\n"
            "  PRIMARY KEY (`id`)\n);\nINSERT INTO `tokens` VALUES (3,0x"
            + PW.encode().hex()
            + PW2.encode().hex()
            + ");\n",
            PW.encode().hex(),
        ),
        ('    "archive_password = \\"' + PW2 + '\\"\\n",\n', PW2),  # a notebook's source line
    ],
    ids=[
        "ocaml-caret",
        "zig-plus-plus",
        "vb-chr",
        "r-superassignment",
        "value-object",
        "keyboard-walk",
        "mysqldump-hex-blob",
        "notebook-escaped",
    ],
)
def test_credentials_assembled_assigned_or_dumped_in_more_languages(text: str, secret: str) -> None:
    redacted, found = redact(text)
    assert found and secret not in redacted, redacted


# a password's name, then its value, with syntax between them that no operator list names
BESIDE = "gull4harbor"  # a chosen password of lower-case letters and digits


@pytest.mark.parametrize(
    "text",
    [
        f'  @smtp_password "{BESIDE}"\n',  # Elixir's module attribute
        f'set db_password "{BESIDE}"\n',  # Tcl
        f"set -x DB_PASSWORD {BESIDE}\n",  # fish
        f"setenv DB_PASSWORD {BESIDE}\n",  # csh
        f"ENV DB_PASSWORD {BESIDE}\n",  # a Dockerfile's older form
        f"SetEnv DB_PASSWORD {BESIDE}\n",  # Apache
        f"db.password {BESIDE}\n",  # a .properties file's blank separator
        f'(def admin-password "{BESIDE}")\n',  # Clojure
        f'-define(DB_PASSWORD, "{BESIDE}").\n',  # Erlang
        f"<password>{BESIDE}</password>\n",  # an XML element's text
        f'pw = ENV.fetch("DB_PASSWORD") {{ "{BESIDE}" }}\n',  # Ruby's block default
        f'if password == "{BESIDE}":\n',  # a password checked against a literal
        f"mongosh shop -u admin -p {BESIDE}\n",
        f"zip -P {BESIDE} -r backup.zip data\n",
        f"7z a -p{BESIDE} backup.7z data\n",
        f"openssl enc -aes-256-cbc -k {BESIDE} -in dump.sql -out dump.enc\n",
        f"echo {BESIDE} | sudo -S systemctl restart app\n",
    ],
    ids=[
        "elixir-attribute",
        "tcl-set",
        "fish-set",
        "csh-setenv",
        "dockerfile-env-blank",
        "apache-setenv",
        "properties-blank",
        "clojure-def",
        "erlang-define",
        "xml-element",
        "ruby-fetch-block",
        "a-comparison",
        "mongosh-flag",
        "zip-flag",
        "7z-attached-flag",
        "openssl-enc-key",
        "sudo-from-stdin",
    ],
)
def test_a_password_beside_its_name_or_given_to_a_command(text: str) -> None:
    redacted, found = redact(text)
    assert found and BESIDE not in redacted, redacted


@pytest.mark.parametrize(
    "text",
    [
        "Run `./admin changepassword *someone* <resetting>` for a locked account\n",
        "// Fails when passed nullptr2 as the pool.\n",
        'ok = "a/b" in pass || "text/csv" in pass\n',
        "The password field2 below is optional.\n",
        '<input type="password" placeholder="Passphrase2" name="pw">\n',
        "unzip -p archive2024.zip notes.txt > notes.txt\n",
        "openssl req -new -key server2024.key -out server.csr\n",
        'echo "hello2024" | sudo tee /etc/motd\n',
        'PASSWORD_FIELD, "password_confirm2"\n',
        "**How we rotate the vault password policy**\n",
        "    ('https', 'svc/ops', 'password', 'gateway:8443'),\n",
    ],
    ids=[
        "a-command-named-for-a-password",
        "passed-in-prose",
        "a-variable-named-pass",
        "prose-after-the-word",
        "a-placeholder-attribute",
        "unzip-to-stdout",
        "openssl-key-file",
        "a-text-piped-to-sudo-tee-no-password",
        "a-field-name",
        "prose-in-bold",
        "a-quoted-word-among-items",
    ],
)
def test_text_beside_a_password_word_that_is_no_password_stays(text: str) -> None:
    assert redact(text) == (text, {})


DIGIT_PARTS = "4MC5od5A70H0ItEQ4axJdjs1"  # generated: a single letter among its parts is no word
STORE_UUID = "9c0e4b7a-31d2-4f68-b5e9-2a7d8c13f640"


NETWORK_KEY = ":".join(f"{b:02x}" for b in hashlib.sha256(b"a mesh").digest()[:16])


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f'val pool = new JedisPool(cfg, "redis.internal", 6379, 2000, "{DIGIT_PARTS}")\n', DIGIT_PARTS),
        (f'    api_key: System.get_env("MAILER_SERVER_TOKEN", "{STORE_UUID}")\n', STORE_UUID),
        (
            "Parameters:\n  Env:\n    Type: String\n    Default: production2\n  DBMaster:\n    Type: String\n"
            f"    Default: '{BESIDE}'\n    NoEcho: true\n",
            BESIDE,
        ),
        (
            f"argument_specs:\n  main:\n    options:\n      admin_password:\n        type: str\n        default: {BESIDE}\n",
            BESIDE,
        ),
        (f"<td><code>pat-eu1-{STORE_UUID}</code></td>\n", STORE_UUID),
        (
            '    return [NSString stringWithFormat:@"%@%@%@", @"rk_live_W2q", @"Zp7Lx4Vb9Nc2Qm5T", @"Hd8Ks3Gf6Jw1Ry4E"];\n',
            "rk_live_W2q",
        ),
        (f'network={{\n    ssid="Orchard"\n    psk="{BESIDE}"\n}}\n', BESIDE),  # wpa_supplicant.conf
        (f'D (1204) wifi: connecting ssid="Bench" psk="{BESIDE}"\n', BESIDE),
        (f'  WiFi.begin(ssid, "{BESIDE}");\n', BESIDE),
        ("    --auth=relay7spindle\n", "relay7spindle"),  # espota's upload flag
        (f'mosquitto_passwd -b "$PASSWD" homeassistant {BESIDE}\n', BESIDE),
        (f"htpasswd -nb admin {BESIDE}\n", BESIDE),
        (
            "rcon:\n  password: !!binary |\n    "
            + base64.b64encode(b"Rime!Fjord-58").decode()
            + "\n  port: 27015\n",
            base64.b64encode(b"Rime!Fjord-58").decode(),
        ),
        (f"redis-cli -h cache.internal -p 6379 -a {BESIDE}.77 --scan\n", BESIDE),  # after a port's -p
        (f"echo {BESIDE}| p4 -u svc_sync login -a >nul\n", BESIDE),  # Perforce reads it from stdin
        (f'CONFIG_OPENTHREAD_NETWORKKEY="{NETWORK_KEY}"\n', NETWORK_KEY),
        (
            '\tsnprintf(out, len, "%s%s%s%s", "tok_K7wP", "q2Zr9LmX", "v4Nb8TcY", "h3Jd6RsW");\n',
            "q2Zr9LmX",
        ),
        (
            '_WX = ["'
            + '", "'.join(hashlib.md5(b"weather").hexdigest()[i : i + 8] for i in range(0, 32, 8))
            + '"]\nWEATHER_API_KEY = "".join(_WX)\n',
            hashlib.md5(b"weather").hexdigest()[8:16],
        ),
    ],
    ids=[
        "a-generated-argument-with-digit-parts",
        "elixir-env-default-of-uuid-shape",
        "cloudformation-noecho-default",
        "ansible-argument-spec-default",
        "hubspot-private-app-token",
        "objective-c-format-of-pieces",
        "wpa-supplicant-psk",
        "a-psk-in-a-log",
        "arduino-wifi-begin",
        "an-auth-flag",
        "mosquitto-passwd-batch",
        "htpasswd-batch-without-a-file",
        "yaml-binary-block",
        "redis-cli-password-after-its-port",
        "perforce-login-from-stdin",
        "a-network-key-in-colon-hex",
        "snprintf-of-pieces",
        "a-list-joined-by-its-name",
    ],
)
def test_credentials_given_defaulted_assembled_or_kept_by_devices(text: str, secret: str) -> None:
    redacted, found = redact(text)
    assert found and secret not in redacted, redacted


JWT_IO_SAMPLE = ".".join(
    base64.urlsafe_b64encode(part).rstrip(b"=").decode()
    for part in (
        b'{"alg":"HS256","typ":"JWT"}',
        b'{"sub":"1234567890","name":"John Doe","iat":1516239022}',
        hmac.new(
            b"your-256-bit-secret",
            base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=")
            + b"."
            + base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"John Doe","iat":1516239022}').rstrip(
                b"="
            ),
            hashlib.sha256,
        ).digest(),
    )
)


@pytest.mark.parametrize(
    "text",
    [
        'static NSString *const kPaymentsClientID = @"'
        + base64.b64encode(hashlib.sha512(b"app").digest()).decode().replace("+", "").replace("/", "")[:60]
        + '";\n',
        '    private const val SELLER_UID = "QT90467_b3e81c5d0a92"\n',
        "Crash 1182 grouped: event `"
        + hashlib.md5(b"event").hexdigest()
        + "`, trace `"
        + hashlib.md5(b"t").hexdigest()
        + "`.\n",
        '\treq.Header.Set("X-Vendor-Account", "ord_01J2W5E8R1T4Y7V0K3M6P9A2SD")\n',
        '  ENV["PAYMENTS_CLIENT_ID"] ||= "'
        + base64.b64encode(hashlib.sha512(b"client").digest()).decode()[:60]
        + '"\n',
        '    searchOnlyKey: "' + hashlib.md5(b"search").hexdigest() + '",\n',
        '    storefrontAccessToken: "' + hashlib.md5(b"storefront").hexdigest() + '",\n',
        "ALGOLIA_SEARCH_API_KEY=" + hashlib.md5(b"search").hexdigest() + "\n",
        f'# the sample token jwt.io shows\nSAMPLE = "{JWT_IO_SAMPLE}"\n',
        "  static const analyticsProjectKey = 'phc_"
        + base64.b64encode(hashlib.sha256(b"p").digest()).decode()[:43].replace("+", "x").replace("/", "y")
        + "';\n",
        "const RELEASE_JWK = {\n  kty: 'OKP',\n  crv: 'Ed25519',\n  x: '"
        + base64.urlsafe_b64encode(hashlib.sha256(b"x").digest()).decode().rstrip("=")
        + "',\n};\n",
        '    "alg": "EdDSA",\n    "sig": "'
        + base64.urlsafe_b64encode(hashlib.sha512(b"m").digest()).decode().rstrip("=")
        + '"\n',
        "I (3402) prov: device cert CN=KTH-1 fp=" + hashlib.sha256(b"cert").hexdigest() + "\n",
        "/* AES-128 known-answer test, NIST SP 800-38A F.1.1 */\nstatic const uint8_t k_kat_key[16] = {\n    "
        + ", ".join(f"0x{b:02x}" for b in hashlib.sha256(b"kat").digest()[:16])
        + ",\n};\n",
        "htpasswd -c /etc/nginx/.htpasswd admin\nmosquitto_passwd -b passwd user $MQTT_PW\n",
        "  analyticsKey: phc_" + hashlib.sha256(b"posthog").hexdigest()[:40] + "\n",
        "note: !!binary " + base64.b64encode(b"hello world from the docs").decode() + "\n",
    ],
    ids=[
        "objective-c-client-id",
        "kotlin-private-merchant-uid",
        "an-error-trackers-event-id",
        "an-account-ulid-with-its-prefix",
        "ruby-or-assign-client-id",
        "a-search-only-key",
        "a-storefront-token",
        "a-search-only-key-in-an-env-file",
        "jwt-io-sample-token",
        "posthog-project-key",
        "a-jwk-public-member-unquoted",
        "a-manifest-signature",
        "a-certificate-fingerprint-after-fp",
        "a-known-answer-key-array",
        "password-tools-without-a-password",
        "posthog-project-key-in-yaml",
        "yaml-binary-prose",
    ],
)
def test_public_ids_samples_signatures_and_browser_keys_stay(text: str) -> None:
    assert redact(text) == (text, {})


def test_rows_without_columns_read_the_table_definition_in_force() -> None:
    # mysqldump's INSERTs name no columns: each row is read by the last CREATE TABLE before it, so a
    # table dropped and created again with other columns changes how its later rows are judged
    staff = "CREATE TABLE `staff` (\n  `id` int NOT NULL,\n  `{}` varchar(64) NOT NULL\n);\n"
    rows = "INSERT INTO `staff` VALUES ({},'{}');\n"
    text = (
        staff.format("password")
        + rows.format(1, "Marten$Quill42")
        + rows.format(2, "Heron$Basalt17")
        + "DROP TABLE `staff`;\n"
        + staff.format("motto")
        + rows.format(3, "Lantern$Moss88")
        + "INSERT INTO `staff` VALUES (4,'the early tide');\n"
    )
    redacted, found = redact(text)
    assert "Marten$Quill42" not in redacted and "Heron$Basalt17" not in redacted
    assert found.get("password-assignment") == 2  # read under `password`, not `motto`
    assert "the early tide" in redacted


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN PGP MESSAGE-----\n\nhQEMA2x7Jm3Zq8mNAQf/Xk9mQ2vLp4Rt7Zq8mN3pL7wB5cVb1Tc6Yq7Rk2Lm9Xw3Zp8N\n=Ab3d\n-----END PGP MESSAGE-----\n",
        "mirror: mjow6qm2l6o2dw6pziismtgay7xxptoncqdrm4ru644vbwqvbsyq4d6p.onion\n",
        "          key: julia-depot-v3-699b48d7858cb0e1\n",
        '  {\n   "key": "okta_client_id",\n   "value": "0oay0JjJydwDpvNRixXo",\n   "type": "default"\n  }\n',
        "qwertyuiop = 'qwertyuiop[]'\n",
        'CHECK(out == "123456789abcdefg");\n',
        '{-12345, "ffffffffffffffffffffffffffffcfc7"},\n',
    ],
    ids=[
        "pgp-message",
        "onion-address",
        "cache-key",
        "postman-client-id",
        "keyboard-row",
        "a-count",
        "a-run-of-one-key",
    ],
)
def test_public_ciphertext_addresses_and_names_stay(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    "text",
    [
        'vpc_security_group_ids = ["sg-0774c04d6527a082f"]\n',
        "      X-Amz-Cf-Id:\n      - ajrGJos1ae4H_PpxFZp_CY9m79eK6ch-2ClOp4UXi5QDuluNKYjEWw==\n",
        '"PublicKeyXml": "<RSAKeyValue><Modulus>rj7xgUwoRVLZFhaq8Ec9O5OkQps6szGkPqqyocujTRm6Sbm/PsrFh1ysy3LZ'
        'rbuPNzpjfj9iJiU3eJ15UAn/zDOQX7CLK/wqlz2rNQIz</Modulus><Exponent>AQAB</Exponent></RSAKeyValue>"\n',
        "   * Maps `Pair3#flip` over the list\n",
    ],
    ids=["resource-id", "header-value-listed-below-its-name", "rsa-modulus", "member-reference"],
)
def test_ids_listed_headers_and_a_modulus_stay(text: str) -> None:
    assert redact(text) == (text, {})


def test_listed_values_under_a_credential_name_and_named_passwords_are_redacted() -> None:
    listed = "    X-Api-Token:\n    - " + PW + PW2.replace("!", "") + "\n"
    assert PW not in redact(listed)[0]
    for password in ("Chicago" + "74331!", "Yankees2" + "Jeter#", "Olivia" + "0916!"):
        text = f"await bcrypt.hash('{password}', 10);\n"
        assert password not in redact(text)[0], password


@pytest.mark.parametrize(
    ("text", "piece"),
    [
        ('SFTP_PASSWORD = "%s%s%s" % ("cvA2mL36H", "sNOPFc2sa", "UTti3uemR")\n', "sNOPFc2sa"),
        (
            "DECLARE signing_key STRING DEFAULT CONCAT('0VuEim1T7NEp', 'YzFurEGhjLG1', 'wkcOrWOOipjt');\n",
            "YzFurEGhjLG1",
        ),
        ('  api_secret = join("", ["1060299566ac", "086571450b6a", "710ab6fe"])\n', "086571450b6a"),
        (
            'let secret = format!("{}{}{}", "70dc9d332b084e02", "336137ad055de55e", "5772682a60b7013e");\n',
            "336137ad055de55e",
        ),
        (
            "token: ${{ secrets.DOCKER_PAT || format('{0}{1}', 'dckr_pat_JFpCDYIkL', 'aEvxaDR7hrzcUvvg0n') }}\n",
            "aEvxaDR7hrzcUvvg0n",
        ),
        ("!define pw=Scorpio" + "1987!\n", "Scorpio1987!"),
        ("SetEnv SOAP_PASSWORD Beetle" + "1970!\n", "Beetle1970!"),
    ],
    ids=[
        "python-percent",
        "sql-concat",
        "terraform-join",
        "rust-format",
        "actions-format",
        "snowsql-define",
        "apache-setenv",
    ],
)
def test_literals_assembled_by_a_format_and_bare_passwords_ending_in_a_symbol(text: str, piece: str) -> None:
    redacted, found = redact(text)
    assert found and piece not in redacted, redacted


@pytest.mark.parametrize(
    "text",
    [
        'name = "%s%s" % ("hello", "world")\n',
        "SELECT CONCAT('first_name', ' ', 'last_name');\n",
        'url = "{}{}".format("https://api.example.com", "/v1/users")\n',
        "We shipped Windows10 today!\n",
    ],
    ids=["words", "column-names", "url-parts", "a-name-and-a-version"],
)
def test_assembled_words_and_names_stay(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('  tls.store-password = """cobalt meadow ferret 58"""\n', "cobalt meadow ferret 58"),
        (
            '    private const string VaultPassphrase = @"saffron ridge pepper loom";\n',
            "saffron ridge pepper loom",
        ),
        ("DEPLOY_PASSWORD ?= Rt7kWq2NbX%2fp9Lm+Hv\n", "Rt7kWq2NbX%2fp9Lm+Hv"),
        ('dotnet user-secrets set "Mail:Password" "amber quiver harbor 7"\n', "amber quiver harbor 7"),
        ('psql "host=db user=app password=Ht4%dLq9Wz2KpR7m"\n', "Ht4%dLq9Wz2KpR7m"),
        (
            "    proxy_set_header x-api-key acmekey-ecab8fc4f4982e8fa65f9976dcfb0b6c2615f531492b84e8a1beb627d6641012"
            "-RnTWGYP9LdtrDCZj;\n",
            "ecab8fc4f4982e8fa65f9976dcfb0b6c2615f531492b84e8a1beb627d6641012",
        ),
    ],
    ids=[
        "triple-quoted",
        "verbatim-string",
        "conditional-assignment",
        "quoted-config-key",
        "percent-inside",
        "hex-and-random-parts",
    ],
)
def test_credentials_in_more_quotes_operators_and_shapes(text: str, secret: str) -> None:
    redacted, found = redact(text)
    assert found and secret not in redacted, redacted


EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize(
    "text",
    [
        "func TestChaCha20KnownAnswer(t *testing.T) {\n"
        '\tkey := mustHex("000102030405060708090a0b0c0d0e0f")\n'
        "\tout := encrypt(key, nonce, plain)\n"
        '\twant := "ac4e4613c2520d2b1651d2c3c351358ced740b40cd71ad50a39c03a44c4df602"\n'
        "\tcheck(t, out, want)\n}\n",
        "    @Test\n    void signatureMatchesRfc7515Appendix() throws Exception {\n"
        "        byte[] mac = sign(header, payload);\n"
        "        assertThat(hex(mac))\n"
        '            .isEqualTo("0ef8a6ed0cfebd75e69212e5553088139077398c4bb82a419bbeabbd2878c342");\n    }\n',
        '# RFC 5869, test case 3\nHKDF_CASE = {\n    "ikm": b"\\x0b" * 22,\n'
        '    "okm": "a67b8ec78242debfdac90c989d54d3ac4ac9fb642ea3c89d487be345a4c21d18",\n}\n',
        f'    assert resp.headers["x-amz-content"] == "{EMPTY_SHA256}"\n',
        'var partnerKey = ed25519.PublicKey(mustHex("ecab8fc4f4982e8fa65f9976dcfb0b6c2615f531492b84e8a1beb627d6641012"))\n',
        "gpg:\n  signing_keyid: 0x92E045B90BA36D58\n",
        "\ufeffAccount ID;Holder;Balance (USD)\n45BSJ6B40LV1SZ08PWP2;Ada Lovelace;120.00\n",
    ],
    ids=[
        "test-named-known-answer",
        "test-named-rfc",
        "rfc-comment-over-block",
        "empty-digest",
        "public-key-call",
        "key-id",
        "first-column-id",
    ],
)
def test_test_vectors_public_keys_and_ids_stay(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            'sentry {\n    authToken.set("e98e6c20-bc92-4c0a-b5f5-dbccc5509d86")\n}\n',
            "e98e6c20-bc92-4c0a-b5f5-dbccc5509d86",
        ),
        ('    builder.setPassword("plum ferry candle harbor")\n', "plum ferry candle harbor"),
        (
            '        - name: FLAGS_SDK_KEY\n          value: "sdk-e98e6c20-bc92-4c0a-b5f5-dbccc5509d85"\n',
            "e98e6c20-bc92-4c0a-b5f5-dbccc5509d85",
        ),
        (
            '"text": "email=a%40b.example&password=plum%20ferry%20candle%20harbor&keep=1",\n',
            "plum%20ferry%20candle",
        ),
        (
            '    let c = Client::with_basic_auth("https://m.example.com", "svc", "amber quiver harbor 7")?;\n',
            "amber quiver harbor 7",
        ),
        ("I (2231) wifi: joining with Fq#7~vTp8*lsHZ!Q2m now\n", "Fq#7~vTp8*lsHZ!Q2m"),
        ('  default "#Fq7~vTp8=lsHZ!Q2m"\n', "#Fq7~vTp8=lsHZ!Q2m"),
        ("wifi_pass,data,string,*Fq7vTp8~lsHZQ2mX\n", "*Fq7vTp8~lsHZQ2mX"),
        (
            'static const char cloud_token[] =\n    "exceOxnwGpn2CL"\n    "jsRkxxHf23d3ZS"\n    "59BmBfhIO5t4ct";\n',
            "jsRkxxHf23d3ZS",
        ),
        (
            "serial,device_psk,at\nDEV-0001,5fc4c2c5c987784bafe6d0150bde8f69,2025-02-10\n",
            "5fc4c2c5c987784bafe6d0150bde8f69",
        ),
        ("- Cache: `cache.example.net:6380`, password `Heron-Ledge-2031` (ask ops)\n", "Heron-Ledge-2031"),
    ],
    ids=[
        "property-setter",
        "setter-call",
        "name-value-uuid",
        "form-body",
        "basic-auth-last",
        "bare-generated",
        "quoted-with-equals",
        "leading-symbol",
        "c-literals-one-a-line",
        "psk-column",
        "prose-code-span",
    ],
)
def test_credentials_given_to_setters_forms_and_prose(text: str, secret: str) -> None:
    redacted, found = redact(text)
    assert found and secret not in redacted, redacted


@pytest.mark.parametrize(
    "text",
    [
        "vendor,key_name,key_id,secret_ref\nmailer,receipts,U8teNiIDPNGe8KSWVIrrXi,vault:mailer\n",
        "api_key_id=Vq7KpZ3mX9tLw2RbN8yHcF4d\n",
        "- 14:02 alert fired, trace `c664dcd0c9ea2eb93792c1cb8f8d165b` sampled\n",
        "<key>PinnedPublicKeyHashes</key>\n<array>\n\t<string>ZW+aQHm5fTpSf2R86kH1yN48wdg+DGYgrjWxe3lZEHo=</string>\n</array>\n",
        "<string>com.googleusercontent.apps.402918573316-k2vq8m4lp0xj7ntc</string>\n",
        "DATABASE_URL=postgres://push:changeme-before-launch@localhost:5432/push\n",
        '    validate_password("Xk82mQpz!L")\n',
        "// We should be able to encode up to (1^kMaxRetryWindow - 1) without clamping\n",
        "the password `field` is required\n",
        'warnings.warn(f"Passing `strict={strict!r}` is deprecated.")\n',
        "err += ' To round half up, pass `mode=ROUND_HALF_UP`'\n",
        "self.assertEqual(split_passwd('ann+2:c+d'), ('ann+2', 'c+d'))\n",
        'expected = "argv_zero==%r" % "-q"\n',
        '"{Rt39K^pa7=QM@Z1uvXb852TPcU4#k;9W)h3+sB=2LyCn6T*;*Y|QM+H8Fr",\n',
        'useBasicAuth(router, "/admin/*")\n',
        'required = [ "password" "accessTokenField2" ];\n',
        "Set the token `NPM_TOKEN_v2` in CI.\n",
        "y = a*B1+c2-D3*e4^F5\n",
        'session_key = "SessKeyV2Abc%sUserIdX9"\n',
    ],
    ids=[
        "key-id-column",
        "key-id-assigned",
        "trace-in-prose",
        "plist-pins",
        "reversed-client-id",
        "url-placeholder",
        "validator-call",
        "symbol-among-words",
        "prose-code-span-word",
        "passing-a-code-span",
        "pass-a-code-span",
        "a-function-of-a-password",
        "expected-text",
        "base85-data",
        "a-route-guard",
        "a-list-of-words",
        "a-variable-in-prose",
        "an-expression",
        "a-template",
    ],
)
def test_key_ids_traces_pins_and_placeholders_stay(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    "path",
    [
        "android/key.properties",
        "app/keystore.properties",
        "home/.databrickscfg",
        "rclone.conf",
        ".snowsql/config",
        "ops/.cdsapirc",
        "home/.ecmwfapirc",
        ".sentryclirc",
        "home/.kaggle/kaggle.json",
        ".cache/huggingface/token",
    ],
)
def test_signing_and_tool_credential_files_are_skipped(path: str) -> None:
    assert is_secret_file(path)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "smtp_password: \"{{ lookup('env', 'SMTP_PASSWORD') | default('Heron-Quarry-2031', true) }}\"\n",
            "Heron-Quarry-2031",
        ),
        (
            "      password: \"{{ env_var('DBT_PASSWORD', 'copper-lantern-meadow') }}\"\n",
            "copper-lantern-meadow",
        ),
        (
            "  api_key: ${oc.env:TRACKER_API_KEY,3341aaa46113ad7e093fd67f55026ccb5e167834}\n",
            "3341aaa46113ad7e093fd67f55026ccb5e167834",
        ),
        (
            "  <property>\n    <name>javax.jdo.option.ConnectionPassword</name>\n"
            "    <value>Quarry7!Lintel</value>\n  </property>\n",
            "Quarry7!Lintel",
        ),
        (
            '    uri: "snowflake://SVC_LOADER:Heron%40Quarry%3A2031@/RAW?account=xy12345"\n',
            "Heron%40Quarry%3A2031",
        ),
    ],
    ids=["jinja-default-after-lookup", "dbt-env-var", "resolver-default", "xml-name-value", "url-empty-host"],
)
def test_template_defaults_xml_properties_and_hostless_urls(text: str, secret: str) -> None:
    redacted, found = redact(text)
    assert found and secret not in redacted, redacted


@pytest.mark.parametrize(
    "text",
    [
        "kind: SealedSecret\nspec:\n  encryptedData:\n"
        "    password: AgB/bbVRhQkrJKFpFM/7Dx7CDx9EXuWdBkDaUKcs+5eGAOsJtTPavI+mKKy07I8R/9sd0Ditw6VNIHXQ4NL\n",
        'echo "ac4e4613c2520d2b1651d2c3c351358ced740b40cd71ad50a39c03a44c4df602  $WORK/loader.jar" | sha256sum -c -\n',
        "# Fixed test vector: made once with a throwaway key (bytes 0..31).\n"
        "TV_KEY = bytes(range(32))\n"
        'TV_NONCE = bytes.fromhex("a52fa94a3df415629f0dddce")\n'
        'TV_AAD = b"pii-v1"\n'
        'TV_PLAIN = b"jane@example.com"\n'
        'TV_SEALED = bytes.fromhex("45bc1fa3657e46f09aa304e4f346b71e5fc4c2c5c987784bafe6d0150bde8f69")\n',
    ],
    ids=["sealed-secret", "checksum-of-a-variable-path", "vector-comment-five-lines-up"],
)
def test_ciphertext_checksums_and_marked_vectors_stay(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            '    private static readonly string Pepper = "2mMYzlmWPPT" + "bCXNWAvJWrI" +\n        "JFztIYic34";\n',
            "bCXNWAvJWrI",
        ),
        ("local rcon_password = [[plum ferry candle harbor]]\n", "plum ferry candle harbor"),
        (
            "local token = string.char(111, 53, 66, 80, 112, 88, 51, 114, 76, 100, 86,\n"
            "    114, 78, 115, 113, 73, 53, 119, 65, 112, 57, 99)\n",
            "53, 66, 80, 112",
        ),
        ('$db = mysqli_connect("db.internal", "shop", "Amber-Heron-Falls", "shop");\n', "Amber-Heron-Falls"),
        (
            'node_cookie = "QWZRTPLKMNXBVCJHGFDS"\n',
            "QWZRTPLKMNXBVCJHGFDS",
        ),
    ],
    ids=[
        "joined-literals-anywhere",
        "lua-long-string",
        "lua-char-codes",
        "capitalised-passphrase-argument",
        "cookie-name",
    ],
)
def test_joined_char_coded_and_capitalised_credentials(text: str, secret: str) -> None:
    redacted, found = redact(text)
    assert found and secret not in redacted, redacted


@pytest.mark.parametrize(
    "text",
    [
        '{"kty": "RSA", "e": "AQAB", "n": "mh-BPRILZlJXFV1Mrk5dEMegFllXVw9YoSIxipFPbCXNWAvJWrI"}\n',
        '<div class="g-recaptcha" data-sitekey="6Lb7qWnXAAAAAHk2vR9pTz4mYc8sLd1eFg3hJ0Kq"></div>\n',
        "RsaKeyModulus=mh-BPRILZlJXFV1Mrk5dEMegFllXVw9YoSIxipFPbCXNWAvJWrI\n",
        '@hide_fields("pass_code", "billing_postcode_hint")\n',
        'greeting = "hello" + "world" + "again"\n',
    ],
    ids=["jwk-modulus", "site-key", "signing-modulus", "parameter-names", "joined-words"],
)
def test_public_key_members_site_keys_and_joined_words_stay(text: str) -> None:
    assert redact(text) == (text, {})


@pytest.mark.parametrize(
    "text",
    [
        "database:\n  encrypted:\n    host: db\n    password: Quarry7!Lintel\n",
        '# these values are NOT encrypted:\nCONFIG = {\n    "password": "Quarry7!Lintel",\n}\n',
        "# OAuth 2.0 client (RFC 6749)\nclass Client:\n    def fetch(self):\n"
        + "        step()\n" * 8
        + '        return call("2mMYzlmWPPTbCXNWAvJWrIJFztIYic34")\n',
        'def test_case_1():\n    assert f("2mMYzlmWPPTbCXNWAvJWrIJFztIYic34")\n',
    ],
    ids=["an-encrypted-named-map", "a-comment-saying-encrypted", "an-rfc-over-a-class", "a-test-case-name"],
)
def test_exceptions_need_their_own_syntax_not_a_word_nearby(text: str) -> None:
    assert redact(text)[1], text


ATTACHMENT_SHA = hashlib.sha256(b"radiograph-041").hexdigest()
ATTACHMENTS_DUMP = f"""CREATE TABLE `attachments` (
  `id` int NOT NULL,
  `filename` varchar(255) NOT NULL,
  `sha256` char(64) NOT NULL,
  PRIMARY KEY (`id`)
);
INSERT INTO `attachments` VALUES (1,'thorax.dcm','{ATTACHMENT_SHA}'),(2,'paw.dcm','{hashlib.sha256(b"x").hexdigest()}');
"""
# mysqldump's one line of rows, 100 KB of it: each value is looked up in its column once
LONG_DUMP = (
    "INSERT INTO `attachments` VALUES "
    + ",".join(f"({i},'scan{i}.dcm','{hashlib.sha256(str(i).encode()).hexdigest()}')" for i in range(1, 1300))
    + ";\n"
)


@pytest.mark.parametrize(
    "text",
    [
        "    'stripe' => ['key' => 'pk_live_" + "51Qm3wKf8Zt2Lp9RxVb7NcYd4Ha6Ej0Gu1Ts5Wq'],\n",
        "STRIPE_KEY=pk_test_" + "51Hd8sLq2Wm7Xv4Ne9Rb3Ty6Pa1Kc5Zj0Fg8Uo\n",
        "mapboxgl.accessToken = 'pk.eyJ1IjoiZmxlZXQiLCJhIjoiY2x4N2sycTkwMDBvMzJrcGZ6dDh4Z3E1ayJ9"
        + ".Zm9vYmFyYmF6cXV4MTIzNDU2';\n",
        "\t<key>PurchasesApiKey</key>\n\t<string>appl_" + "Wd4kQ9zLm2Xr7Tb5Nc8Vh3Jp6Ys</string>\n",
        ATTACHMENTS_DUMP,
        ATTACHMENTS_DUMP.split("INSERT")[0] + LONG_DUMP,
        "    c <- oneOf ['a','A','c','C','l','L','n','N','r','R','s','S','^','_','-']\n",
        'PNG_MAGIC = b"\\x89PNG\\x0d\\x0a\\x1a\\x0a\\x00\\x00\\x00\\x0dIHDR"\n',
        "composer config repositories.tools vcs https://git.example.com/acme/tools.git\n",
        "$cred = ConvertTo-SecureString $env:SVC_PASSWORD -AsPlainText -Force\n",
        "docker login --password-stdin registry.example.com\n./run --password-file /etc/app/pw.txt\n",
        'ws.connect("wss://example.com/socket", "protocol-v2")\n',
        '  sha256 = "a2pl7wfhwrp43dy8m54wl93b1bmd9c5a1shg0ilslkz9qi31lhd4";\n',
        '< etag: W/"1f4a-Qm8kLp3xZr7Vt2Nw9Hy5Bc6Dj1E"\n',
        "The password is required and must be 12 characters; if the password is wrong, retry.\n",
        "password_encryption = 'scram-sha-256'\n",
        '{ "name": "etag", "value": "\\"' + hashlib.sha256(b"page").hexdigest()[:48] + '\\"" },\n',
        '-hostkey="ssh-ed25519 255 Qm8kLp3xZr7Vt2Nw9Hy5Bc6Dj1EaF4gH0sK2uW7yR5T"\n',
        'default-product = "E-2R-QXPLAN-25-04-01-D"\n',
        "static const unsigned char steps[] = { 10, 20, 30, 40, 50, 60, 70, 80, 90, 100 };\n",
        "description = <<-EOT\n  A meter ingestion service v2\nEOT\n",
        "        # Group Name. A VPC's group has to be\n        # identified by group_id\n",
        "The password is SHA256-hashed before it is stored; your boarding pass is GATE-B12.\n",
        "    if secret is MyModule.DEFAULT2:\n-- password is NVARCHAR(128) in v2\n",
        "openssl pkcs12 -in cert.p12 -passin env:P12_PASSWORD -nodes\nmycli --password-manager 1Password8\n",
        'conn = pymysql.connect("db.example.com", "myadmin@mydb", password=os.environ["DB_PASSWORD"])\n',
        "  -- every tenant is identified by tenant_uuid_v2\n",
        "Use --password PASSWORD to set it, --password-length 16 to change its length.\n",
        f'# SHA-256 of "abc", as FIPS 180-2 gives it\nexpected = "{hashlib.sha256(b"abc").hexdigest()}"\n',
    ],
    ids=[
        "stripe-publishable-under-a-key-name",
        "stripe-publishable-in-an-env-file",
        "mapbox-public-token",
        "revenuecat-sdk-key",
        "digest-column-of-a-dump",
        "digest-column-of-a-long-dump-line",
        "a-set-of-characters",
        "binary-in-hex-escapes",
        "composer-repository",
        "secure-string-from-a-variable",
        "flags-of-no-password",
        "connect-given-a-protocol",
        "nix-base32-digest",
        "weak-entity-tag",
        "prose-about-a-password",
        "an-algorithm-under-a-password-name",
        "an-entity-tag-in-a-recorded-pair",
        "a-host-key-fingerprint",
        "a-product-code",
        "a-table-of-numbers",
        "a-heredoc-of-prose",
        "identified-by-in-prose",
        "stated-in-prose-how-it-is-kept",
        "stated-in-code-and-a-type",
        "flags-that-refer-or-name-a-tool",
        "connect-with-its-password-by-keyword",
        "identified-by-in-a-comment",
        "flags-in-prose",
        "a-digest-named-in-the-comment-above",
    ],
)
def test_public_keys_digest_columns_and_character_sets_stay(text: str) -> None:
    assert redact(text) == (text, {})
