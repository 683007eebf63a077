"""The rules that find secrets in text, in the order they run: each a gate, a pattern and a check."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from rag.secrets.anywhere import (
    PUBLISHABLE,
    app_passwords,
    chosen_passwords,
    encoded_passwords,
    joined_literals,
    joins,
    key_bytes,
    listed_literals,
    memorable_passwords,
    plus_joined,
    random_passwords,
    random_tokens,
    spelt_literals,
)
from rag.secrets.assignments import (
    ASSIGNED,
    CONFIG_LINE,
    ENV_LINE,
    assigned_secret,
    auth_token_name,
    config_secret,
    env_secret,
    pass_word,
    secret_key_name,
)
from rag.secrets.credential_names import PASSWORD_WORDS, WORDS, credential_name
from rag.secrets.finders import (
    ENCODED_KEY,
    ENV_DEFAULTS,
    FLAG_COMMAND_WORDS,
    LOGIN_WORDS,
    OR_OPERATORS,
    PHP_DEFINE,
    Finder,
    Rescanning,
    WordFinder,
    WordGate,
    bare_userinfo,
    batch_passwords,
    composer_auth,
    connection_passwords,
    defaulted_values,
    encoded_secrets,
    flag_passwords,
    joined_names,
    key_blocks,
    login_pairs,
    named_literals,
    net_use_passwords,
    piped_passwords,
    putty_private_lines,
    redis_acl_passwords,
    secure_strings,
    sensitive_defaults,
    yaml_defaults,
)
from rag.secrets.nature import (
    CALL_WORDS,
    beside_values,
    call_arguments,
    flag_values,
    login_arguments,
    named_values,
    sql_passwords,
    sql_rows,
    stated_values,
    url_users,
)
from rag.secrets.tokens import OWN_BOUNDS, PAIRED, PREFIXED, THEN
from rag.secrets.values import (
    aws_secret_name,
    basic_credentials,
    credential_value,
    jwt_header,
    letters_and_digits,
    mixed,
    not_example,
    random_case,
    real_password,
    varied,
)


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule written as one regex: its kind, a cheap gate, the pattern, the secret's group, a check."""

    kind: str
    gate: Callable[[str], object] | WordGate | None  # the cheap prefilter: the regex runs only if this passes
    regex: re.Pattern[str]
    group: str | int = 0  # the part of the match that is the secret
    check: Callable[[re.Match[str]], bool] | None = None  # reject placeholders and look-alikes
    # Words (lower case) of which the lowered text must hold one, before the gate is tried: each
    # word's occurrences are found once per text (str.find) and shared by every rule and finder
    # that names it (scan.py)
    words: tuple[str, ...] = ()
    # For names in any case (`db_password`, `dbPassword`, `DB_PASSWORD`, `PassWord`): `regex` is
    # IGNORECASE, which scans 5 times slower than a literal search, so this same pattern without the
    # flag, led by `words[0]`, is matched in the lowered text at that word's occurrences, and
    # `regex` at each candidate
    scan: re.Pattern[str] | None = None
    # For a pattern of whole lines (MULTILINE, led by `^`): matched only at the starts of the lines
    # that hold one of `words`, not tried at every line of the text
    lines: bool = False


def _at(words: tuple[str, ...], literal: str, back: int = 0) -> WordGate:
    """Gate on `literal` starting `back` characters before an occurrence of a word, in the text as
    written (the literal holds the word there, so anywhere in the text is the same test)."""
    return WordGate(
        words,
        lambda text, lowered, at: at >= back and text.startswith(literal, at - back),
        lambda text, lowered: literal in text,
    )


def _matches_at(words: tuple[str, ...], pattern: str, lowered: bool = False) -> WordGate:
    """Gate on `pattern` matching at an occurrence of a word, in the text (or the lowered text);
    the pattern starts with one of the words, in some case, so a search of the text is the same test."""
    compiled = re.compile(pattern)
    match, search = compiled.match, compiled.search
    if lowered:
        return WordGate(
            words, lambda text, low, at: match(low, at) is not None, lambda text, low: search(low) is not None
        )
    return WordGate(
        words, lambda text, low, at: match(text, at) is not None, lambda text, low: search(text) is not None
    )


# Characters that may not sit right before a token, so `task-`/`disk-` and the like never start one.
_B = r"(?<![A-Za-z0-9_-])"
# ... and right after it, so a longer run of token characters is not cut short.
_E = r"(?![A-Za-z0-9_-])"


# The gates are cached, so rules gated on the same words share one gate, which scan tests once per text.
@functools.cache
def _contains(*words: str) -> Callable[[str], bool]:
    """Gate on plain substrings (str `in` is fast for one or two words)."""
    return lambda text: any(word in text for word in words)


def _named_credential(name: str) -> bool:
    """Whether `name` names a credential by one of its words (see credential_name)."""
    lowered = name.lower()
    return any(word in lowered and credential_name(name, word) for word in WORDS)


@functools.cache
def _search(pattern: str) -> Callable[[str], object]:
    """Gate on alternatives sharing a literal prefix, which one regex search finds faster than many `in`."""
    return re.compile(pattern).search


def _gate(pattern: str) -> Callable[[str], object]:
    """Gate on a literal with `in` (twice as fast as a regex search for it), on a pattern with a search."""
    return _contains(pattern) if _LITERAL.fullmatch(pattern) else _search(pattern)


_LITERAL = re.compile(r"[\w~-]+")
_HOST_LIST_PORT = re.compile(r"[0-9]{1,5},")  # a port, then the next host of a list


def _of_secret(check: Callable[[str], bool]) -> Callable[[re.Match[str]], bool]:
    """Apply a check to the match's `secret` group."""
    return lambda m: check(m["secret"])


def _anycase(kind: str, word: str, pattern: str, check: Callable[[re.Match[str]], bool]) -> Rule:
    """Build a rule matched in any case at the occurrences of `word` (lower case) in the lowered
    text; its secret is the group `secret`."""
    return Rule(kind, None, re.compile(pattern, re.IGNORECASE), "secret", check, (word,), re.compile(pattern))


RULES: tuple[Rule | Finder | Rescanning | WordFinder, ...] = (
    Finder(_contains("BEGIN "), lambda text: key_blocks(text)),
    Rule(
        "aws-access-key",
        _search("AKI[AD]|ASIA"),  # the gate of the key ids' rules, Tencent's AKID with AWS's
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        check=lambda m: "EXAMPLE" not in m[0],  # AWS's documentation examples: AKIAIOSFODNN7EXAMPLE
    ),
    Rule(
        "aws-secret-key",
        None,
        # case variants spelt out: a literal-led regex scans far faster than (?i)
        re.compile(
            r"(?P<name>(?:secret|Secret|SECRET)[_.-]?(?:(?:access|Access|ACCESS)[_.-]?)?(?:key|Key|KEY)?)"
            r"[\"']?\s*(?::=|=>|[:=])\s*[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        group="secret",
        check=lambda m: (
            aws_secret_name(m) and varied(m["secret"]) and mixed(m["secret"]) and "EXAMPLE" not in m["secret"]
        ),
        words=("secret",),
    ),
    Rule(
        "github-token",
        _search("gh[pousr]_|github_pat_"),
        re.compile(
            _B + r"(?:gh[pousr]_(?P<body>[A-Za-z0-9]{36,255})|github_pat_(?P<pat>[A-Za-z0-9_]{22,255}))" + _E
        ),
        check=lambda m: varied(m["body"] or m["pat"]),
    ),
    Rule(
        "gitlab-token",
        _contains("glpat-"),
        re.compile(_B + r"glpat-(?P<body>[A-Za-z0-9_-]{20,})" + _E),
        check=lambda m: varied(m["body"]),
    ),
    # Slack's bot, user and app tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-), and the rotating ones
    # (xoxe.xoxp-1-..., refresh tokens xoxe-1-...)
    Rule(
        "slack-token",
        _search("xox[abprse]-"),
        re.compile(
            _B
            + r"(?:xox[abprs]-[0-9]{6,}-(?P<body>[A-Za-z0-9-]{8,})"
            + r"|(?:xoxe\.xox[bp]|xoxe)-[0-9]-(?P<rotating>[A-Za-z0-9]{100,}))"
            + _E
        ),
        check=lambda m: varied(m["body"]) if m["body"] else mixed(m["rotating"]),
    ),
    Rule(
        "slack-webhook",
        _contains("hooks.slack.com"),
        re.compile(
            r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{20,})"
        ),
        group="secret",
        check=lambda m: varied(m["secret"].rstrip("/").rpartition("/")[2]),
    ),
    Rule(
        "stripe-key",
        _search("k_live_|k_test_"),
        re.compile(_B + r"(?:sk|rk)_(?:live|test)_(?P<body>[A-Za-z0-9]{16,})" + _E),
        check=lambda m: mixed(m["body"]),
    ),
    Rule(
        "anthropic-key",
        _contains("sk-"),  # the openai-key rule's gate: one test for both
        re.compile(_B + r"sk-ant-(?P<body>[A-Za-z0-9_-]{32,})" + _E),
        check=lambda m: mixed(m["body"]),
    ),
    Rule(
        "openai-key",
        _contains("sk-"),
        re.compile(_B + r"sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?(?P<body>[A-Za-z0-9_-]{32,})" + _E),
        check=lambda m: mixed(m["body"]),
    ),
    # more tokens known by their prefix (see tokens.PREFIXED)
    *(
        Rule(
            kind,
            _gate(gate),
            re.compile(pattern if kind in OWN_BOUNDS else _B + pattern + _E),
            check=check,
        )
        for kind, gate, pattern, check in PREFIXED
    ),
    Rule(
        "jwt",
        _contains("eyJ"),
        re.compile(_B + r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}" + _E),
        check=lambda m: jwt_header(m[0]),
    ),
    Rule(
        "url-password",
        _contains("://"),
        # scheme://user:password@host — the password may hold '@' (the last one ends it); the host
        # may be empty (`postgres://u:p@/db?host=/run/pg`, `snowflake://u:p@/DB?account=...`)
        re.compile(
            r"://(?P<user>[^\s:/?#@'\"<>\[\]()]*):(?P<secret>[^\s/?#'\"<>]+)@(?=[A-Za-z0-9\[]|/[A-Za-z])"
        ),
        group="secret",
        # (not the ports of a list of hosts: `https://db1:5432,db2:5433@x`, `foo.com:123,foo:bar@bar.com`)
        check=lambda m: _HOST_LIST_PORT.match(m["secret"]) is None and real_password(m),
    ),
    Rule(
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
            and real_password(m)
        ),
    ),
    # Oracle's user/password@connect-string, with no scheme: before a descriptor or an EZConnect
    # address (`scott/S3cret@(DESCRIPTION=...)`, `app/S3cret@//db:1521/svc`), or given to a tool
    # (`sqlplus app/S3cret@ORCL`)
    Rule(
        "url-password",
        _contains("@(", "@//"),
        re.compile(
            r"(?<![\w/.:@-])(?P<user>[A-Za-z][\w$#]{0,29})/(?P<secret>[^\s/@'\"()]{1,64})@(?=\([ \t]*(?i:description)|//[A-Za-z0-9])"
        ),
        group="secret",
        check=real_password,
    ),
    # ... and EZConnect's own form, a value of its own: `"app/S3cret@db.example.com:1521/SVC"`, `dsn=app/S3cret@db`
    # (a chosen password only, before a host's port or service or an alias in capitals: `acme/setup-tool2@v2`,
    # `img/Logo2024@2x.png`, `cdn/Theme3@assets.example.com` are no login)
    Rule(
        "url-password",
        _search(r"/[^\s/@'\"()]{8,64}@"),
        re.compile(
            r"""(?:(?<=["'\s=])|\A)(?P<user>[A-Za-z][\w$#]{0,29})/(?P<secret>[^\s/@'"()]{8,64})"""
            r"""@(?:[A-Za-z][\w-]*(?:\.[\w-]+)*(?::[0-9]{1,5}(?:/[\w.$-]+)?|/[\w.$-]+)|[A-Z][A-Z0-9_]{2,63})"""
            r"""(?=["'\s;,]|\Z)"""
        ),
        group="secret",
        check=lambda m: real_password(m) and credential_value(m["secret"]),
    ),
    # ... and in a JDBC URL of Oracle's drivers: `jdbc:oracle:thin:app/S3cret@db:1521/svc`
    Rule(
        "url-password",
        _contains("oracle:"),
        re.compile(
            r"oracle:(?:thin|oci8?|kprb):(?P<user>[A-Za-z][\w$#]{0,29})/(?P<secret>[^\s/@'\"()]{1,64})@"
        ),
        group="secret",
        check=real_password,
    ),
    # Go's MySQL driver's DSN, with no scheme: `user:password@tcp(host:3306)/db`, `@unix(/path)`
    Rule(
        "url-password",
        _contains("@tcp(", "@unix("),
        re.compile(
            r"(?<![\w/.:@-])(?P<user>[A-Za-z_][\w.-]{0,63}):(?P<secret>[^\s:/@'\"()]{1,128})@(?:tcp|unix)\("
        ),
        group="secret",
        check=real_password,
    ),
    Rule(
        "url-password",
        _contains("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl"),
        re.compile(
            r"\b(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl)(?:[ \t]+-[\w-]+)*[ \t]+[\"']?"
            r"(?P<user>[A-Za-z][\w$#]{0,29})/(?P<secret>[^\s/@'\"]{1,64})@"
        ),
        group="secret",
        check=real_password,
    ),
    # ... and to SQL*Plus's CONNECT command, in a script it runs (upper or lower case, not prose's
    # "Connect"): `CONNECT app/S3cret@ORCL`, `conn sys/S3cret as sysdba`, `connect app/S3cret; -- ..`;
    # with no `@`, a password of letters alone is a word (`connect client/server`, `Jenkins/GitHub`)
    Rule(
        "url-password",
        _search(r"(?m)^[ \t]*+(?:CONN|conn)"),
        re.compile(
            r"(?m)^[ \t]*+(?:CONN(?:ECT)?|conn(?:ect)?)[ \t]+[\"']?(?P<user>[A-Za-z][\w$#]{0,29})/"
            r"(?P<secret>[^\s/@'\";]{1,64})(?:(?P<at>@)"
            r"|(?=[ \t]*+;?[ \t]*+(?:--[^\r\n]*+|(?i:as[ \t]++sys\w++)[ \t]*+;?)?\r?$))"
        ),
        group="secret",
        check=lambda m: real_password(m) and (m["at"] is not None or not m["secret"].isalpha()),
    ),
    # `Authorization: Bearer <opaque token>` (JWTs have their own rule), one pattern per spelling
    *(
        Rule(
            "bearer-token",
            None,
            re.compile(word + r"\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)"),
            group="secret",
            check=lambda m: varied(m["secret"]) and letters_and_digits(m["secret"]),
            words=("bearer",),
        )
        for word in ("Bearer", "bearer", "BEARER")
    ),
    Finder(_contains("stdin", "passphrase-fd", "chpasswd", "<<", "sudo -S", "login"), piped_passwords),
    Finder(_contains("htpasswd", "mosquitto_passwd"), batch_passwords),
    # a Terraform variable's default where the block says `sensitive = true` or names a credential
    Finder(_contains("variable"), sensitive_defaults),
    # ... and a YAML mapping's `Default:` below a credential's name or `NoEcho: true`
    Finder(_contains("efault:"), yaml_defaults),
    Finder(_contains("@"), bare_userinfo),
    Finder(lambda text: " >" in text and ("user " in text or "USER " in text), redis_acl_passwords),
    Finder(_contains("net use", "NET USE", "Net use"), net_use_passwords),
    Finder(_contains("SecureString", "securestring", "SECURESTRING"), secure_strings),
    Finder(_contains("composer"), composer_auth),
    # a literal default of a credential's interpolation: ${DB_PASSWORD:-VALUE}, `password | default('VALUE')`
    Finder(_contains("${", "default", *OR_OPERATORS), lambda text: defaulted_values(text)),
    # redis's `requirepass SECRET`, in redis.conf or as a flag
    Rule(
        "command-line-password",
        _contains("requirepass"),
        re.compile(r"""requirepass(?:[ \t]*=[ \t]*|[ \t]+)["']?(?P<secret>[^\s"']{8,256}+)(?!\S)"""),
        group="secret",
        check=lambda m: credential_value(m["secret"]),
    ),
    Rule(
        "google-api-key",
        _contains("AIza"),
        re.compile(_B + r"AIza(?P<body>[A-Za-z0-9_-]{35})" + _E),
        check=lambda m: varied(m["body"]) and mixed(m["body"]),
    ),
    Rule(
        "huggingface-token",
        _contains("hf_"),
        re.compile(_B + r"hf_(?P<body>[A-Za-z0-9]{34,40})" + _E),
        check=lambda m: random_case(m["body"]),
    ),
    Rule(
        "npm-token",
        _contains("npm_"),
        re.compile(_B + r"npm_(?P<body>[A-Za-z0-9]{36})" + _E),
        check=lambda m: mixed(m["body"]),
    ),
    Rule(
        "sendgrid-key",
        _contains("SG."),
        re.compile(_B + r"SG\.(?P<body>[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})" + _E),
        check=lambda m: varied(m["body"]),
    ),
    Rule(
        "azure-storage-key",
        _contains("SharedAccessKey=", "AccountKey="),  # the azure-key rule's gate: one test for both
        re.compile(r"AccountKey=(?P<secret>[A-Za-z0-9+/]{86}==)"),
        group="secret",
        check=lambda m: varied(m["secret"]) and mixed(m["secret"]),
    ),
    # the key of an Azure connection string (Service Bus, Event Hubs, IoT Hub, Storage) of any length
    Rule(
        "azure-key",
        _contains("SharedAccessKey=", "AccountKey="),
        re.compile(r"(?:SharedAccessKey|AccountKey)=(?P<secret>[A-Za-z0-9+/]{20,}+={0,2})(?![A-Za-z0-9+/=])"),
        group="secret",
        check=lambda m: varied(m["secret"]) and mixed(m["secret"]),
    ),
    # a shared access signature's `sig=` (URL-encoded base64 of an HMAC), in a query that has `sv=`
    Rule(
        "azure-sas-signature",
        _contains("sig="),
        re.compile(r"[?&;]sig=(?P<secret>(?:[A-Za-z0-9+/]|%[0-9A-Fa-f]{2}){20,}+)"),
        group="secret",
        check=lambda m: (
            "sv=" in m.string[max(0, m.start() - 400) : m.start()] + m.string[m.end() : m.end() + 400]
            and varied(m["secret"])
        ),
    ),
    # webhook signing secrets: Stripe's whsec_ + alphanumerics, Svix's whsec_ + base64
    Rule(
        "webhook-secret",
        _contains("whsec_"),
        re.compile(_B + r"whsec_(?P<body>[A-Za-z0-9+/]{24,}+={0,2})(?![A-Za-z0-9+/=_-])"),
        check=lambda m: varied(m["body"]) and random_case(m["body"]),
    ),
    # a secret right after its key id, with no name in front (see tokens.PAIRED)
    *(
        Rule(
            kind,
            _gate(gate),
            re.compile(rf"(?<![A-Za-z0-9]){key_id}{THEN}(?P<secret>{secret})"),
            group="secret",
            check=_of_secret(check),
        )
        for kind, gate, key_id, secret, check in PAIRED
    ),
    # mysql -pSECRET, mysql --password=SECRET, in a shell line or an exec array; redis-cli -a SECRET,
    # sshpass -p SECRET, ldapsearch -w SECRET, curl -u USER:SECRET, docker login -p SECRET (see
    # flag_passwords); after the tokens known by their prefix, whose kind names a token both find
    Finder(
        _contains(*FLAG_COMMAND_WORDS),
        lambda text: flag_passwords(text),
    ),
    Finder(_contains("PuTTY-User-Key-File-"), putty_private_lines),
    Rescanning(_contains(ENCODED_KEY, "Secret"), encoded_secrets),
    # a secret split over names assigned once and joined again (`_WH_A + _WH_B`, `"${a}${b}"`)
    Rescanning(_contains("="), joined_names),
    # a ~/.pgpass line (host:port:database:user:password) in a script or doc that writes one
    Rule(
        "pgpass-password",
        _contains("pgpass"),
        re.compile(
            r"""(?m)^[ \t]*(?:(?:echo|printf)[ \t]+(?:-e[ \t]+)?)?["']?[A-Za-z0-9.*_\[\]-]{1,253}+:(?:[0-9]{1,5}+|\*)"""
            r""":[^\s:'"]{1,63}+:[^\s:'"]{1,63}+"""
            r""":(?P<secret>[^\s'"]{4,256}+)"""
        ),
        group="secret",
        check=lambda m: not_example(m["secret"]) and varied(m["secret"]) and m["secret"] != "*",
    ),
    Finder(_contains("define("), named_literals(PHP_DEFINE)),
    *(Finder(_at(("env",), word, back), named_literals(pattern)) for word, back, pattern in ENV_DEFAULTS),
    # Assignments to credential names (see ASSIGNED and assigned_secret), in any case; last, so
    # that a token rule above names the kind of a token in the same span
    _anycase(
        "password-assignment",
        "pass",
        ASSIGNED.format(name="pass(?:word|wd|phrase)?"),  # password, passwd, passphrase, DB_PASS
        lambda m: pass_word(m) and assigned_secret(m),
    ),
    _anycase("password-assignment", "pwd", ASSIGNED.format(name="pwd"), assigned_secret),
    _anycase(
        "password-assignment",
        "secret",
        # client_secret, SECRET_KEY, secretKey, secret_key_base, aws_secret_access_key (any length:
        # AWS's own are 40 characters, the aws-secret-key rule)
        ASSIGNED.format(name="secret(?:[_.-]?(?:access[_.-]?)?key(?:[_.-]?base)?)?"),
        assigned_secret,
    ),
    _anycase(
        "api-key-assignment",
        "key",
        ASSIGNED.format(name="key"),  # led by the literal; the check looks back for api or private
        lambda m: secret_key_name(m) and assigned_secret(m) and not PUBLISHABLE.fullmatch(m["secret"]),
    ),
    # auth_token, access_token, refresh_token, GITHUB_TOKEN, _authToken, token
    _anycase(
        "token-assignment",
        "token",
        ASSIGNED.format(name="token"),
        lambda m: auth_token_name(m) and assigned_secret(m) and not PUBLISHABLE.fullmatch(m["secret"]),
    ),
    # `Authorization: Basic <base64 of user:password>`; docker's config.json `"auth": "<base64>"`,
    # npm's `_auth=<base64>`: base64 that decodes to user:password (which prose and names never do)
    _anycase(
        "basic-auth",
        "basic",
        r"basic[ \t]+(?P<secret>[a-z0-9+/]{8,}+={0,2})(?![a-z0-9+/=])",
        lambda m: basic_credentials(m["secret"]),
    ),
    _anycase(
        "basic-auth",
        "auth",
        r"""auth["'`]?[ \t]*[:=][ \t]*["'`]?(?P<secret>[a-z0-9+/]{8,}+={0,2})(?![a-z0-9+/=])""",
        lambda m: basic_credentials(m["secret"]),
    ),
    # gated on the name's end right before its operator, and tried at the lines that hold the
    # word only: most texts that hold it hold no such line
    *(
        Rule(
            kind,
            _matches_at(words, gate + r"""["']?[=:]"""),
            re.compile(ENV_LINE.format(suffix=suffix), re.MULTILINE),
            "secret",
            env_secret,
            words,
            lines=True,
        )
        for kind, words, gate, suffix in (
            (
                "password-assignment",
                ("pass", "pwd", "secret"),
                r"(?:PASS(?:WORD|WD|PHRASE)?|PWD|SECRET[A-Z_]{0,24})",  # bounded: each try is short
                "(?:PASSWORD|PASSWD|PASSPHRASE|PASS|PWD|SECRET(?:_ACCESS)?(?:_KEY)?(?:_BASE)?)",
            ),
            ("api-key-assignment", ("key",), "KEY", "(?:API|PRIVATE|ENCRYPTION|SIGNING|MASTER)_?KEY"),
            ("token-assignment", ("token",), "TOKEN", "TOKEN"),
        )
    ),
    Rule(
        "password-assignment",
        _matches_at(("pass", "pwd"), r"(?:password|passwd|pwd)[ \t]*[=:]", lowered=True),
        CONFIG_LINE,
        "secret",
        config_secret,
        ("pass", "pwd"),
        lines=True,
    ),
    # R's rightward assignment: the literal first, then its name (`"S3cret!x" -> db_password`, `->>`)
    Rule(
        "password-assignment",
        _contains("->"),
        re.compile(
            r"""(?P<q>["'])(?P<secret>[^"'\s\\]{8,128}+)(?P=q)[ \t]*+->>?[ \t]*+(?P<name>[A-Za-z_.][\w.]{0,63}+)"""
        ),
        group="secret",
        check=lambda m: _named_credential(m["name"]) and credential_value(m["secret"]),
    ),
    # .netrc lines (in scripts and docs; the file itself is skipped): machine HOST [login USER]
    # password SECRET, on one line or several; at most 3 login/account pairs, so a candidate's scan
    # is bounded
    Rule(
        "netrc-password",
        _contains("machine"),
        re.compile(r"machine\s+\S+(?:\s+(?:login|account)\s+\S+){0,3}\s+password\s+(?P<secret>\S+)"),
        group="secret",
        check=lambda m: credential_value(m["secret"]),
    ),
    # secrets by what they are, whatever the form: a random value in a credential context (see
    # rag.secrets.nature); last, so that the rules above name the kind of what they also find
    *(WordFinder(word, named_values(word)) for word in WORDS),
    *(WordFinder(word, call_arguments(word)) for word in CALL_WORDS),
    *(WordFinder(word, flag_values(word)) for word in (*PASSWORD_WORDS, "auth")),
    *(WordFinder(word, stated_values(word)) for word in PASSWORD_WORDS),
    *(WordFinder(word, beside_values(word)) for word in PASSWORD_WORDS),
    Finder(_contains("login"), login_arguments),
    WordFinder("identified", sql_passwords),
    WordFinder("insert", sql_rows),
    WordFinder("copy", sql_rows),
    # `cloud.auth: "user:pass"`, `login=user:pass`, `stats auth user:pass`; `...;password=a&b;db=...`
    *(WordFinder(word, login_pairs) for word in LOGIN_WORDS),
    WordFinder("pass", connection_passwords),
    WordFinder("pwd", connection_passwords),
    WordFinder("://", url_users),
    # and by default: whatever looks generated, wherever it stands, unless public by its structure
    Finder(lambda text: True, random_tokens),
    Finder(lambda text: True, random_passwords),
    Finder(plus_joined, joined_literals),
    Finder(joins, listed_literals),
    Finder(_contains('"', "'", "`"), memorable_passwords),
    Finder(lambda text: True, chosen_passwords),
    Finder(_contains('"', "'", "`"), encoded_passwords),
    Finder(_contains("\\x", "\\u{"), spelt_literals),
    Finder(_contains("-"), app_passwords),
    Finder(_contains(",", "\\x"), key_bytes),
)
