"""Tokens known by their prefix alone, and key ids that the secret beside them belongs to.

Each pattern is the vendor's real shape (prefix, alphabet, length), so an ordinary word that starts
with the same letters does not match; the rules module runs them wherever they stand on a line,
with no name beside them (`twine upload -u __token__ -p pypi-AgEI...`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rag.secrets.values import mixed, random_case, varied


def _generated(body: str) -> bool:
    """Accept a body of two or more of upper case, lower case and digits, as generated tokens have
    and words (`dckr_pat_example_token_here`) lack; not a one-character fill."""
    classes = any(map(str.isupper, body)) + any(map(str.islower, body)) + any(map(str.isdigit, body))
    return classes >= 2 and varied(body)


def _hex(body: str) -> bool:
    """Accept hex with letters and digits both (a 32-digit number or `aaaa...` is not a key)."""
    return varied(body) and any(c.isdigit() for c in body) and any(c.isalpha() for c in body)


def _body(check: Callable[[str], bool]) -> Callable[[re.Match[str]], bool]:
    """Apply a check to the match's `body` group."""
    return lambda m: check(m["body"])


# kind, what gates the rule (a literal, found with `in`, or a pattern led by one; rules with the
# same gate test it once per text), the token's pattern, its check. The rules bound every pattern
# by characters that cannot be a token's (`task-`, `disk-` never start one), unless it gives its
# own bounds (OWN_BOUNDS).
_GITLAB_OR_GRAFANA = r"gl(?:dt|rt|cbt|ptt|ft|oas|soat|agent|imt|ffct|sa|c)[-_]"
PREFIXED: tuple[tuple[str, str, str, Callable[[re.Match[str]], bool]], ...] = (
    # PyPI API tokens: a macaroon in base64url whose first bytes name the index (pypi.org, test.pypi.org)
    (
        "pypi-token",
        "pypi-AgE",
        r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)(?P<body>[A-Za-z0-9_-]{50,})",
        _body(varied),
    ),
    # GitLab's other tokens (deploy, runner, CI job, trigger, feed, OAuth application, SCIM, agent,
    # incoming mail, feature flags), maybe in the routable form (`.01.` and a checksum); glpat- has
    # its own rule
    (
        "gitlab-token",
        _GITLAB_OR_GRAFANA,
        r"gl(?:dt|rt|cbt|ptt|ft|oas|soat|agent|imt|ffct)-(?P<body>[A-Za-z0-9_-]{20,})"
        r"(?:\.[0-9]{1,3}\.[A-Za-z0-9]{4,16})?",
        _body(_generated),
    ),
    # Grafana's service account tokens and Grafana Cloud access policy tokens
    (
        "grafana-token",
        _GITLAB_OR_GRAFANA,
        r"glsa_(?P<body>[A-Za-z0-9]{32}_[a-fA-F0-9]{8})",
        _body(_generated),
    ),
    ("grafana-token", _GITLAB_OR_GRAFANA, r"glc_(?P<body>[A-Za-z0-9+/]{32,400}+={0,2})", _body(_generated)),
    # Slack's app-level tokens (xapp-1-A0123ABCD-1234567890123-<64 hex>); xoxb-/xoxp-/xoxa-/xoxr-/xoxs-
    # and the rotating xoxe ones have their own rule
    (
        "slack-token",
        "xapp-",
        r"xapp-[0-9]-(?P<body>[A-Z0-9]{9,12}-[0-9]{10,16}-[a-f0-9]{64})",
        _body(_hex),
    ),
    # HubSpot's private app tokens: a region and a UUID (`pat-na1-<uuid>`, `pat-eu1-<uuid>`)
    (
        "hubspot-token",
        "pat-",
        r"pat-(?:na|eu|ap)[0-9]-(?P<body>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})",
        _body(varied),
    ),
    # Hugging Face's organisation API tokens (user tokens are hf_...)
    ("huggingface-token", "api_org_", r"api_org_(?P<body>[A-Za-z]{34})", _body(random_case)),
    # Google OAuth client secrets (client_secret.json, and the code that inlines one)
    ("google-oauth-secret", "GOCSPX-", r"GOCSPX-(?P<body>[A-Za-z0-9_-]{28})", _body(_generated)),
    ("dockerhub-token", "dckr_pat_", r"dckr_pat_(?P<body>[A-Za-z0-9_-]{27})", _body(_generated)),
    # Atlassian API tokens: ATATT3, base64url, `=` and a checksum of 8 hex digits
    ("atlassian-token", "ATATT3", r"ATATT3(?P<body>[A-Za-z0-9_-]{150,}+)=[0-9A-F]{8}", _body(_generated)),
    ("digitalocean-token", "_v1_", r"do[opr]_v1_(?P<body>[a-f0-9]{64})", _body(_hex)),
    # HashiCorp Vault's service and batch tokens (hvs.CAESI..., about 95 characters)
    ("vault-token", r"hv[sb]\.", r"hv[sb]\.(?P<body>[A-Za-z0-9_-]{90,})", _body(_generated)),
    # private keys in a one-line encoding with a known prefix: age's secret keys (Bech32), and
    # BIP 32 extended private keys (xprv, in Base58)
    (
        "private-key",
        "AGE-SECRET-KEY-1",
        r"AGE-SECRET-KEY-1(?P<body>[02-9AC-HJ-NP-Z]{58})",
        _body(varied),
    ),
    ("private-key", "xprv", r"xprv(?P<body>[1-9A-HJ-NP-Za-km-z]{100,112})", _body(_generated)),
    # Microsoft Entra (Azure AD) client secrets: 3 characters, a digit and `Q~`, then 31 to 34 more
    (
        "azure-client-secret",
        "Q~",
        r"(?<![A-Za-z0-9_~.-])(?P<body>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])",
        _body(mixed),
    ),
)
# the patterns that give their own bounds (their alphabet has more than letters, digits, `_` and `-`)
OWN_BOUNDS = frozenset({"azure-client-secret"})

# A secret right after the key id it belongs to, with no name in front: an SDK constructor's
# positional arguments (`Client("SK...", "...")`, `Session("AKIA...", "...")`), a CSV export's
# columns (`user,,AKIA...,...`). The separator is a comma, `;`, `:`, `|` or a tab, maybe a closing
# quote before it and a comment after it, then up to 40 blanks (the next line of a call).
THEN = r"""["'`]?[ \t]*[,;:|\t](?:[ \t]*+(?:\#|//)[^\r\n]{0,200}+)?\s{0,40}+["'`]?"""
# kind, the pattern that gates the rule (as PREFIXED's), the key id, the secret (with its end), its check
PAIRED: tuple[tuple[str, str, str, str, Callable[[str], bool]], ...] = (
    # AWS: the access key id, then its 40-character secret access key (boto3.Session, Credentials)
    (
        "aws-secret-key",
        "AKI[AD]|ASIA",
        r"(?:AKIA|ASIA)[A-Z0-9]{16}",
        r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        lambda s: varied(s) and mixed(s) and "EXAMPLE" not in s,  # not AWS's documentation example
    ),
    # Twilio: the account SID, then its auth token (32 hex): Client("AC...", "...")
    (
        "twilio-auth-token",
        # not `"AC" in text`, true of most files, which the regex then scanned slowly
        "AC[0-9a-f]{32}",
        r"AC[0-9a-f]{32}",
        r"[0-9a-f]{32}(?![A-Za-z0-9])",
        _hex,
    ),
    # Twilio: an API key SID, then the key's secret (32 letters and digits): Client("SK...", "...", "AC...")
    (
        "twilio-api-secret",
        "SK[0-9a-f]{32}",
        r"SK[0-9a-f]{32}",
        r"[A-Za-z0-9]{32}(?![A-Za-z0-9])",
        lambda s: varied(s) and mixed(s),
    ),
    # Alibaba Cloud: the AccessKey ID, then its 30-character secret: AcsClient("LTAI...", "...", region)
    (
        "alibaba-secret-key",
        "LTAI",
        r"LTAI[A-Za-z0-9]{12,20}",
        r"[A-Za-z0-9]{30}(?![A-Za-z0-9])",
        lambda s: varied(s) and mixed(s),
    ),
    # Tencent Cloud: the SecretId, then its SecretKey: credential.Credential("AKID...", "...")
    (
        "tencent-secret-key",
        "AKI[AD]|ASIA",
        r"AKID[A-Za-z0-9]{32}",
        r"[A-Za-z0-9]{32}(?![A-Za-z0-9])",
        lambda s: varied(s) and mixed(s),
    ),
    # Google Cloud Storage HMAC keys (the S3-compatible API): the access id, then its secret
    (
        "gcs-hmac-secret",
        "GOOG",
        r"GOOG[0-9A-Z]{20,57}",
        r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        lambda s: varied(s) and mixed(s),
    ),
)
