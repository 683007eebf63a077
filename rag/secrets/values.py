"""Tell credential values and names from placeholders, code and look-alikes by their shape."""

from __future__ import annotations

import base64
import re
import urllib.parse

# Stock words of examples; a URL password made only of these (and trailing digits) is a placeholder:
# password, pass123, mypassword, foo:bar, secret, changeme, ...
_STOCK_WORDS = (
    r"(?:a|my|your|the|db|user|some)?"
    r"(?:pass|password|passwd|pwd|pw|secret|changeme|example|placeholder|redacted|token"
    r"|foo|bar|baz|qux|test|dummy|fake)+"
)
_PLACEHOLDER_PASSWORD = re.compile(_STOCK_WORDS + "[0-9]*")
_PLACEHOLDER_WORDS = re.compile(_STOCK_WORDS)
_LEET = str.maketrans("@$013457", "asoieast")  # the letters that leetspeak writes as symbols and digits


def varied(value: str) -> bool:
    """Reject one-character fills like `XXXX` or `0000`, which are placeholders."""
    return len(set(value)) > 3


def mixed(value: str) -> bool:
    """Require upper case, lower case and a digit, as random tokens have and kebab-case words lack."""
    return any(map(str.isupper, value)) and any(map(str.islower, value)) and any(map(str.isdigit, value))


def jwt_header(token: str) -> bool:
    """Require the first segment to decode to a JOSE header (`{"alg": ...}` or `{"typ": ...}`)."""
    decoded = _base64url_text(token.partition(".")[0])
    return decoded is not None and ('"alg"' in decoded or '"typ"' in decoded) and not example_jwt(token)


def _base64url_text(segment: str) -> str | None:
    """A JWT's segment decoded (base64url, its padding restored), or None when it is no base64."""
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)).decode("utf-8", "replace")
    except ValueError:
        return None


# the claims of the sample token jwt.io and its documentation print, copied into docs and tests the
# world over (signed with the key `your-256-bit-secret`): an example marked as one by its claims
_EXAMPLE_CLAIMS = re.compile(r'"sub"\s*:\s*"1234567890"\s*,\s*"name"\s*:\s*"John Doe"')


def example_jwt(token: str) -> bool:
    """Whether a JWT's claims are those of jwt.io's published sample (see _EXAMPLE_CLAIMS)."""
    parts = token.split(".")
    decoded = _base64url_text(parts[1]) if len(parts) >= 3 else None
    return decoded is not None and _EXAMPLE_CLAIMS.search(decoded) is not None


def aws_secret_name(match: re.Match[str]) -> bool:
    """Require the assigned name to be AWS-ish: `aws_secret...` or `...secret_access_key`."""
    if "access" in match["name"].lower():
        return True
    before = match.string[max(0, match.start() - 4) : match.start()].lower()
    return before.rstrip("_.-").endswith("aws")


def random_case(value: str) -> bool:
    """Tell a generated token from a name: with a digit, both cases suffice (as mixed); letters
    only (as Hugging Face user tokens are), a quarter to three quarters upper case, where
    CamelCase names have few capitals (AutoModelForSequenceClassification: 5 of 34)."""
    upper = sum(map(str.isupper, value))
    lower = sum(map(str.islower, value))
    if not upper or not lower:
        return False
    return any(map(str.isdigit, value)) or 0.25 <= upper / len(value) <= 0.75


def letters_and_digits(value: str) -> bool:
    """Require both letters and digits, as generated secrets have and words do not."""
    return any(map(str.isalpha, value)) and any(map(str.isdigit, value))


# a printf conversion with a width, a precision or a length (`%.*s`, `%08x`, `%ld`), or `%s` and `%d`
# alone (a generated password's `%e` or `%G` is as likely a symbol and a letter)
_FORMAT = re.compile(
    r"%(?:[-+ #0]*+(?:(?:[0-9]++|\*)?+\.(?:[0-9]++|\*)|[0-9]++)[hlLqjzt]{0,2}+|[hlLqjzt]{1,2}+)[diouxXeEfgGcs]"
    r"|%[sd]"
)


def format_string(value: str) -> bool:
    """Whether `value` holds a printf conversion (`%s`, `%.*s`, `%08x`; see _FORMAT): a format,
    filled in by code. Not when text between its conversions mixes cases and digits as only
    generated text does (`K*39wp5JB2HT7RQ%dG%f`, `TqWnBk8Ls3%7cd5e`): there `%` is a symbol."""
    if "%" not in value or _FORMAT.search(value) is None:
        return False
    return not any(_generated_run(run) for run in _FORMAT.split(value))


def _generated_run(run: str) -> bool:
    """Whether `run` has 10+ letters and digits, two or more of each case and a digit, in parts
    shorter than words are (`K39wp5JB2HT7RQ`; not `SessKeyV2Abc`, CamelCase words)."""
    parts = CASE_PARTS.findall(run)
    return (
        sum(map(str.isalnum, run)) >= 10
        and sum(map(str.isupper, run)) >= 2
        and sum(map(str.islower, run)) >= 2
        and any(map(str.isdigit, run))
        and sum(map(len, parts)) < 2 * len(parts)
    )


# a text's parts, split where case or class changes (`BCrypt`, `SHA`, `256`, `Password`, `Hasher`)
CASE_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def not_example(value: str) -> bool:
    """Reject template references, format strings and stock example words (`password123`,
    `changeme`, `${PW}`, `%.*s4-HMAC-SHA256`)."""
    if value.startswith(("$", "%", "{", "<")) or any(mark in value for mark in ("${", "{{", "%(")):
        return False
    if value.startswith(("ENC[", "Encrypted(")):
        return False  # a value encrypted for the repository (sops' `ENC[AES256_GCM,...]`, Codemagic's)
    return not (format_string(value) or stock_word(value))  # (`%s` is a format's)


def stock_word(value: str) -> bool:
    """Whether a password is only stock example words and digits (`pass123`, `foo:bar`, `changeme`),
    or those words alone in leetspeak (`p@ssword`, `s3cr3t`, `P@55w0rd!`; not `p@ss(w0rd)123`)."""
    lowered = value.lower()
    if _PLACEHOLDER_PASSWORD.fullmatch(re.sub(r"[^a-z0-9]", "", lowered)) is not None:
        return True
    return _PLACEHOLDER_WORDS.fullmatch(re.sub(r"[^a-z]", "", lowered.translate(_LEET))) is not None


# a user and password named alike, the one `user` and the other `pass` after the same stem
_PAIRED_NAMES = re.compile(
    r"(?P<stem>[a-z0-9]{2,24}?)[_-]?(?:user|usr|username|login):(?P=stem)[_-]?(?:pass|password|passwd|pwd|pw)"
)


def real_password(match: re.Match[str]) -> bool:
    """Reject template references, masks, stock example words and user-equals-password defaults."""
    value = match["secret"]
    if value.startswith("[REDACTED") or not varied(value):
        return False
    if value.startswith("$") or any(mark in value for mark in ("${", "$(", "{", "}", "%s", "%(")):
        return False  # a template or environment reference; '$' inside a password is kept
    user = match["user"]
    if value == user:  # postgres:postgres, guest:guest: well-known defaults
        return False
    if user and _PAIRED_NAMES.fullmatch(f"{user}:{value}".lower()):
        return False  # cacheuser:cachepass, app_user:app_password: an example's pair
    plain = urllib.parse.unquote(value)
    return not (stock_word(plain) or _PLACEHOLDER_WORD.search(plain.lower()))


# a placeholder's word in a URL's password, whole among its words (`changeme-before-launch`, `your_password`)
_PLACEHOLDER_WORD = re.compile(
    r"(?<![a-z])(?:changeme|change[_-]me|placeholder|your|replace[_-]?me|dummy)(?![a-z])"
)

# Parts of placeholder values: your-api-key-1, xxxx1234, abc***xyz, <changeme>, [REDACTED:...],
# FTP's `-anonymous@`; and of values that are something else: URLs, regexes and paths (`\`)
PLACEHOLDER_PARTS = (
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
# the symbols a chosen or generated password holds and names do not
PASSWORD_SYMBOLS = frozenset("!#$%&*+?@^~")
# Values that are something else than a credential: a path (`pwd = "/home/user1/app"`), an
# algorithm's name (`hash_key = "sha256"`, `signing_key = "HMAC-SHA256"`, `AES-256-GCM`), a name
# made of words that name credentials (`api_key = "x-api-key-1"`, `token: bearer_token_2`)
_ALGORITHM_PART = (
    r"(?:sha|md|hs|rs|es|ps|aes|des|rc|blake|shake|ripemd)?[0-9]*"
    r"|hmac|scram|rsa|ecdsa|eddsa|ed25519|ed448|x25519|x448|dsa|dh|ecdh|pbkdf2|bcrypt|scrypt|argon2(?:id|i|d)?"
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


# Values that name something rather than hold a secret: a relative path (`keys/server-2024.pem`,
# `src/app2`), a file name (`secrets.v1.yaml`, `refresh_tokens.sqlite3`), a code identifier in snake
# case (`tokenizer_v2`, `JWT_SECRET_KEY_2`) or dotted (`settings.SECRET_KEY`, `accounts.ApiToken`).
# Each part is a word, maybe with digits after it, or a number: a generated secret's runs mix case
# and digits within a part (`wJalrXUtnFEMI/K7MDENG/...`, `ya29.a0AfH6SMBx`), so none of these
# matches one. Kebab-case words stay candidates: `hunter2-very-secret` is a passphrase.
# (possessive runs, and alternatives that start differently, so a part matches one way only:
# linear on any value)
_CAP_WORD = (  # Token, HTTP2 (an acronym before a non-letter), HTTP in HTTPServer, O in OAuth, X25519
    r"(?:[A-Z][a-z]{2,}+[0-9]*+|[A-Z]{2,}+[0-9]*+(?![a-z])|[A-Z]+?(?=[A-Z][a-z])|[A-Z][0-9]++)"
)
_CAMEL = rf"(?:[a-z]{{2,}}+[0-9]*+|[a-z][0-9]++|{_CAP_WORD})(?:{_CAP_WORD})*+"  # tokenizer, apiToken2
_PART = rf"(?:{_CAMEL}|[0-9]++)"
_SNAKE = r"[a-z]++[0-9]*+(?:_(?:[a-z]++[0-9]*+|[0-9]++))++|[A-Z]++[0-9]*+(?:_(?:[A-Z]++[0-9]*+|[0-9]++))++"
_EXTENSION = (
    r"(?i:pem|key|crt|cer|der|csr|p12|pfx|pub|jks|keystore|asc|gpg|pgp|sig|json|ya?ml|toml|ini|cfg|conf"
    r"|env|txt|csv|tsv|db|sqlite3?|bin|dat|log|lock|html?|xml|js|ts|py|rb|go|sh|md|rst|j2|jinja2?|tpl"
    r"|tmpl|properties|plist|sql|enc|age|kdbx|gz|zip|tar|tgz|whl|jar|pkl|pt|onnx|safetensors|model|vocab)"
)
_ORDINARY = re.compile(
    rf"\.{{0,2}}{_PART}(?:[-_.]{_PART})*(?:/\.{{0,2}}{_PART}(?:[-_.]{_PART})*)+/?"  # a relative path
    rf"|{_PART}(?:[-_.]{_PART})*\.{_EXTENSION}"  # a file name
    rf"|{_SNAKE}"
    rf"|(?:{_CAMEL}|{_SNAKE})(?:\.(?:{_CAMEL}|{_SNAKE}))+"  # a dotted name
)


def not_a_credential(value: str) -> bool:
    """Tell a path, an algorithm's name or a name of credential words from a credential (see
    _NOT_A_CREDENTIAL)."""
    return _NOT_A_CREDENTIAL.fullmatch(value) is not None


def ordinary(value: str) -> bool:
    """Tell a path, a file name or a code identifier, which name things, from a credential (see _ORDINARY)."""
    return _ORDINARY.fullmatch(value) is not None


def credential_value(value: str) -> bool:
    """Accept a literal that looks chosen or generated: 8+ characters, letters with a digit or a
    symbol (`!#$%&*+?@^~`; not `-_.=`, so `your-api-key`, `my_secret_name` and `a=b` are not), not a
    template, mask or stock example (`${PW}`, `***`, `password123`, `changeme2024`), nor a path, file
    name or identifier (see ordinary)."""
    if not may_be_chosen(value):
        return False  # (the cheap tests first: most candidates are words)
    if not varied(value) or not not_example(value):
        return False
    lowered = value.lower()
    if any(part in lowered for part in PLACEHOLDER_PARTS) or _NOT_A_CREDENTIAL.fullmatch(value):
        return False
    return not ordinary(value)


_APP_PASSWORD = re.compile(r"[a-z]{4}(?P<sep>[ -])[a-z]{4}(?:(?P=sep)[a-z]{4}){2}")


def app_password(value: str) -> bool:
    """Whether `value` is shaped as Google's and Apple's app passwords, four groups of four random
    lower-case letters (`jnen zrao qenr dfag`, `abqx-kmvr-zlot-weud`), three of them no English word."""
    if _APP_PASSWORD.fullmatch(value) is None:
        return False
    from rag.words import english_words

    return sum(group not in english_words() for group in re.split("[ -]", value)) >= 3


_PASSPHRASE_WORD = re.compile(r"[0-9]++|[A-Za-z0-9!@#$%^&*+~_-]{3,24}+")


def passphrase(value: str) -> bool:
    """Whether a value with blanks reads as a passphrase rather than prose: 3 to 8 words of 3+
    characters or numbers, no sentence punctuation, all in lower case or a word of letters and
    digits (`batten down the hatches 1987`, `Wh1sk3y T4ng0 F0xtr0t`; not `Must be 8 characters.`,
    `is too short`), no placeholder or stock word (`your password here`, `not empty password`)."""
    words = value.split(" ")
    if not 3 <= len(words) <= 8 or not all(_PASSPHRASE_WORD.fullmatch(word) for word in words):
        return False
    lower = value == value.lower()
    leet = any(letters_and_digits(word) for word in words)
    lowered = value.lower()
    if any(part in lowered for part in PLACEHOLDER_PARTS) or any(stock_word(word) for word in words):
        return False  # `your password here`, `not empty password`: a placeholder, not a passphrase
    return lower or leet


_PHRASE_WORD = re.compile(r"[a-z]{3,12}|[A-Z][a-z]{2,11}")
# words that name what a value is for (a secret's name in a store, a role, a place, a stage, a
# placeholder), which a passphrase's words are not: `db-admin-password`, `prod-api-creds`
_NAMING_WORDS = frozenset(
    [
        "pass",
        "passwd",
        "password",
        "passwords",
        "passphrase",
        "pwd",
        "secret",
        "secrets",
        "key",
        "keys",
        "token",
        "tokens",
        "auth",
        "cred",
        "creds",
        "credential",
        "credentials",
        "login",
        "user",
        "users",
        "username",
        "admin",
        "root",
        "service",
        "svc",
        "account",
        "app",
        "application",
        "api",
        "client",
        "server",
        "db",
        "database",
        "sql",
        "postgres",
        "mysql",
        "redis",
        "mongo",
        "cache",
        "ldap",
        "smtp",
        "mail",
        "vault",
        "kv",
        "store",
        "manager",
        "ref",
        "name",
        "names",
        "value",
        "values",
        "env",
        "var",
        "vars",
        "field",
        "file",
        "path",
        "config",
        "settings",
        "default",
        "prod",
        "production",
        "stage",
        "staging",
        "dev",
        "development",
        "test",
        "testing",
        "local",
        "demo",
        "sample",
        "example",
        "your",
        "here",
        "fake",
        "mock",
        "stub",
        "nonce",
        "change",
        "replace",
        "placeholder",
        "dummy",
        "none",
        "null",
        "empty",
        "new",
        "old",
        "temp",
        "tmp",
        "master",
        "main",
        "primary",
        "backup",
        "read",
        "write",
        "only",
        "cluster",
        "node",
        "host",
        "system",
        "internal",
        "external",
        "public",
        "private",
        "shared",
        "common",
    ]
)


# what a password's value says when it holds none: `auto-generated`, `externally-managed`
_SENTINEL_WORDS = frozenset(
    {
        "generated",
        "managed",
        "injected",
        "provided",
        "required",
        "disabled",
        "enabled",
        "applicable",
        "unused",
        "rotated",
        "runtime",
        "redacted",
        "hidden",
        "masked",
        "removed",
        "unknown",
        "missing",
        "pending",
        "ignored",
        "supplied",
        "defined",
        "configured",
    }
)


def word_passphrase(value: str) -> bool:
    """Whether a value is a passphrase of plain words, as a password's name may hold: three to six
    words of letters joined by one of `-_.` (the last maybe followed by digits), two of them common
    English words and none a word that names what a value is for (see _NAMING_WORDS), or two such
    English words of 5+ letters that say no state (`marble-orchard`; not `auto-generated`):
    `velvet-ticket-harbour-lamp`, `copper_pylon_saffron83`; not `db-admin-password`,
    `grafana-admin-credentials`, `app.config.value`. Only a password's name makes such a value
    one: anywhere else it is a name."""
    sep = next((c for c in "-_." if c in value), None)
    if sep is None or not 11 <= len(value) <= 64:
        return False
    words = value.split(sep)
    if not 2 <= len(words) <= 6:
        return False
    last = words[-1].rstrip("0123456789")
    if len(words[-1]) - len(last) > 4:
        return False
    words[-1] = last
    if not all(_PHRASE_WORD.fullmatch(word) for word in words):
        return False
    lowered = [word.lower() for word in words]
    if any(word in _NAMING_WORDS for word in lowered) or len(set(lowered)) < len(lowered):
        return False
    from rag.words import english_words

    if len(lowered) == 2 and (any(len(word) < 5 or word in _SENTINEL_WORDS for word in lowered)):
        return False  # two words are a passphrase only when both are long and say no state (`not-set`)
    return sum(word in english_words() for word in lowered) >= 2


_PASSWORD_END = re.compile(r"(?i:pass(?:word|wd|phrase)?|pwd)\Z")


def password_name(name: str) -> bool:
    """Whether a credential's name is a password's (`DB_PASSWORD`, `dbPasswd`, `pwd`), not a key's
    or a token's."""
    return _PASSWORD_END.search(name) is not None


def named_credential(name: str, value: str) -> bool:
    """Whether a literal under a credential's `name` is a credential: chosen or generated (see
    credential_value), or plain words under a password's name (see word_passphrase)."""
    return credential_value(value) or password_name(name) and word_passphrase(value)


def may_be_chosen(value: str) -> bool:
    """The cheap tests of credential_value: 8+ characters, a letter, and a digit or a symbol."""
    if len(value) < 8 or not any(map(str.isalpha, value)):
        return False
    return any(map(str.isdigit, value)) or not PASSWORD_SYMBOLS.isdisjoint(value)


# Token names that are not credentials: .NET's publicKeyToken, and the pagination, idempotency,
# lock and verification tokens of cloud APIs (NextToken, ChangeToken, ClientToken, output_token)
NOT_AUTH_TOKEN = re.compile(
    r"(?:public[_.-]?(?:key)?|next|page|continuation|change|lock|client|request|idempotency|action|export|import"
    r"|output|input|update|copy|product|forward|backward|workunit|verification|webidentity|cancel|sync|resume"
    r"|marker|cursor|pagination|storefront[_.-]?(?:access)?)[_.-]?\Z"  # (Shopify's storefront token ships to browsers)
)
HASHED_NAME = re.compile(r"hash(?:ed)?[_.-]?\Z")  # hashed_password: a hash, not the password

REPEATED = re.compile(r"(.)\1{4}")  # lcccccccX2kccccccc: a test vector


def basic_credentials(value: str) -> bool:
    """Require base64 of `user:password`, as HTTP Basic auth and docker's and npm's `auth` carry."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError
        return False
    return decoded.partition(":")[2] != "" and decoded.isprintable()


def kind_of_name(name: str) -> str:
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


def secret_name(name: str) -> bool:
    """Tell whether a constant or variable name holds a credential (DB_PASSWORD, stripeSecret,
    AUTH_KEY, GITHUB_TOKEN; not NEXT_TOKEN, PASSWORD_RESET_URL's kin are left to the value check)."""
    lowered = name.lower()
    found = _SECRET_WORD.search(lowered)
    if found is None:
        return False
    if found.group().startswith("token") and NOT_AUTH_TOKEN.search(lowered[: found.start()]):
        return False
    return not HASHED_NAME.search(lowered[: found.start()]) and not lowered.endswith(
        ("_url", "_path", "_file", "_name", "_env", "_var", "_len", "_length", "_hint")
    )
