"""Keep secrets out of the index: skip secret-bearing files, redact high-confidence secrets in text.

Redaction replaces each secret by `[REDACTED:<kind>]` and never changes the number of lines (a
multi-line match keeps its line breaks after the marker), so citations by line stay exact.

Credentials assigned to names (`DB_PASSWORD=...`, `password: ...`, `"apiKey": "..."`, `auth_token = ...`,
in any case, quoted or not) are redacted when the value is a literal, not code: see _ASSIGNED and
_assigned_secret. HTTP Basic and docker/npm `auth` values count when their base64 decodes to
`user:password`; base64 that decodes to a private key (a kubeconfig's `client-key-data`), or in a
Kubernetes Secret to `.env` lines or a credential, is redacted whole.

The rules also run over the text as its values read (see _view): the lines that hold escapes
decoded (a notebook's `"\\"password\\": \\"...\\"\\n"`), backslash-continued lines joined,
`NAME = ("part" "part")` and YAML `name: >` block scalars joined into one value. A secret found
there is mapped back to its span in the text, so the redaction keeps the line breaks it covers.

Cost: each rule has a gate, a substring test or a literal-prefixed search (`"ghp_"`, `"://"`, ...);
its full regex runs only when the gate passes, so a file with no candidates costs about 50 fast scans
(4.8 s over the eight corpora's 56 MB on a loaded 2-core machine, 12 MB/s: bench/secret_scan.py). Names in
any case are searched in the lowered text, which a literal search scans 5 times faster than an
IGNORECASE pattern. No rule scans a span of text more than a bounded number of times: hostile
inputs (1 MB of BEGIN lines, of `mysql `) take under half a second (bench/hostile.py --shapes).

False positives are kept low by shape checks: token bodies must mix upper case, lower case and
digits (so `sk-` in `task-runner-...` never counts), JWT headers must decode to `{"alg"...}`, key
blocks must hold base64, and one-character fills (`XXXX`, `0000`) are placeholders. A URL password
is not redacted when it is a template or environment reference (`${PASS}`, `{password}`, `%s`,
`<password>`, `$PASSWORD`), a mask (`***`), the user name again (`postgres:postgres`), or made of
stock example words (`password`, `pass123`, `foo:bar`, `changeme`); `git@host:org/repo` has no
`://` and is never a candidate. An assigned value needs 8+ characters, letters with a digit or a
symbol, no placeholder words (`your-api-key`, `xxxx`, `***`), and, unquoted, must not be code
(`self.password`, `getpass()`, `os.environ[...]`, `None`, `${VAR}`, `next_token_2`).
"""

from __future__ import annotations

import base64
import bisect
import re
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# ---- files that are skipped whole ---------------------------------------------------------------

_ENV_TEMPLATE_WORDS = frozenset({"example", "sample", "template", "dist"})
_ENV_VARIANT = re.compile(r"\.env[._-]")  # .env.local, .env_prod, .env-staging
_SECRET_NAME = re.compile(
    r"""(?x)
    .*\.(?:pem|key|p12|pfx|keystore|jks|ppk)              # .ppk: PuTTY's private keys
    | .*\.tfstate(?:\.backup)?                           # Terraform state: every resource's secrets, in clear
    | id_(?:rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk)
    | \.npmrc | \.pypirc | \.netrc | _netrc
    | \.pgpass | pgpass\.conf | \.git-credentials | \.my\.cnf | \.htpasswd
    | credentials                                       # AWS's shared credentials file (~/.aws/credentials)
    | (?:.*[._-])?credentials.*\.json                    # gcloud's application_default_credentials.json, ...
    | client_secrets?.*\.json                            # Google OAuth client files
    """,
    re.IGNORECASE,
)
# generic names that hold secrets only in their tool's folder: docker's auths
_SECRET_IN_FOLDER = frozenset({(".docker", "config.json")})


def is_secret_file(relpath: str) -> bool:
    """Tell whether a file is excluded by default because its name says it holds secrets."""
    folder, _, name = relpath.rstrip("/").lower().rpartition("/")
    if (folder.rpartition("/")[2], name) in _SECRET_IN_FOLDER:
        return True
    if name in (".env", ".envrc"):  # .envrc: direnv's, exports secrets like .env
        return True
    if _ENV_VARIANT.match(name):
        # .env.local, .env_prod, .env-staging are secret; .env.example, .env.local.sample, ... are templates
        return _ENV_TEMPLATE_WORDS.isdisjoint(re.split(r"[._-]", name[5:]))
    return _SECRET_NAME.fullmatch(name) is not None


# ---- secrets inside text ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found in a text: its kind and the character span that is redacted."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    gate: Callable[[str], object]  # the cheap prefilter: the regex runs only if this is truthy
    regex: re.Pattern[str]
    group: str | int = 0  # the part of the match that is the secret
    check: Callable[[re.Match[str]], bool] | None = None  # reject placeholders and look-alikes
    # For names in any case (`db_password`, `dbPassword`, `DB_PASSWORD`, `PassWord`): `regex` is
    # IGNORECASE, which scans 5 times slower than a literal search, so this same pattern without the
    # flag finds the candidates in the lowered text and `regex` is matched at each one; the gate is
    # then given the lowered text
    scan: re.Pattern[str] | None = None


# Characters that may not sit right before a token, so `task-`/`disk-` and the like never start one.
_B = r"(?<![A-Za-z0-9_-])"
# ... and right after it, so a longer run of token characters is not cut short.
_E = r"(?![A-Za-z0-9_-])"
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# Stock words of examples; a URL password made only of these (and trailing digits) is a placeholder:
# password, pass123, mypassword, foo:bar, secret, changeme, ...
_PLACEHOLDER_PASSWORD = re.compile(
    r"(?:my|your|the|db|user|some)?"
    r"(?:pass|password|passwd|pwd|pw|secret|changeme|example|placeholder|redacted|token"
    r"|foo|bar|baz|qux|test|dummy|fake)+[0-9]*"
)


def _contains(*words: str) -> Callable[[str], bool]:
    """Gate on plain substrings (str `in` is fast for one or two words)."""
    return lambda text: any(word in text for word in words)


def _search(pattern: str) -> Callable[[str], object]:
    """Gate on alternatives sharing a literal prefix, which one regex search finds faster than many `in`."""
    return re.compile(pattern).search


def _words_then(words: tuple[str, ...], pattern: str) -> Callable[[str], object]:
    """Gate on plain substrings, then on a pattern without a literal prefix (which scans slowly,
    so it runs only on the texts that hold a word)."""
    search = re.compile(pattern).search
    return lambda text: any(word in text for word in words) and search(text)


def _varied(value: str) -> bool:
    """Reject one-character fills like `XXXX` or `0000`, which are placeholders."""
    return len(set(value)) > 3


def _mixed(value: str) -> bool:
    """Require upper case, lower case and a digit, as random tokens have and kebab-case words lack."""
    return any(map(str.isupper, value)) and any(map(str.islower, value)) and any(map(str.isdigit, value))


def _key_body(block: str) -> bool:
    """Require a key block to carry base64 material, not just the BEGIN/END labels."""
    return re.search(r"[A-Za-z0-9+/]{40}", block) is not None


def _jwt_header(token: str) -> bool:
    """Require the first segment to decode to a JOSE header (`{"alg": ...}` or `{"typ": ...}`)."""
    header = token.partition(".")[0]
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)).decode("utf-8", "replace")
    except ValueError:
        return False
    return '"alg"' in decoded or '"typ"' in decoded


def _aws_secret_name(match: re.Match[str]) -> bool:
    """Require the assigned name to be AWS-ish: `aws_secret...` or `...secret_access_key`."""
    if "access" in match["name"].lower():
        return True
    before = match.string[max(0, match.start() - 4) : match.start()].lower()
    return before.rstrip("_.-").endswith("aws")


def _random_case(value: str) -> bool:
    """Tell a generated token from a name: with a digit, both cases suffice (as _mixed); letters
    only (as Hugging Face user tokens are), a quarter to three quarters upper case, where
    CamelCase names have few capitals (AutoModelForSequenceClassification: 5 of 34)."""
    upper = sum(map(str.isupper, value))
    lower = sum(map(str.islower, value))
    if not upper or not lower:
        return False
    return any(map(str.isdigit, value)) or 0.25 <= upper / len(value) <= 0.75


def _letters_and_digits(value: str) -> bool:
    """Require both letters and digits, as generated secrets have and words do not."""
    return any(map(str.isalpha, value)) and any(map(str.isdigit, value))


def _not_example(value: str) -> bool:
    """Reject template references and stock example words (`password123`, `changeme`, `${PW}`)."""
    if value.startswith(("$", "%", "{", "<")) or any(mark in value for mark in ("${", "{{", "%s", "%(")):
        return False
    return not _stock_word(value)


def _stock_word(value: str) -> bool:
    """Whether a password is only stock example words and digits (`pass123`, `foo:bar`, `changeme`)."""
    return _PLACEHOLDER_PASSWORD.fullmatch(re.sub(r"[^a-z0-9]", "", value.lower())) is not None


def _real_password(match: re.Match[str]) -> bool:
    """Reject template references, masks, stock example words and user-equals-password defaults."""
    value = match["secret"]
    if value.startswith("[REDACTED") or not _varied(value):
        return False
    if value.startswith("$") or any(mark in value for mark in ("${", "$(", "{", "}", "%s", "%(")):
        return False  # a template or environment reference; '$' inside a password is kept
    if value == match["user"]:  # postgres:postgres, guest:guest: well-known defaults
        return False
    return not _stock_word(urllib.parse.unquote(value))


# Parts of placeholder values: your-api-key-1, xxxx1234, abc***xyz, <changeme>, [REDACTED:...],
# FTP's `-anonymous@`; and of values that are something else: URLs, regexes and paths (`\`)
_PLACEHOLDER_PARTS = (
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "replace",
    "dummy",
    "redacted",
    "anonymous",
    "xxxx",
    "***",
    "...",
    "://",
    "\\",
)
_SYMBOLS = frozenset("!#$%&*+?@^~")
# Values that are something else than a credential: a path (`pwd = "/home/user1/app"`), an
# algorithm's name (`hash_key = "sha256"`, `signing_key = "HMAC-SHA256"`, `AES-256-GCM`), a name
# made of words that name credentials (`api_key = "x-api-key-1"`, `token: bearer_token_2`)
_ALGORITHM_PART = (
    r"(?:sha|md|hs|rs|es|ps|aes|des|rc|blake|shake|ripemd)?[0-9]*"
    r"|hmac|rsa|ecdsa|eddsa|ed25519|ed448|x25519|x448|dsa|dh|ecdh|pbkdf2|bcrypt|scrypt|argon2(?:id|i|d)?"
    r"|gcm|cbc|ctr|ecb|cfb|ofb|ccm|siv|ocb|oaep|pss|pkcs[0-9]*|v[0-9]+|p|secp[0-9]+[rk][0-9]|prime[0-9]+v[0-9]"
    r"|chacha20|poly1305|xchacha20|salsa20|camellia|blowfish|twofish|sm[234]|crc[0-9]*|xxhash|murmur[0-9]*|fnv[0-9a]*"
)
# every part a word that names credentials, a single letter or a number: `x-api-key-1`, `bearer_token_2`
# (`hunter2-very-secret` is a passphrase: `hunter2` and `very` are not such parts)
_NAME_PART = (
    r"(?:key|keys|token|tokens|secret|secrets|password|passwd|pwd|pass|api|apikey|auth|access|refresh"
    r"|bearer|client|private|public|master|admin|app|user|db|id|[a-z]|[0-9]+|v[0-9]+)"
)
_NAME_WORDS = (
    rf"(?:{_NAME_PART}[_-])*(?:key|keys|token|secret|password|passwd|pwd|api|apikey|auth)"
    rf"(?:[_-]{_NAME_PART})*"
)
_NOT_A_CREDENTIAL = re.compile(
    rf"(?:~|\.{{1,2}})?/[\w.@/-]*|(?i:(?:{_ALGORITHM_PART})(?:[-_/+](?:{_ALGORITHM_PART}))*)|(?i:{_NAME_WORDS})"
)


def _credential_value(value: str) -> bool:
    """Accept a literal that looks chosen or generated: 8+ characters, letters with a digit or a
    symbol (`!#$%&*+?@^~`; not `-_.=`, so `your-api-key`, `my_secret_name` and `a=b` are not), not a
    template, mask or stock example (`${PW}`, `***`, `password123`, `changeme2024`)."""
    if len(value) < 8 or not any(map(str.isalpha, value)):
        return False
    if not any(map(str.isdigit, value)) and _SYMBOLS.isdisjoint(value):
        return False  # (the cheap tests first: most candidates are words)
    if not _varied(value) or not _not_example(value):
        return False
    lowered = value.lower()
    return not any(part in lowered for part in _PLACEHOLDER_PARTS) and not _NOT_A_CREDENTIAL.fullmatch(value)


# An assignment to a name that holds a credential (the name in the rule, at the end of a longer
# one: DB_PASSWORD, spring.datasource.password, clientSecret, x-api-key, _authToken), maybe quoted
# (JSON, PHP, YAML), by `=`, `:`, `:=` or `=>`; then a quoted literal (maybe b"", r"", u""), or one
# unquoted token: no quotes, brackets, braces, `=:,;&|<>` (so `os.environ["K"]`, `getpass()`,
# `${VAR}`, `<password>`, `ENC(...)` stop it early), base64 padding allowed, followed by a space, a
# quote, `;&|` or the end. Possessive runs: a token never backtracks, and it cannot run past the
# next `=` or `:`, so no two candidates scan the same characters twice (linear on any input).
_ASSIGNED = (
    r"""(?P<name>{name})["'`]?(?P<sp1>[ \t]*)(?P<op>:=|=>|[:=])(?P<sp2>[ \t]*)"""
    r"""(?:[bru]{{0,2}}(?P<q>["'`]))?"""
    r"""(?P<secret>(?(q)[^"'`\s]{{8,}}+|[^\s"'`=:,;&|()\[\]{{}}<>]{{8,}}+={{0,2}}))"""
    r"""(?(q)(?P=q)|(?=[\s"'`;&|]|\Z))"""
)
# an unquoted value may end the line or the statement, or be followed by a comment or a shell operator
_VALUE_END = re.compile(r"""[ \t]*(?:[\r\n;&|"'`\\#]|//|\Z)""")
# Unquoted values shaped as names in code, not literals: self.password, settings.API_KEY,
# config.db.secret (dotted; not ya29.a0AfH6SMBx, whose digits sit between letters), next_token_2,
# DEFAULT_PASSWORD_2 (snake case), CancelToken$1 (a bundler's renamed binding)
_CODE_NAME = re.compile(
    r"(?![\w$.]*[A-Za-z][0-9]+[A-Za-z])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+"
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Za-z_]\w*\$[0-9]*"
)
_SECRET_KEY_NAME = re.compile(r"(?:api|private|encryption|signing|master)[_.-]?\Z")
# Token names that are not credentials: .NET's publicKeyToken, and the pagination, idempotency,
# lock and verification tokens of cloud APIs (NextToken, ChangeToken, ClientToken, output_token)
_NOT_AUTH_TOKEN = re.compile(
    r"(?:public[_.-]?(?:key)?|next|page|continuation|change|lock|client|request|idempotency|action|export|import"
    r"|output|input|update|copy|product|forward|backward|workunit|verification|webidentity|cancel|sync|resume"
    r"|marker|cursor|pagination)[_.-]?\Z"
)
_HASHED_NAME = re.compile(r"hash(?:ed)?[_.-]?\Z")  # hashed_password: a hash, not the password
_HASH_VALUE = re.compile(
    r"(?:pbkdf2_sha(?:1|256)|bcrypt(?:_sha256)?|argon2|scrypt|sha1|md5)\$|\$(?:2[abxy]|argon2|[156])\$"
)
_KEY_BEFORE = re.compile(r"[\w:.-]*\Z")  # the rest of the key a credential name ends
_REPEATED = re.compile(r"(.)\1{4}")  # lcccccccX2kccccccc: a test vector
_HEX_NUMBER = re.compile(r"0[xX][0-9a-fA-F]{1,8}")  # token = 0x7fffffff: a number of 32 bits at most
# a dotted name in code whose first part has no digit (rust_openssl.hpke.X25519PrivateKey), where
# a token's first part has one (ya29.a0AfH6SMBx)
_DOTTED_CODE = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_$][\w$]*)+")


def _assigned_secret(match: re.Match[str]) -> bool:
    """Accept a quoted credential literal, or an unquoted token that is a literal, not code.

    Unquoted values are code as often as not (`password = request.POST['password']`, `password=None`,
    `password: str`, `token = self.token`, `def login(user, password):`), so one counts only when it
    is a credential value (see _credential_value: `password`, `None`, `str` fail) that does not
    start as a reference, path, operator or YAML tag/alias (`$%#/~!*@.+-`), is not a name in code
    (see _CODE_NAME), and either is written `NAME=value` as in .env files and shells (where a
    command may follow: `PGPASSWORD=... psql`) or ends the line or statement (`password = Zebra9Pass4`,
    `password: s3cr3t!`, then maybe a comment, `;`, `&`, `|` or a closing quote) where code would go
    on with `,`, `)`, `(` or an operator. An identifier with a digit that ends a line
    (`password = userPass1`) is taken for a literal: ini and YAML values look the same.
    """
    value = match["secret"]
    if not _credential_value(value):
        return False
    if not _not_a_reference(match):
        return False
    if match["q"]:
        return True
    if value[0] in "$%#/~!*@.+-" or _CODE_NAME.fullmatch(value) or _DOTTED_CODE.fullmatch(value):
        return False
    if match.string[max(0, match.start("name") - 5) : match.start("name")] in ("this.", "self."):
        return False  # an attribute set in code to a variable: this.password = newPassword1;
    if match["op"] == "=" and not match["sp1"] and not match["sp2"]:
        return True
    return _VALUE_END.match(match.string, match.end("secret")) is not None


def _not_a_reference(match: re.Match[str]) -> bool:
    """Reject what names or tests a credential without being one: a type name (the hash of
    `"AWS::MSK::BatchScramSecret"` in a schema), an ARN (`arn:aws:...:secret:name-a1b2c3`, where
    `:secret:` reads as an assignment), a password hash (`hashed_password`, `pbkdf2_sha256$...`), a
    patterned test vector (`ccccc`, `abcdefghij`)."""
    text, start, value = match.string, match.start("name"), match["secret"]
    before = text[max(0, start - 40) : start]
    key = _KEY_BEFORE.search(before)
    if key is not None and "::" in key.group() + match["name"]:
        return False
    if before.endswith(":") and match["op"] == ":" and not match["sp1"] and not match["sp2"]:
        return False
    if value[:4].lower() in ("arn:", "urn:") or _HEX_NUMBER.fullmatch(value):
        return False
    if _HASHED_NAME.search(before[-24:].lower()) or _HASH_VALUE.match(value):
        return False
    return _REPEATED.search(value) is None and not _ascending_run(value)


def _ascending_run(value: str, n: int = 6) -> bool:
    """Tell whether `n` letters in a row follow the alphabet (abcdef; case-sensitive, so
    abcDEF123xyz has none)."""
    run = 1
    for a, b in zip(value, value[1:]):
        run = run + 1 if a.isalpha() and b.isalpha() and ord(b) == ord(a) + 1 else 1
        if run >= n:
            return True
    return False


# An environment variable set in a .env-style line, a shell script or a compose file
# (`DB_PASSWORD=p@ss(w0rd)123`, `export API_TOKEN=...`, `- MYSQL_ROOT_PASSWORD: Xy7:kq2Lm9Qz`): an
# upper-case name alone on its line, so the value runs to the end of the line, whatever it holds
# (the rules above stop an unquoted value at brackets, commas and colons, where code goes on).
_ENV_LINE = (
    r"""^[ \t]*(?:(?:export|ENV|ARG|set|SET)[ \t]+|-[ \t]+)?["']?(?P<name>[A-Z0-9_]*?{suffix})["']?(?P<sp1>)"""
    r"""(?P<op>[=:])(?P<sp2>[ \t]*)(?P<q>["']?)(?P<secret>[^\s"']{{8,}}+)(?P=q)["']?[ \t]*(?:\#[^\r\n]*)?\r?$"""
)


def _line_value(match: re.Match[str]) -> bool:
    """Accept the value that ends an environment or config line when it is a credential literal
    (see _credential_value, _not_a_reference), not a reference (`$(cat ...)`, `${X}`), a path
    (SSH_PRIVATE_KEY=~/.ssh/id_ed25519) or a name in code; a YAML key needs the blank after its colon."""
    value = match["secret"]
    if match["op"] == ":" and not match["sp2"] or value[0] in "$%<{/~" or _CODE_NAME.fullmatch(value):
        return False
    return _credential_value(value) and _not_a_reference(match)


def _env_secret(match: re.Match[str]) -> bool:
    """Accept an environment value (see _line_value) whose name is not a pagination token's."""
    name = match["name"]
    if name.endswith("TOKEN") and _NOT_AUTH_TOKEN.search(name[:-5].lower()):  # NEXT_TOKEN
        return False
    return _line_value(match)


# A config line (.properties, INI, YAML): a lower-case password name, then one token that is the
# rest of the line (`db.password=Pa55:w0rd!x`, `password: Xy7:kq2Lm9Qz`), colons and all
_CONFIG_LINE = re.compile(
    r"""^[ \t]*(?:(?:export|ENV|ARG|set)[ \t]+|-[ \t]+)?(?P<name>[\w.-]{0,40}?(?i:password|passwd|pwd))"""
    r"""(?P<sp1>[ \t]*)(?P<op>[=:])(?P<sp2>[ \t]*)(?P<secret>[^\s"'`,;]{8,}+)[ \t]*(?:[ \t][#;][^\r\n]*)?\r?$""",
    re.MULTILINE,
)  # (a value ending in `,` or `;` is code: `password: req.body.password1,`, `this.password = pw1;`)
_CALL_OR_INDEX = re.compile(r"[\w)\]][(\[]")  # get_password(x), os.environ['PW']: code, not a value


def _config_secret(match: re.Match[str]) -> bool:
    """Accept a config value (see _line_value) that is not a YAML tag or alias, nor code: a call,
    a subscript, a dotted name, an attribute set in code."""
    value = match["secret"]
    if (
        match["op"] == ":"
        and value[0] in "!*&"
        or _CALL_OR_INDEX.search(value)
        or _DOTTED_CODE.fullmatch(value)
    ):
        return False
    return not match["name"].startswith(("this.", "self.")) and _line_value(match)


def _pass_word(match: re.Match[str]) -> bool:
    """Accept a bare `pass` only as a word of the name (DB_PASS, db-pass, dbPass), not bypass or compass."""
    start = match.start("name")
    if len(match["name"]) != 4 or start == 0:
        return True
    before = match.string[start - 1]
    return not before.isalnum() or (match.string[start] == "P" and (before.islower() or before.isdigit()))


def _secret_key_name(match: re.Match[str]) -> bool:
    """Require a `key` name to be an API, private, encryption, signing or master key (api_key, apiKey,
    X-API-Key, PRIVATE_KEY, encryptionKey), not any key."""
    start = match.start("name")
    return _SECRET_KEY_NAME.search(match.string[max(0, start - 11) : start].lower()) is not None


def _auth_token_name(match: re.Match[str]) -> bool:
    """Reject a token name that says its value is public or not a credential (publicKeyToken,
    NextToken, ChangeToken, idempotency and lock tokens)."""
    start = match.start("name")
    return _NOT_AUTH_TOKEN.search(match.string[max(0, start - 24) : start].lower()) is None


def _basic_credentials(value: str) -> bool:
    """Require base64 of `user:password`, as HTTP Basic auth and docker's and npm's `auth` carry."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError
        return False
    return decoded.partition(":")[2] != "" and decoded.isprintable()


@dataclass(frozen=True, slots=True)
class _Finder:
    """A rule written as code rather than one regex: `find` yields the kind, start and end of each secret."""

    gate: Callable[[str], object]
    find: Callable[[str], Iterator[tuple[str, int, int]]]


# A private key block: BEGIN line, a body of base64 (maybe behind comment or quote prefixes), the
# matching END line within 8,000 characters (a 4096-bit key is 3,300); or, without an END, the
# BEGIN line and the base64 lines right after it.
_KEY_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----")
_NOT_KEY_BODY = re.compile(r"[^A-Za-z0-9+/=\s\\'\",:.;+#>*!|-]")  # a character no block body holds
_KEY_LINES = re.compile(r"(?:\r?\n[ \t]*(?:(?:[#>*;!|]|//)[ \t]*)?[A-Za-z0-9+/=]{40,}+[ \t]*)+")
_KEY_MAX_BODY = 8000


def _next(text: str, needle: str, pos: int) -> int:
    """Where `needle` next occurs at or after `pos` (-1 if nowhere): str.find, named so tests can count it."""
    return text.find(needle, pos)


def _key_blocks(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the span of each private key block (see _KEY_BEGIN). Linear: the next END line of each
    label and the next character that cannot be in a body are found once and reused by every BEGIN
    before them (a regex scanning up to 8,000 characters after each BEGIN took 9 s on 1 MB of BEGIN
    lines)."""
    pos = 0
    bad = -1  # the first character at or after the current body that no body holds
    ends: dict[str, int] = {}  # END line -> its first position at or after the current body, or -1
    while (begin := _KEY_BEGIN.search(text, pos)) is not None:
        body = begin.end()
        if bad < body:
            b = _NOT_KEY_BODY.search(text, body)
            bad = len(text) if b is None else b.start()
        label = f"-----END {begin[1]}PRIVATE KEY{begin[2]}-----"
        end = ends.get(label, -2)
        if end == -2 or -1 < end < body:
            end = ends[label] = _next(text, label, body)
        if end != -1 and end <= bad and end - body <= _KEY_MAX_BODY:
            stop = end + len(label)
        elif (lines := _KEY_LINES.match(text, body)) is not None:
            stop = lines.end()
        else:
            pos = body
            continue
        if _key_body(text[begin.start() : stop]):
            yield "private-key", begin.start(), stop
        pos = stop


# Command lines that carry a password as a flag: the command's word, then on the same line (within
# 300 characters, before the next such word) the flag and its value. In shell lines and exec arrays
# (`["mysql", "-u", "root", "-pS3cret"]`), so a flag may follow a blank, a quote or a comma.
_FLAG_COMMANDS = re.compile(
    r"(?P<mysql>mysql(?:dump|admin)?|mariadb(?:-dump|-admin)?)\b|(?P<other>redis-cli|sshpass)\b"
)
_COMMAND_WORDS = (
    "mysql",
    "mariadb",
    "redis-cli",
    "sshpass",
)  # found by str.find: 10 times faster than the pattern
_FLAG_WINDOW = 300
_MYSQL_FLAG = re.compile(r"""[\s"',](?:-p|--password=)""")  # mysql's -p takes its value attached
_OTHER_FLAG = re.compile(
    r"""[\s"',](?:-a|-p|--pass)[ \t]+|[\s"',](?:-a|-p)["'],[ \t]*"""
)  # redis-cli -a X, sshpass -p X
_FLAG_VALUE = re.compile(  # quoted: anything but the quote (no $ in double quotes: the shell expands it)
    r"""'(?P<sq>[^'\n]{4,256}+)'|"(?P<dq>[^"$\n]{4,256}+)"|(?P<bare>[^\s'"$,\])]{4,256}+)(?![^\s'"$,\])])"""
)


def _flag_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the password of each command line that passes one as a flag (see _FLAG_COMMANDS).
    Linear: each command's flags are looked for only up to the next command word or line end (a
    lazy run after each `mysql` scanned 300 characters per word: 7 s on 1 MB of `mysql `)."""
    starts: list[int] = []
    for name in _COMMAND_WORDS:
        at = text.find(name)
        while at != -1:
            starts.append(at)
            at = text.find(name, at + 1)
    words = [m for at in sorted(starts) if (m := _FLAG_COMMANDS.match(text, at)) is not None]
    for i, word in enumerate(words):
        start = word.end()
        stop = min(start + _FLAG_WINDOW, words[i + 1].start() if i + 1 < len(words) else len(text))
        newline = text.find("\n", start, stop)
        stop = stop if newline == -1 else newline
        if text.find("-", start, stop) == -1:  # every flag starts with one
            continue
        flags = _MYSQL_FLAG if word["mysql"] else _OTHER_FLAG
        for flag in flags.finditer(text, start, stop + 12):
            if flag.start() >= stop:
                break
            value = _FLAG_VALUE.match(text, flag.end())
            if value is None:
                continue
            group = value.lastgroup or "bare"
            if _not_example(value[group]) and (word["mysql"] or _credential_value(value[group])):
                yield "command-line-password", value.start(group), value.end(group)
            break


def _putty_private_lines(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the private part of each PuTTY key (`Private-Lines: N`, its base64 lines, `Private-MAC`)."""
    pos = 0
    lines_at = -2  # the next `Private-Lines:` at or after the current head (-1: none), and its block
    block: re.Match[str] | None = None
    while (head := _next(text, "PuTTY-User-Key-File-", pos)) != -1:
        if -1 < lines_at < head or lines_at == -2:  # found once for every head before it: linear
            lines_at = _next(text, "Private-Lines:", head)
            block = None if lines_at == -1 else _PUTTY_PRIVATE.match(text, lines_at)
        if lines_at == -1:
            return
        if block is None or lines_at - head > 8000:
            pos = head + 1
            continue
        yield "private-key", block.start("secret"), block.end("secret")
        pos, lines_at = block.end(), -2


_PUTTY_PRIVATE = re.compile(
    # each base64 line whole (so `PuTTY` of the next key's first line is not one)
    r"Private-Lines:[ \t]*[0-9]+(?P<secret>(?:\r?\n[A-Za-z0-9+/=]{4,}+[ \t]*(?=\r?\n|\Z))+"
    r"(?:\r?\nPrivate-MAC:[ \t]*[0-9a-fA-F]+)?)"
)


def _kind_of_name(name: str) -> str:
    """Name the kind of an assigned secret by the word its name ends with."""
    lowered = name.lower()
    if "token" in lowered:
        return "token-assignment"
    if lowered.endswith(("key", "salt")) and "secret" not in lowered:
        return "api-key-assignment"
    return "password-assignment"


_SECRET_WORD = re.compile(
    r"pass(?:word|wd|phrase)?(?![a-z])|pwd|secret|token|api[_.-]?key|(?:private|encryption|signing|master|auth|secure"
    r"|logged[_-]?in|nonce)[_.-]?(?:key|salt)|salt\Z|credential"
)


def _secret_name(name: str) -> bool:
    """Tell whether a constant or variable name holds a credential (DB_PASSWORD, stripeSecret,
    AUTH_KEY, GITHUB_TOKEN; not NEXT_TOKEN, PASSWORD_RESET_URL's kin are left to the value check)."""
    lowered = name.lower()
    found = _SECRET_WORD.search(lowered)
    if found is None:
        return False
    if found.group().startswith("token") and _NOT_AUTH_TOKEN.search(lowered[: found.start()]):
        return False
    return not _HASHED_NAME.search(lowered[: found.start()]) and not lowered.endswith(
        ("_url", "_path", "_file", "_name", "_env", "_var", "_len", "_length")
    )


# define('DB_PASSWORD', 'S3cret!') in PHP (WordPress's wp-config.php: DB_PASSWORD, AUTH_KEY, ...)
_PHP_DEFINE = re.compile(
    r"""define\([ \t]*(?P<nq>["'])(?P<name>[A-Za-z0-9_]{2,64}+)(?P=nq)[ \t]*,[ \t]*(?P<q>["'])(?P<secret>[^"'\n]{1,256}+)(?P=q)[ \t]*\)"""
)
# a literal default of a secret environment variable: os.environ.get("API_TOKEN", "t0k3n..."),
# os.getenv('DB_PASSWORD', 'S3cret!'), process.env.DB_PASSWORD || "S3cret!", ?? 'S3cret!'
# (one pattern per spelling, each led by its literal: an alternation of them scanned 10 times slower)
_ENV_DEFAULT_CALL = r"""\([ \t]*(?P<nq>["'])(?P<name>[\w.-]{1,64}+)(?P=nq)[ \t]*,[ \t]*[bru]{0,2}(?P<q>["'])(?P<secret>[^"'\n]{1,256}+)(?P=q)"""
_ENV_DEFAULTS = {
    "environ": re.compile(r"environ\.(?:get|setdefault)" + _ENV_DEFAULT_CALL),
    "getenv": re.compile(r"getenv" + _ENV_DEFAULT_CALL),
    "env.get": re.compile(r"(?<!environ)env\.get" + _ENV_DEFAULT_CALL),
    "process.env": re.compile(
        r"""process\.env\.(?P<name>\w{1,64}+)[ \t]*(?:\|\||\?\?)[ \t]*(?P<q>["'`])(?P<secret>[^"'`\n]{1,256}+)(?P=q)"""
    ),
}


def _named_literals(pattern: re.Pattern[str]) -> Callable[[str], Iterator[tuple[str, int, int]]]:
    """Yield the literal of each match whose name holds a credential and whose value is one, and
    its kind by the name."""

    def find(text: str) -> Iterator[tuple[str, int, int]]:
        for m in pattern.finditer(text):
            if (
                _secret_name(m["name"])
                and _credential_value(m["secret"])
                and _REPEATED.search(m["secret"]) is None
            ):
                yield _kind_of_name(m["name"]), m.start("secret"), m.end("secret")

    return find


# base64 that decodes to secrets: a kubeconfig's client-key-data (a PEM key, whose base64 starts
# LS0tLS1CRUdJTi: "-----BEGIN"), a Kubernetes Secret's `data:` values (.env files, passwords)
_ENCODED_KEY = "LS0tLS1CRUdJT"
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}+={0,2}(?![A-Za-z0-9+/=])")
_MANIFEST_SECRET = re.compile(r"""kind["']?[ \t]*:[ \t]*["']?Secret\b""")
_DATA_ENTRY = re.compile(
    r"""(?m)^[ \t]*["']?(?P<name>[\w.-]{1,253}+)["']?[ \t]*:[ \t]*["']?(?P<value>[A-Za-z0-9+/]{8,}+={0,2})["']?[ \t]*,?[ \t]*\r?$"""
)


def _decoded(value: str) -> str | None:
    """Decode base64 to text, or None if it is not base64 of printable UTF-8 text."""
    try:
        text = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError
        return None
    return text if text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable() else None


def _encoded_secrets(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each base64 value that decodes to a private key, or, in a Kubernetes Secret manifest,
    to text holding a secret (.env lines) or to a credential under a credential's name."""
    pos = 0
    while (at := _next(text, _ENCODED_KEY, pos)) != -1:
        run = _BASE64_RUN.match(text, at)
        if run is None:
            pos = at + 1
            continue
        decoded = _decoded(run[0])
        if decoded is not None and any(f.kind == "private-key" for f in find_secrets(decoded)):
            yield "private-key", run.start(), run.end()
        pos = run.end()
    if _MANIFEST_SECRET.search(text) is None:
        return
    for entry in _DATA_ENTRY.finditer(text):
        decoded = _decoded(entry["value"])
        if decoded is None or decoded.startswith("-----BEGIN"):
            continue  # not text; a key is found above
        inner = find_secrets(decoded) if any(c in decoded for c in "\n=:-") else []
        if inner:
            yield inner[0].kind, entry.start("value"), entry.end("value")
        elif (
            "\n" not in decoded.strip() and _secret_name(entry["name"]) and _credential_value(decoded.strip())
        ):
            yield _kind_of_name(entry["name"]), entry.start("value"), entry.end("value")


def _anycase(kind: str, word: str, pattern: str, check: Callable[[re.Match[str]], bool]) -> _Rule:
    """Build a rule matched in any case, gated on `word` (lower case) in the lowered text; its
    secret is the group `secret`."""
    return _Rule(
        kind, _contains(word), re.compile(pattern, re.IGNORECASE), "secret", check, re.compile(pattern)
    )


def _anycase_matches(rule: _Rule, text: str, lowered: str) -> Iterator[re.Match[str]]:
    """Find `rule.regex` in `text` at the candidates that `rule.scan` finds in `lowered`."""
    assert rule.scan is not None
    if len(lowered) != len(text):  # a few characters lengthen when lowered (İ): search the text itself
        yield from rule.regex.finditer(text)
        return
    pos = 0
    while (hit := rule.scan.search(lowered, pos)) is not None:
        match = rule.regex.match(text, hit.start())
        if match is None:  # a Unicode case-folding difference: skip the candidate
            pos = hit.start() + 1
            continue
        yield match
        pos = max(match.end(), hit.start() + 1)


_RULES: tuple[_Rule | _Finder, ...] = (
    _Finder(_contains("-----BEGIN "), lambda text: _key_blocks(text)),
    _Rule(
        "aws-access-key",
        _search("AKIA|ASIA"),
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ),
    _Rule(
        "aws-secret-key",
        _contains("ecret", "ECRET"),
        # case variants spelt out: a literal-led regex scans far faster than (?i)
        re.compile(
            r"(?P<name>(?:secret|Secret|SECRET)[_.-]?(?:(?:access|Access|ACCESS)[_.-]?)?(?:key|Key|KEY)?)"
            r"[\"']?\s*(?::=|=>|[:=])\s*[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        group="secret",
        check=lambda m: _aws_secret_name(m) and _varied(m["secret"]) and _mixed(m["secret"]),
    ),
    _Rule(
        "github-token",
        _search("gh[pousr]_|github_pat_"),
        re.compile(
            _B + r"(?:gh[pousr]_(?P<body>[A-Za-z0-9]{36,255})|github_pat_(?P<pat>[A-Za-z0-9_]{22,255}))" + _E
        ),
        check=lambda m: _varied(m["body"] or m["pat"]),
    ),
    _Rule(
        "gitlab-token",
        _contains("glpat-"),
        re.compile(_B + r"glpat-(?P<body>[A-Za-z0-9_-]{20,})" + _E),
        check=lambda m: _varied(m["body"]),
    ),
    _Rule(
        "slack-token",
        _search("xox[abprs]-"),
        re.compile(_B + r"xox[abprs]-[0-9]{6,}-(?P<body>[A-Za-z0-9-]{8,})" + _E),
        check=lambda m: _varied(m["body"]),
    ),
    _Rule(
        "slack-webhook",
        _contains("hooks.slack.com"),
        re.compile(
            r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{20,})"
        ),
        group="secret",
        check=lambda m: _varied(m["secret"].rstrip("/").rpartition("/")[2]),
    ),
    _Rule(
        "stripe-key",
        _search("k_live_|k_test_"),
        re.compile(_B + r"(?:sk|rk)_(?:live|test)_(?P<body>[A-Za-z0-9]{16,})" + _E),
        check=lambda m: _mixed(m["body"]),
    ),
    _Rule(
        "anthropic-key",
        _contains("sk-ant-"),
        re.compile(_B + r"sk-ant-(?P<body>[A-Za-z0-9_-]{32,})" + _E),
        check=lambda m: _mixed(m["body"]),
    ),
    _Rule(
        "openai-key",
        _contains("sk-"),
        re.compile(_B + r"sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?(?P<body>[A-Za-z0-9_-]{32,})" + _E),
        check=lambda m: _mixed(m["body"]),
    ),
    _Rule(
        "jwt",
        _contains("eyJ"),
        re.compile(_B + r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}" + _E),
        check=lambda m: _jwt_header(m[0]),
    ),
    _Rule(
        "url-password",
        _contains("://"),
        # scheme://user:password@host — the password may hold '@' (the last one ends it)
        re.compile(r"://(?P<user>[^\s:/?#@'\"<>\[\]()]*):(?P<secret>[^\s/?#'\"<>]+)@(?=[A-Za-z0-9\[])"),
        group="secret",
        check=_real_password,
    ),
    _Rule(
        "url-password",
        _contains("://"),
        # the same, for a password holding '/', '?' or '#' (unescaped, as people write them); not
        # a port followed by a path (`host:8080/a@b`), which has only digits before the '/'. One
        # bounded run, the separator checked after: two runs around it took cubic time on a line
        # of many URLs
        re.compile(r"://(?P<user>[^\s:/?#@'\"<>\[\]()]*):(?P<secret>[^\s'\"<>@]{1,256})@(?=[A-Za-z0-9\[])"),
        group="secret",
        check=lambda m: (
            re.search(r"[/?#]", m["secret"]) is not None
            and re.match(r"[0-9]*[/?#]", m["secret"]) is None
            and _real_password(m)
        ),
    ),
    # `Authorization: Bearer <opaque token>` (JWTs have their own rule), one pattern per spelling
    *(
        _Rule(
            "bearer-token",
            _contains(word),
            re.compile(word + r"\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)"),
            group="secret",
            check=lambda m: _varied(m["secret"]) and _letters_and_digits(m["secret"]),
        )
        for word in ("Bearer", "bearer", "BEARER")
    ),
    # mysql -pSECRET, mysql --password=SECRET, in a shell line or an exec array; redis-cli -a SECRET,
    # sshpass -p SECRET (see _FLAG_COMMANDS); redis's `requirepass SECRET`, in redis.conf or as a flag
    _Finder(_contains("mysql", "mariadb", "redis-cli", "sshpass"), lambda text: _flag_passwords(text)),
    _Rule(
        "command-line-password",
        _contains("requirepass"),
        re.compile(r"""requirepass(?:[ \t]*=[ \t]*|[ \t]+)["']?(?P<secret>[^\s"']{8,256}+)(?!\S)"""),
        group="secret",
        check=lambda m: _credential_value(m["secret"]),
    ),
    _Rule(
        "google-api-key",
        _contains("AIza"),
        re.compile(_B + r"AIza(?P<body>[A-Za-z0-9_-]{35})" + _E),
        check=lambda m: _varied(m["body"]) and _mixed(m["body"]),
    ),
    _Rule(
        "huggingface-token",
        _contains("hf_"),
        re.compile(_B + r"hf_(?P<body>[A-Za-z0-9]{34,40})" + _E),
        check=lambda m: _random_case(m["body"]),
    ),
    _Rule(
        "npm-token",
        _contains("npm_"),
        re.compile(_B + r"npm_(?P<body>[A-Za-z0-9]{36})" + _E),
        check=lambda m: _mixed(m["body"]),
    ),
    _Rule(
        "sendgrid-key",
        _contains("SG."),
        re.compile(_B + r"SG\.(?P<body>[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})" + _E),
        check=lambda m: _varied(m["body"]),
    ),
    _Rule(
        "azure-storage-key",
        _contains("AccountKey="),
        re.compile(r"AccountKey=(?P<secret>[A-Za-z0-9+/]{86}==)"),
        group="secret",
        check=lambda m: _varied(m["secret"]) and _mixed(m["secret"]),
    ),
    # the key of an Azure connection string (Service Bus, Event Hubs, IoT Hub, Storage) of any length
    _Rule(
        "azure-key",
        _contains("SharedAccessKey=", "AccountKey="),
        re.compile(r"(?:SharedAccessKey|AccountKey)=(?P<secret>[A-Za-z0-9+/]{20,}+={0,2})(?![A-Za-z0-9+/=])"),
        group="secret",
        check=lambda m: _varied(m["secret"]) and _mixed(m["secret"]),
    ),
    # a shared access signature's `sig=` (URL-encoded base64 of an HMAC), in a query that has `sv=`
    _Rule(
        "azure-sas-signature",
        _contains("sig="),
        re.compile(r"[?&;]sig=(?P<secret>(?:[A-Za-z0-9+/]|%[0-9A-Fa-f]{2}){20,}+)"),
        group="secret",
        check=lambda m: (
            "sv=" in m.string[max(0, m.start() - 400) : m.start()] + m.string[m.end() : m.end() + 400]
            and _varied(m["secret"])
        ),
    ),
    # webhook signing secrets: Stripe's whsec_ + alphanumerics, Svix's whsec_ + base64
    _Rule(
        "webhook-secret",
        _contains("whsec_"),
        re.compile(_B + r"whsec_(?P<body>[A-Za-z0-9+/]{24,}+={0,2})(?![A-Za-z0-9+/=_-])"),
        check=lambda m: _varied(m["body"]) and _random_case(m["body"]),
    ),
    # an AWS secret access key right after its key id, with no name in front: a CSV export
    # (`user,,AKIA...,wJalr...`), a constructor call (`Credentials("AKIA...", "wJalr...")`)
    _Rule(
        "aws-secret-key",
        _search("AKIA|ASIA"),
        re.compile(
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}[\"'`]?[ \t]*[,;:|\t]\s{0,40}+[\"'`]?"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        group="secret",
        check=lambda m: _varied(m["secret"]) and _mixed(m["secret"]),
    ),
    # Twilio's auth token beside its account SID: Client("AC...", "<32 hex>")
    _Rule(
        "twilio-auth-token",
        _search(
            "AC[0-9a-f]{32}"
        ),  # not `"AC" in text`, true of most files, which the regex then scanned slowly
        re.compile(
            r"(?<![A-Za-z0-9])AC[0-9a-f]{32}[\"'`]?[ \t]*[,;:|]\s{0,40}+[\"'`]?(?P<secret>[0-9a-f]{32})(?![A-Za-z0-9])"
        ),
        group="secret",
        check=lambda m: _varied(m["secret"]) and _letters_and_digits(m["secret"]),
    ),
    _Finder(_contains("PuTTY-User-Key-File-"), _putty_private_lines),
    _Finder(_contains(_ENCODED_KEY, "Secret"), _encoded_secrets),
    # a ~/.pgpass line (host:port:database:user:password) in a script or doc that writes one
    _Rule(
        "pgpass-password",
        _contains("pgpass"),
        re.compile(
            r"""(?m)^[ \t]*(?:(?:echo|printf)[ \t]+(?:-e[ \t]+)?)?["']?[A-Za-z0-9.*_\[\]-]{1,253}+:(?:[0-9]{1,5}+|\*)"""
            r""":[^\s:'"]{1,63}+:[^\s:'"]{1,63}+"""
            r""":(?P<secret>[^\s'"]{4,256}+)"""
        ),
        group="secret",
        check=lambda m: _not_example(m["secret"]) and _varied(m["secret"]) and m["secret"] != "*",
    ),
    _Finder(_contains("define("), _named_literals(_PHP_DEFINE)),
    *(_Finder(_contains(word), _named_literals(pattern)) for word, pattern in _ENV_DEFAULTS.items()),
    # Assignments to credential names (see _ASSIGNED and _assigned_secret), in any case; last, so
    # that a token rule above names the kind of a token in the same span
    _anycase(
        "password-assignment",
        "pass",
        _ASSIGNED.format(name="pass(?:word|wd|phrase)?"),  # password, passwd, passphrase, DB_PASS
        lambda m: _pass_word(m) and _assigned_secret(m),
    ),
    _anycase("password-assignment", "pwd", _ASSIGNED.format(name="pwd"), _assigned_secret),
    _anycase(
        "password-assignment",
        "secret",
        # client_secret, SECRET_KEY, secretKey, secret_key_base, aws_secret_access_key (any length:
        # AWS's own are 40 characters, the aws-secret-key rule)
        _ASSIGNED.format(name="secret(?:[_.-]?(?:access[_.-]?)?key(?:[_.-]?base)?)?"),
        _assigned_secret,
    ),
    _anycase(
        "api-key-assignment",
        "key",
        _ASSIGNED.format(name="key"),  # led by the literal; the check looks back for api or private
        lambda m: _secret_key_name(m) and _assigned_secret(m),
    ),
    # auth_token, access_token, refresh_token, GITHUB_TOKEN, _authToken, token
    _anycase(
        "token-assignment",
        "token",
        _ASSIGNED.format(name="token"),
        lambda m: _auth_token_name(m) and _assigned_secret(m),
    ),
    # `Authorization: Basic <base64 of user:password>`; docker's config.json `"auth": "<base64>"`,
    # npm's `_auth=<base64>`: base64 that decodes to user:password (which prose and names never do)
    _anycase(
        "basic-auth",
        "basic",
        r"basic[ \t]+(?P<secret>[a-z0-9+/]{8,}+={0,2})(?![a-z0-9+/=])",
        lambda m: _basic_credentials(m["secret"]),
    ),
    _anycase(
        "basic-auth",
        "auth",
        r"""auth["'`]?[ \t]*[:=][ \t]*["'`]?(?P<secret>[a-z0-9+/]{8,}+={0,2})(?![a-z0-9+/=])""",
        lambda m: _basic_credentials(m["secret"]),
    ),
    # gated on the name's end right before its operator: the line pattern is tried at every
    # position of a text, and most texts that hold the word hold no such line
    *(
        _Rule(
            kind,
            _words_then(words, gate + r"""["']?[=:]"""),
            re.compile(_ENV_LINE.format(suffix=suffix), re.MULTILINE),
            "secret",
            _env_secret,
        )
        for kind, words, gate, suffix in (
            (
                "password-assignment",
                ("PASS", "PWD", "SECRET"),
                r"(?:PASS(?:WORD|WD|PHRASE)?|PWD|SECRET[A-Z_]{0,24})",  # bounded: each try is short
                "(?:PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|SECRET(?:_ACCESS)?(?:_KEY)?(?:_BASE)?)",
            ),
            ("api-key-assignment", ("KEY",), "KEY", "(?:API|PRIVATE|ENCRYPTION|SIGNING|MASTER)_?KEY"),
            ("token-assignment", ("TOKEN",), "TOKEN", "TOKEN"),
        )
    ),
    _Rule(
        "password-assignment",
        _words_then(("password", "Password", "passwd", "pwd"), r"(?i:password|passwd|pwd)[ \t]*[=:]"),
        _CONFIG_LINE,
        "secret",
        _config_secret,
    ),
    # .netrc lines (in scripts and docs; the file itself is skipped): machine HOST [login USER]
    # password SECRET, on one line or several; at most 3 login/account pairs, so a candidate's scan
    # is bounded
    _Rule(
        "netrc-password",
        _contains("machine"),
        re.compile(r"machine\s+\S+(?:\s+(?:login|account)\s+\S+){0,3}\s+password\s+(?P<secret>\S+)"),
        group="secret",
        check=lambda m: _credential_value(m["secret"]),
    ),
)


def find_secrets(text: str) -> list[Finding]:
    """Find high-confidence secrets in `text`, in order, without overlaps: as written, and as they
    read once escapes are decoded and values split over lines are joined (see _view)."""
    found = _scan(text)
    view = _view(text)
    if view is not None:
        for f in _scan(view.text()):
            span = view.original(f.start, f.end)
            if span is not None:
                found.append(Finding(f.kind, *span))
    if len(found) < 2:
        return found
    found.sort(key=lambda f: (f.start, -f.end))
    kept = [found[0]]
    for finding in found[1:]:
        if finding.start >= kept[-1].end:
            kept.append(finding)
    return kept


def _scan(text: str) -> list[Finding]:
    """Run every rule over `text` as it is; the findings may overlap."""
    found: list[Finding] = []
    lowered: str | None = None
    for rule in _RULES:
        if isinstance(rule, _Finder):
            if rule.gate(text):
                found.extend(Finding(kind, start, end) for kind, start, end in rule.find(text))
            continue
        matches: Iterator[re.Match[str]]
        if rule.scan is None:
            if not rule.gate(text):
                continue
            matches = rule.regex.finditer(text)
        else:
            if lowered is None:
                lowered = text.lower()
            if not rule.gate(lowered):
                continue
            matches = _anycase_matches(rule, text, lowered)
        for match in matches:
            if rule.check is None or rule.check(match):
                found.append(Finding(rule.kind, match.start(rule.group), match.end(rule.group)))
    return found


# ---- the text as it reads: escapes decoded, values split over lines joined -----------------------


class _Spliced:
    """A text built from pieces of another, each piece copied, decoded (escapes), or standing for a
    span of it, with the map back: a secret found in the built text is redacted in the original."""

    def __init__(self, original: str) -> None:
        self.original_text = original
        self.parts: list[str] = []
        self.starts: list[int] = []  # where each piece starts in the built text
        self.spans: list[
            tuple[int, int, str, int]
        ] = []  # original start, end; "copy", "put" or "sub"; region
        self.subs: dict[
            int, tuple[re.Pattern[str], Callable[[re.Match[str]], str]]
        ] = {}  # "sub" piece -> how
        # "sub" piece -> where each replacement is in the built text, its length there, where in the original
        self.maps: dict[int, tuple[list[int], list[int], list[re.Match[str]]]] = {}
        self.size = 0
        self.region = 0

    def copy(self, start: int, end: int) -> None:
        """Append the original's start..end as it is."""
        if start < end:
            self._add(self.original_text[start:end], start, end, "copy")

    def put(self, value: str, start: int, end: int) -> None:
        """Append `value`, standing for the original's start..end."""
        self._add(value, start, end, "put")

    def sub(
        self, start: int, end: int, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str]
    ) -> None:
        """Append the original's start..end with each match of `pattern` replaced by `repl` of it
        (one piece however many replacements: a file of a million escapes is one piece, mapped on
        demand)."""
        self.subs[len(self.parts)] = (pattern, repl)
        self._add(pattern.sub(repl, self.original_text[start:end]), start, end, "sub")

    def end_region(self) -> None:
        """Close a region: a line break that stands for nothing, and no secret spans two regions."""
        if self.parts and self.spans[-1][3] == self.region:
            self.region += 1
            self.put("\n", self.spans[-1][1], self.spans[-1][1])
            self.region += 1

    def _add(self, value: str, start: int, end: int, how: str) -> None:
        self.parts.append(value)
        self.starts.append(self.size)
        self.spans.append((start, end, how, self.region))
        self.size += len(value)

    def text(self) -> str:
        """The built text."""
        return "".join(self.parts)

    def original(self, start: int, end: int) -> tuple[int, int] | None:
        """Map a span of the built text to the original's, or None if it crosses two regions."""
        i = bisect.bisect_right(self.starts, start) - 1
        j = bisect.bisect_right(self.starts, end - 1) - 1
        if self.spans[i][3] != self.spans[j][3]:
            return None
        a, b = self._at(i, start - self.starts[i], False), self._at(j, end - self.starts[j], True)
        return (a, b) if a < b else None

    def _at(self, piece: int, offset: int, is_end: bool) -> int:
        """The original offset of a built-text offset within a piece (an end is exclusive)."""
        start, end, how, _ = self.spans[piece]
        if how == "copy":
            return start + offset
        if how == "put":
            return end if is_end else start
        if piece not in self.maps:
            pattern, repl = self.subs[piece]
            built, lengths, matches, shrink = [], [], [], 0
            for m in pattern.finditer(self.original_text, start, end):
                n = len(repl(m))
                built.append(m.start() - start - shrink)
                lengths.append(n)
                matches.append(m)
                shrink += len(m[0]) - n
            self.maps[piece] = (built, lengths, matches)
        built, lengths, matches = self.maps[piece]
        # the last replacement that starts before an end, or at or before a start
        k = (bisect.bisect_left(built, offset) if is_end else bisect.bisect_right(built, offset)) - 1
        if k < 0:
            return start + offset
        inside = offset <= built[k] + lengths[k] if is_end else offset < built[k] + lengths[k]
        if inside and lengths[k]:  # within a replacement: all of what it replaced
            return matches[k].end() if is_end else matches[k].start()
        return matches[k].end() + offset - built[k] - lengths[k]


# an escape in a JSON or Python string (a notebook's outputs, a serialised config): \" \n \uXXXX ...
_ESCAPE = re.compile(r"""\\(?:u(?P<hex>[0-9a-fA-F]{4})|(?P<char>["'\\/bfnrt]))""")
_UNESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# what the rules that escapes hide from (names before `\"`, lines joined by `\n`) look for: lines
# of escapes without one of these are not decoded (a token rule finds a token between escapes)
_ESCAPED_WORDS = (
    "pass",
    "pwd",
    "secret",
    "key",
    "token",
    "auth",
    "basic",
    "machine",
    "mysql",
    "redis",
    "://",
    "-----",
)


def _unescape(m: re.Match[str]) -> str:
    """Decode one escape (see _ESCAPE)."""
    char = m["char"]
    return chr(int(m["hex"], 16)) if char is None else _UNESCAPED.get(char, char)


# a line continued by a backslash, and the string literals around it that Python concatenates
_CONTINUATION = re.compile(r"""(?P<q>["'])[ \t]*\\\r?\n[ \t]*(?P=q)|\\\r?\n""")
_CONTINUED = re.compile(r"\\\r?\n")
# NAME = ( "part" "part" ... ): literals Python concatenates, over lines (found by the bracket that
# ends its line: a pattern led by `[=:]` scanned every file 3 times slower)
_OPEN_PAREN = re.compile(r"\([ \t]*\r?\n")
_PARENTHESISED = re.compile(r"""\((?P<body>\s*+(?:[bruBRU]{0,2}(?P<q>["'])[^"'\\\n]*+(?P=q)\s*+){2,}+)\)""")
_LITERAL = re.compile(r"""[bruBRU]{0,2}(["'])([^"'\\\n]*+)\1""")
# a YAML block scalar: `name: >` or `name: |` (with chomping and indentation marks), its value on
# the more indented lines below
_BLOCK_HEAD = re.compile(
    r"""(?m)^(?P<indent>[ \t]*)(?:-[ \t]+)?["']?(?P<name>[\w.-]{1,128}+)["']?:(?P<mark>[ \t]*[>|][-+]?[1-9]?[ \t]*)\r?$"""
)
_BLOCK_LINES = 8  # a value split over more lines than this is text, not a token


def _view(text: str) -> _Spliced | None:
    """Build the text as its values read (see _Spliced), from the lines that hold escapes,
    continuations, parenthesised literals and YAML block scalars; None if there are none."""
    view = _Spliced(text)
    if "\\" in text:
        _add_escaped_lines(view, text)
        if "\\\n" in text or "\\\r\n" in text:
            _add_continued_lines(view, text)
    if "(" in text:
        for paren in _OPEN_PAREN.finditer(text):
            if not text[max(0, paren.start() - 8) : paren.start()].rstrip(" \t").endswith(("=", ":")):
                continue
            m = _PARENTHESISED.match(text, paren.start())
            if m is None:
                continue
            line = text.rfind("\n", 0, m.start()) + 1
            view.copy(line, m.start("body") - 1)
            joined = "".join(lit[2] for lit in _LITERAL.finditer(m["body"]))
            view.put(f'"{joined}"', m.start("body") - 1, m.end())
            view.end_region()
    if ": >" in text or ": |" in text:
        _add_block_scalars(view, text)
    return view if view.parts else None


def _line_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The start and end of the line (or lines) holding text[start:end]."""
    stop = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, len(text) if stop == -1 else stop


def _add_escaped_lines(view: _Spliced, text: str) -> None:
    """Add each run of lines that hold escapes, decoded (`\\n` becomes a line break of the view)."""
    m = _ESCAPE.search(text)
    while m is not None:
        start, stop = _line_around(text, m.start(), m.end())
        # the next lines join the run while each holds an escape
        while (m := _ESCAPE.search(text, stop)) is not None and text.find("\n", stop + 1, m.start()) == -1:
            stop = _line_around(text, m.start(), m.end())[1]
        run = text[start:stop].lower()
        if any(word in run for word in _ESCAPED_WORDS):
            view.sub(start, stop, _ESCAPE, _unescape)
            view.end_region()


def _add_continued_lines(view: _Spliced, text: str) -> None:
    """Add each run of lines joined by backslashes, joined (and the literals around the joins merged)."""
    pos = 0
    while (m := _CONTINUED.search(text, pos)) is not None:
        line = text.rfind("\n", 0, m.start()) + 1
        stop = _run_end(text, m.start())
        view.sub(line, stop, _CONTINUATION, lambda _: "")
        view.end_region()
        pos = stop + 1


_CONTINUED_RUN = re.compile(r"(?:[^\n]*\\\r?\n)+[^\n]*")  # lines that end in a backslash, and the one after


def _run_end(text: str, backslash: int) -> int:
    """Where the run of backslash-continued lines that has a continuation at `backslash` ends."""
    run = _CONTINUED_RUN.match(text, text.rfind("\n", 0, backslash) + 1)
    assert run is not None  # the line of `backslash` ends in one
    return run.end()


_NAME_HINT = re.compile(
    r"(?i:pass|pwd|secret|token|key|salt|credential)"
)  # what _secret_name needs, in any case


def _indicators(text: str) -> Iterator[int]:
    """Yield where each `: >` or `: |` is (found by str.find: a pattern led by `:` stopped at every
    colon of every file)."""
    for indicator in (": >", ": |"):
        at = text.find(indicator)
        while at != -1:
            yield at
            at = text.find(indicator, at + 3)


def _add_block_scalars(view: _Spliced, text: str) -> None:
    """Add each YAML block scalar of a few token lines as `name: <the lines joined>`."""
    for at in _indicators(text):
        head_start = text.rfind("\n", 0, at) + 1
        if not _NAME_HINT.search(text, head_start, at):  # the name holds no credential's word: skip at once
            continue
        head = _BLOCK_HEAD.match(text, head_start)
        if head is None or head.start("mark") != at + 1 or not _secret_name(head["name"]):
            continue
        indent = len(head["indent"])
        pieces: list[tuple[int, int]] = []  # the stripped content of each value line
        pos = head.end() + 1
        while pos < len(text) and len(pieces) <= _BLOCK_LINES:
            end = text.find("\n", pos)
            end = len(text) if end == -1 else end
            line = text[pos:end].rstrip("\r")
            content = line.lstrip(" \t")
            if not content or len(line) - len(content) <= indent:
                break
            pieces.append((pos + len(line) - len(content), pos + len(line.rstrip())))
            pos = end + 1
        if not pieces or len(pieces) > _BLOCK_LINES:
            continue
        values = [text[a:b] for a, b in pieces]
        if len(values) > 1 and any(" " in v or "\t" in v for v in values):
            continue  # prose, not a token split over lines
        view.copy(head.start(), head.start("mark"))
        view.put(" ", head.start("mark"), pieces[0][0])
        view.put("".join(values), pieces[0][0], pieces[-1][1])
        view.end_region()


def redact(text: str) -> tuple[str, dict[str, int]]:
    """Replace each secret by `[REDACTED:<kind>]`, keeping every line break; count them by kind."""
    findings = find_secrets(text)
    if not findings:
        return text, {}
    counts: dict[str, int] = {}
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(f"[REDACTED:{f.kind}]")
        parts.extend(_LINE_BREAK.findall(text, f.start, f.end))
        counts[f.kind] = counts.get(f.kind, 0) + 1
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts), counts
