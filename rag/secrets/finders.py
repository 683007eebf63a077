"""Find the secrets that one regex cannot: key blocks, command-line flags, named literals, base64."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rag.secrets.randomness import encodes_other_text, looks_random
from rag.secrets.values import (
    REPEATED,
    credential_value,
    kind_of_name,
    named_credential,
    not_example,
    passphrase,
    real_password,
    secret_name,
    stock_word,
    varied,
    word_passphrase,
)


@dataclass(frozen=True, slots=True)
class WordGate:
    """A gate tested at the occurrences of lowered words (found once per text and shared by every
    rule and finder that names them, see scan.py): it passes when `test(text, lowered, at)` holds
    at one of them. Several of these cost no scan of the text of their own. `anywhere(text,
    lowered)` gives the same answer by one search of the text: cheaper where the words are
    frequent (a megabyte of `key,`: 250,000 tests in Python)."""

    words: tuple[str, ...]
    test: Callable[[str, str, int], bool]
    anywhere: Callable[[str, str], bool]


@dataclass(frozen=True, slots=True)
class Finder:
    """A rule written as code rather than one regex: `find` yields the kind, start and end of each secret."""

    gate: Callable[[str], object] | WordGate
    find: Callable[[str], Iterator[tuple[str, int, int]]]


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found in a text: its kind and the character span that is redacted."""

    kind: str
    start: int
    end: int


# the whole scan of a text (rag.secrets.scan.find_secrets), handed to a finder that scans decoded text
# with every rule: passed in, so that the rules' modules never import the scan that runs them
Scanner = Callable[[str], list[Finding]]


@dataclass(frozen=True, slots=True)
class Rescanning:
    """A finder that scans text it decodes with every rule: `find` is given the scanner too."""

    gate: Callable[[str], object] | WordGate
    find: Callable[[str, Scanner], Iterator[tuple[str, int, int]]]


# What the word finders may spend on a text, per million characters (and on any shorter text).
# In the most demanding file of 278 MB of real code (the eight corpora, the standard library and
# its site-packages) they read 1,459 candidates and judged values worth 1,970; a megabyte that
# held a credential's word every 10 characters would have 100,000 candidates, each read in Python.
CANDIDATES_PER_MB = 4_096
JUDGED_PER_MB = 8_192


@dataclass(slots=True)
class Budget:
    """What the word finders may still spend on one text, shared by all of them. Past it they
    read on more coarsely, erring towards redaction.

    `candidates`: each name, call or URL matched at a word's occurrence takes one; past them a
    finder reads the rest of the text by one search for a name, an operator and a value (see
    nature._coarse) and judges each value found, whatever its name says (so a look-alike's value
    may be taken); client calls' arguments are no longer read.
    `judged`: judging a value takes 8 and one per 8 of its characters (about 12 microseconds
    each); past them a value counts when it may be random by the tests that run at C speed
    (randomness.roughly_random), or when a password's quoted literal may be chosen
    (values.may_be_chosen)."""

    candidates: int
    judged: int
    coarse: bool = False  # whether the names of every word have been read past the budget

    @classmethod
    def for_text(cls, text: str) -> Budget:
        """The budget of a text: so much per million characters, and at least that much."""
        millions = max(1, len(text) // 1_000_000)
        return cls(CANDIDATES_PER_MB * millions, JUDGED_PER_MB * millions)

    def take(self) -> bool:
        """Take a candidate: False when none is left."""
        self.candidates -= 1
        return self.candidates >= 0

    def judge(self, value: str) -> bool:
        """Take the judging of `value`: False when it is no longer affordable."""
        self.judged -= 8 + len(value) // 8
        return self.judged >= 0


@dataclass(frozen=True, slots=True)
class WordFinder:
    """A finder of names in any case, run when the lowered text holds `word`: `find` is given the
    text, the lowered text (of the same length), the word's occurrences in it and the text's budget."""

    word: str
    find: Callable[[str, str, Sequence[int], Budget], Iterator[tuple[str, int, int]]]


def _key_body(block: str) -> bool:
    """Require a key block to carry base64 material, not just the BEGIN/END labels."""
    return re.search(r"[A-Za-z0-9+/]{40}", block) is not None


# A private key block, known by its framing whatever the vendor: a BEGIN line with any number of
# dashes (PEM's five, RFC 4716's four, none) naming a private or secret key (RSA, EC, OPENSSH,
# ENCRYPTED, PGP ... BLOCK, SSH2 ENCRYPTED), a body of base64 (maybe behind comment or quote
# prefixes, after armor headers such as `Comment:` or `Proc-Type:`), the matching END line within
# 8,000 characters (a 4096-bit key is 3,300); or, without an END, the BEGIN line and the base64
# lines right after it.
_KEY_BEGIN = re.compile(
    r"(?<![A-Za-z0-9])-*[ \t]*BEGIN ((?:[A-Z0-9]+ )*)(PRIVATE|SECRET) KEY((?: BLOCK)?)[ \t]*-*"
)
_KEY_END_DASHES = re.compile(r"[ \t]*-*")
_NOT_KEY_BODY = re.compile(r"[^A-Za-z0-9+/=\s\\'\",:.;+#>*!|@()-]")  # a character no block body holds
_KEY_LINES = re.compile(r"(?:\r?\n[ \t]*(?:(?:[#>*;!|]|//)[ \t]*)?[A-Za-z0-9+/=]{40,}+[ \t]*)+")
_KEY_MAX_BODY = 8000


def _next(text: str, needle: str, pos: int) -> int:
    """Where `needle` next occurs at or after `pos` (-1 if nowhere): str.find, named so tests can count it."""
    return text.find(needle, pos)


def key_blocks(text: str) -> Iterator[tuple[str, int, int]]:
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
        label = f"END {begin[1]}{begin[2]} KEY{begin[3]}"
        end = ends.get(label, -2)
        if end == -2 or -1 < end < body:
            end = ends[label] = _next(text, label, body)
        if end != -1 and end <= bad and end - body <= _KEY_MAX_BODY:
            dashes = _KEY_END_DASHES.match(text, end + len(label))
            stop = dashes.end() if dashes is not None else end + len(label)
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
    r"(?P<mysql>mysql(?:dump|admin)?|mariadb(?:-dump|-admin)?|7za?|rar)\b|(?P<other>redis-cli|sshpass)\b"
    r"|(?P<mongo>mongo(?:sh|dump|restore|export|import|stat|top|files)?)\b|(?P<zip>zip|unzip)\b"
    r"|(?P<ldap>ldap(?:search|add|modify|delete|passwd|compare|modrdn|whoami))\b"
    # a registry's login (`twine upload -u U -p X`, `docker login -u U -p X`, `helm registry login`)
    r"|(?P<login>twine|(?:docker|podman|buildah|skopeo|helm[ \t]++registry)[ \t]++login)\b"
    r"|(?P<curl>curl)\b"  # curl -u user:password
    r"|(?P<openssl>openssl)\b"  # openssl enc -pass pass:password
)
FLAG_COMMAND_WORDS = (
    "mysql",
    "mariadb",
    "redis-cli",
    "sshpass",
    "ldap",
    "twine",
    "docker",
    "podman",
    "buildah",
    "skopeo",
    "helm",
    "curl",
    "openssl",
    "7z",
    "rar",
    "mongo",
    "zip",
)  # found by str.find: 10 times faster than the pattern
_FLAG_WINDOW = 300
_MYSQL_FLAG = re.compile(
    r"""[\s"',](?:-p|--password=)"""
)  # mysql's -p takes its value attached (7-Zip's, rar's)
_MONGO_FLAG = re.compile(r"""[\s"',](?:-p|--password)(?:[ \t]++|=)""")  # mongosh -u U -p X
_ZIP_FLAG = re.compile(r"""[\s"',](?:-P|--password)[ \t]++""")  # zip -P X (unzip's -p pipes, takes none)
_OTHER_FLAG = re.compile(
    r"""[\s"',](?:-a|-p|--pass)[ \t]+|[\s"',](?:-a|-p)["'],[ \t]*"""
)  # redis-cli -a X, sshpass -p X
_LDAP_FLAG = re.compile(r"""[\s"',]-w[ \t]+""")  # the OpenLDAP tools' bind password: -w X (-W prompts)
_LOGIN_FLAG = re.compile(r"""[\s"',](?:-p|--password)(?:[ \t]++|=)""")
# a literal source (`-pass pass:X`), or `enc`'s key password (`-k X`)
_OPENSSL_FLAG = re.compile(r"""[\s"',]-(?:(?:pass|passin|passout)[ \t]++pass:|k[ \t]++)""")
_CURL_FLAG = re.compile(r"""[\s"',](?:-u|--user|-U|--proxy-user)(?:[ \t]++|=)""")  # user:password
_FLAG_VALUE = re.compile(  # quoted: anything but the quote (no $ in double quotes: the shell expands it)
    r"""'(?P<sq>[^'\n]{4,256}+)'|"(?P<dq>[^"$\n]{4,256}+)"|(?P<bare>[^\s'"$,\])]{4,256}+)(?![^\s'"$,\])])"""
)


# a password a command reads from its standard input, echoed into the pipe before it: `echo 'x' |
# docker login --password-stdin`, `printf '%s' 'x' | gpg --passphrase-fd 0`, `echo 'x' | passwd --stdin`;
# and `echo 'user:x' | chpasswd`
_PIPED = re.compile(
    r"""(?<![\w-])(?:echo|printf)[ \t]++(?:-[neE]{1,3}+[ \t]++)?(?:(?P<fq>["'])%s(?:\\n)?(?P=fq)[ \t]++)?"""
    r"""(?:'(?P<sq>[^'\n]{4,256}+)'|"(?P<dq>[^"$\n]{4,256}+)"|(?P<bare>[^\s'"|;&$`]{4,256}+))"""
    r"""[ \t]*+\|(?P<rest>[^\n|]{0,240}+)"""
)
_READS_STDIN = re.compile(
    r"--password-stdin|--pass(?:word|wd|phrase)?-stdin|--passphrase-fd[ =]0\b|-passin[ \t]+stdin|"
    r"\bpasswd\b[^\n]*--stdin|\b(?P<pair>chpasswd)\b|\bsudo[ \t]++-S\b"  # (sudo -S: its password from stdin)
    r"|\bp4(?:\.exe)?(?:[ \t]++-[a-zA-Z][ \t]++[^\s|]++)*+[ \t]++login\b"  # (Perforce's login reads it too)
)


# ... or written on the first line of a here-document given to one: `p4 login -a <<'EOF'`, `kinit
# user <<EOF`, `sudo -S cmd <<EOF`
_HEREDOC_COMMANDS = ("login", "kinit", "sudo", "passwd")
_HEREDOC = re.compile(
    r"""\b(?P<cmd>p4[ \t]++login|kinit|sudo[ \t]++-S|passwd|docker[ \t]++login)\b"""
    r"""(?P<rest>[^\n<]{0,200}+)<<-?[ \t]*+(?P<q>['"]?)(?P<tag>[A-Za-z_]\w{0,15}+)(?P=q)[^\n]*+\n"""
    r"""[ \t]*+(?P<secret>[^\s'"]{4,256}+)[ \t]*+\r?\n"""
)


def _piped(text: str) -> Iterator[re.Match[str]]:
    """Each `echo` or `printf` into a pipe (see _PIPED), matched where str.find finds its word (the
    pattern, led by a lookbehind, was tried at every character), no two overlapping."""
    starts = sorted(at for word in ("echo", "printf") for at in _occurrences(text, word))
    end = 0
    for at in starts:
        m = _PIPED.match(text, at) if at >= end else None
        if m is not None:
            end = m.end()
            yield m


def _occurrences(text: str, word: str) -> Iterator[int]:
    """Where `word` stands in `text`, each start."""
    at = text.find(word)
    while at != -1:
        yield at
        at = text.find(word, at + 1)


def piped_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each password echoed into a command that reads one from its standard input (see
    _PIPED), or written on the first line of a here-document given to a login (see _HEREDOC)."""
    if "<<" in text and any(cmd in text for cmd in _HEREDOC_COMMANDS):
        for m in _HEREDOC.finditer(text):
            value = m["secret"]
            if m["cmd"].startswith("docker") and "--password-stdin" not in m["rest"]:
                continue
            if value != m["tag"] and not_example(value) and (credential_value(value) or len(value) >= 12):
                yield "command-line-password", m.start("secret"), m.end("secret")
    for m in _piped(text):
        reads = _READS_STDIN.search(m["rest"])
        if reads is None:
            continue
        group = next(g for g in ("sq", "dq", "bare") if m[g] is not None)
        start, value = m.start(group), m[group]
        if reads["pair"] is not None:  # user:password
            user, colon, value = value.partition(":")
            if not colon:
                continue
            start += len(user) + 1
        if not_example(value) and (credential_value(value) or passphrase(value)):
            yield "command-line-password", start, start + len(value)


# a password file's tool in batch mode takes the password as its last argument: `htpasswd -b FILE USER
# PASSWORD`, `htpasswd -nb USER PASSWORD` (no file), `mosquitto_passwd -b FILE USER PASSWORD`
_BATCH_PASSWD = re.compile(
    r"""\b(?:htpasswd|mosquitto_passwd)(?P<flags>(?:[ \t]++-[A-Za-z]{1,6}+)*?[ \t]++-[A-Zac-z]{0,5}+b[A-Za-z]{0,5}+(?:[ \t]++-[A-Za-z]{1,6}+)*+)"""
    r"""(?P<args>(?:[ \t]++(?:"[^"\n]{1,256}+"|'[^'\n]{1,256}+'|[^\s"'|;&]{1,256}+)){2,3}+)"""
)
_BATCH_ARGUMENT = re.compile(
    r""""(?P<dq>[^"\n]{1,256}+)"|'(?P<sq>[^'\n]{1,256}+)'|(?P<bare>[^\s"'|;&]{1,256}+)"""
)


def batch_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the password each password file's tool is given in batch mode (see _BATCH_PASSWD)."""
    for m in _BATCH_PASSWD.finditer(text):
        args = list(_BATCH_ARGUMENT.finditer(text, m.start("args"), m.end("args")))
        wanted = 2 if "n" not in m["flags"] else 1  # (`-n`: no file, the user and the password)
        if len(args) != wanted + 1:
            continue
        arg = args[wanted]
        group = arg.lastgroup or "bare"
        value = arg[group]
        if value[0] in "$%<{" or not not_example(value):
            continue
        if credential_value(value) or passphrase(value) or len(value) >= 8 and varied(value):
            yield "command-line-password", arg.start(group), arg.end(group)


# Windows' `net use` gives a share's password as a bare word: `net use Z: \\host\share P@ss /user:dom\u`
_NET_USE = re.compile(
    r"(?i)\bnet[ \t]++use[ \t]++(?:(?:[a-z]:|%\w++%)[ \t]++)?(?:\\\\\S++|%\w++%)[ \t]++"
    r"(?:(?P<secret>[^\s/\"*][^\s\"]{3,127}+)(?=[ \t]++/user:)|/user:\S++[ \t]++(?P<q>\"?)(?P<after>[^\s/\"*][^\s\"]{3,127}+)(?P=q))"
)  # (the password before `/user:` or after it)


def net_use_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the password of each `net use` command line that gives one (see _NET_USE)."""
    for m in _NET_USE.finditer(text):
        group = "secret" if m["secret"] is not None else "after"
        value = m[group]
        if not_example(value) and "%" not in value and credential_value(value):
            yield "command-line-password", m.start(group), m.end(group)


# Composer's credentials given on its command line: `composer config [-g] [--auth] http-basic.<host>
# <user> <password>`, `github-oauth.<host> <token>` (gitlab-oauth, gitlab-token, bitbucket-oauth, bearer)
_COMPOSER_AUTH = re.compile(
    r"(?i)\bcomposer[ \t]++config\b[^\n]{0,80}?[ \t](?:http-basic\.\S++[ \t]++\S++"
    r"|(?:github-oauth|gitlab-oauth|gitlab-token|bitbucket-oauth|bearer)\.\S++)[ \t]++"
    r"""(?P<q>["']?)(?P<secret>[^\s"'\\]{8,256}+)(?P=q)(?![^\s\\])"""
)


def composer_auth(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the password or token of each `composer config` line that sets one (see _COMPOSER_AUTH)."""
    for m in _COMPOSER_AUTH.finditer(text):
        value = m["secret"]
        if not_example(value) and not value.startswith(("$", "%")) and "{{" not in value:
            yield "command-line-password", m.start("secret"), m.end("secret")


# PowerShell's secure string made from a literal: `ConvertTo-SecureString 'S3cret' -AsPlainText -Force`
_SECURE_STRING = re.compile(
    r"""(?i)\bConvertTo-SecureString[ \t]++(?:-String[ \t]++)?(?P<q>["'])(?P<secret>[^"'\n]{4,256}+)(?P=q)"""
    r"""(?=[^\n|;]{0,64}?-AsPlainText)"""
)


def secure_strings(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the literal each `ConvertTo-SecureString ... -AsPlainText` is made from (see _SECURE_STRING)."""
    for m in _SECURE_STRING.finditer(text):
        value = m["secret"]
        if not_example(value) and (m["q"] == "'" or "$" not in value) and credential_value(value):
            yield "command-line-password", m.start("secret"), m.end("secret")  # (`"$x"` interpolates)


# Redis' ACL rules: a user's password after `>` (`user app on >S3cret ~cache:* +get`, `ACL SETUSER app on >x`)
_REDIS_ACL = re.compile(
    r"(?im)^[ \t]*+(?:acl[ \t]++setuser|user)[ \t]++[^\s>]++(?:[ \t]++(?!>)\S++){0,16}?[ \t]++>(?P<secret>\S{4,256}+)"
)


def redis_acl_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the password of each Redis ACL rule that sets one (see _REDIS_ACL)."""
    for m in _REDIS_ACL.finditer(text):
        value = m["secret"]
        if not_example(value) and (credential_value(value) or passphrase(value) or len(value) >= 12):
            yield "password-assignment", m.start("secret"), m.end("secret")


# `user:password@host` with no scheme before it: a proxy's (`proxy = bot:S3cret@proxy:3128`), a DSN's;
# the host a dotted name or a name and its port
_USERINFO = re.compile(
    r"""(?<![\w/.:@%+$-])(?P<user>[A-Za-z_][\w.+-]{0,63}+):(?P<secret>[^\s:/@'"`()\[\]{}<>,;=|\\]{3,128}+)\Z"""
)
_HOST = re.compile(
    r"[A-Za-z0-9-]{1,63}+(?P<dots>(?:\.[A-Za-z0-9-]{1,63}+)*+)(?P<port>:[0-9]{2,5}+(?![\w.]))?"
)
# schemes written with no `//`: `mailto:x@host`, `sip:x@host` name an address, no password
_VERSION_HOST = re.compile(r"[0-9]+(?:\.[0-9]+){1,2}")  # `npm:pkg@4.17.21`: a version, no IPv4 address
_NO_SLASH_SCHEMES = frozenset(
    {"mailto", "sip", "sips", "tel", "xmpp", "im", "pres", "acct", "news", "cid", "mid"}
)
_MAX_ATS = 4096  # `@`s looked at in one text
_TOKEN_STOPS = frozenset(" \t\r\n\"'`()[]{}<>,;=|")


def bare_userinfo(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the password of each `user:password@host` written with no scheme (see _USERINFO)."""
    at, seen = text.find("@"), 0
    while at != -1 and seen < _MAX_ATS:
        seen += 1
        # the token before the `@`, found back to a blank or a quote (a regex searched back from
        # each of 200 characters took a millisecond an `@`)
        begin = at
        low = max(0, at - 200)
        while begin > low and text[begin - 1] not in _TOKEN_STOPS:
            begin -= 1
        colon = text.find(":", begin, at)
        m = _USERINFO.search(text, max(begin, colon - 64), at) if colon != -1 else None
        host = _HOST.match(text, at + 1) if m is not None else None
        if (
            m is not None
            and host is not None
            and (host["port"] or host["dots"] and not _VERSION_HOST.fullmatch(host[0]))
            and m["user"].lower() not in _NO_SLASH_SCHEMES
            and (credential_value(m["secret"]) or passphrase(m["secret"]))
            and real_password(m)
        ):
            yield "url-password", m.start("secret"), m.end("secret")
        at = text.find("@", at + 1)


# a literal default of an interpolation whose name ends in a credential's word: the shell's and
# Compose's ${DB_PASSWORD:-VALUE} (and -, :=, =), Spring's ${db.password:VALUE} and
# ${app.jwt-secret:VALUE}; Jinja's and Helm's `smtp_password | default('VALUE')`, Helm's
# `default "VALUE" .Values.db.password` (each regex starts at a literal character, `$`, `|` or
# `d`, so that a text is scanned at C speed)
_DEFAULTED = re.compile(
    # a resolver's variable and its default: OmegaConf's ${oc.env:NAME,default}
    r"\$\{[a-z][a-z_.]{0,20}:(?P<resolved>[A-Za-z_][A-Za-z0-9_.]{0,80}+),[ \t]*+(?P<resolvedvalue>[^}\s\"'`,]{8,256}+)\}"
    r"|\$\{(?P<spring>[A-Za-z_][A-Za-z0-9_.-]{0,80}?):(?![-=?+])(?P<springvalue>[^}\s\"'`]{8,256}+)\}"
    r"|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_.]{0,80}+)(?::-|:=|-|=|:(?![-=?+]))[\"']?(?P<value>[^}\s\"'`]{8,256}+)[\"']?\}"
)
_PIPED_DEFAULT = re.compile(
    r"""\|[ \t]*+default[ \t]*+\(?[ \t]*+(?P<q>["'`])(?P<value>[^"'`\n]{8,256}+)(?P=q)"""
)
_PIPED_NAME = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.]{0,80}+)(?:[\"'`][ \t]*+\))?[ \t]*+\Z"
)  # (`lookup('env', 'X')`)
_DEFAULT_FIRST = re.compile(
    r"""default[ \t]++(?P<q>["'`])(?P<value>[^"'`\n]{8,256}+)(?P=q)[ \t]++\.?(?P<name>[A-Za-z_][A-Za-z0-9_.]{0,80}+)"""
)
# a literal after a logical or: `secrets.SONAR_TOKEN || 'VALUE'`, `process.env.API_KEY ?? "VALUE"`,
# `System.get_env("DB_PASSWORD") || "VALUE"`, Kotlin's `?:`, Python's `or` (each operator's pattern
# led by its literal, so a text is scanned at C speed; the name looked for right before it)
OR_OPERATORS = ("||", "??", "?:", " or ")
_OR_VALUE = r"""[ \t]++(?P<q>["'`])(?P<value>[^"'`\n]{8,256}+)(?P=q)"""
_OR_DEFAULTS = tuple(re.compile(re.escape(op.rstrip()) + _OR_VALUE) for op in OR_OPERATORS)
_OR_NAME = re.compile(r"""(?P<name>[A-Za-z_][A-Za-z0-9_.]{0,80}+)(?:["'`]?[ \t]*+[)\]])?[ \t]*+\Z""")
_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_REFERENCE_DEFAULT = re.compile(r"#\{|[a-z]+:|/")  # SpEL, `classpath:`, `arn:`, a path or an image


def defaulted_values(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the literal default of each interpolation or logical or whose name ends in a
    credential's word (see _DEFAULTED, _OR_DEFAULTS), when it looks chosen or generated: what runs
    when the variable is unset."""
    found: list[tuple[str, re.Match[str], str]] = []
    if "${" in text:
        for m in _DEFAULTED.finditer(text):
            if m["resolved"] is not None:
                found.append((m["resolved"], m, "resolvedvalue"))
                continue
            found.append(
                (m["name"], m, "value") if m["name"] is not None else (m["spring"], m, "springvalue")
            )
    if "default" in text:
        for m in _PIPED_DEFAULT.finditer(text):
            piped = _PIPED_NAME.search(text, max(0, m.start() - 96), m.start())
            if piped is not None:
                found.append((piped["name"], m, "value"))
        found.extend((m["name"], m, "value") for m in _DEFAULT_FIRST.finditer(text))
    for pattern in _OR_DEFAULTS:  # (led by its operator's literal: a search costs what a test would)
        for m in pattern.finditer(text):
            named = _OR_NAME.search(text, max(0, m.start() - 96), m.start())
            if named is not None:
                found.append((named["name"], m, "value"))
    for name, m, group in found:
        value = m[group]
        if (
            _ends_in_credential(name)
            and not _REFERENCE_DEFAULT.search(value)
            and named_credential(name, value)
        ):
            yield kind_of_name(name), m.start(group), m.end(group)


def _ends_in_credential(name: str) -> bool:
    """Whether a name's last word is a credential's (`DB_PASSWORD`, `app.jwt-secret`; not
    `PASSWORD_ENCRYPTION`, `TOKEN_HEADER`, nor Helm's `existingSecret`, the name of one)."""
    parts = _NAME_PARTS.findall(name.rsplit(".", 1)[-1])
    if not parts or parts[0].lower() == "existing":
        return False
    if parts[-1].lower() == "key" and len(parts) >= 2:
        return secret_name("_".join(parts[-2:]))  # `TRACKER_API_KEY`, not `CACHE_KEY`
    return secret_name(parts[-1])


# a Terraform variable's block: its head, and (in its body, up to the brace that starts a line)
# its default, quoted or a heredoc's lines, and whether it says `sensitive = true`
_VARIABLE = re.compile(r"""(?m)^[ \t]*variable[ \t]++"(?P<name>[\w-]{1,128}+)"[ \t]*+\{""")
_TF_DEFAULT = re.compile(
    r"""(?m)^[ \t]*default[ \t]*+=[ \t]*+(?:"(?P<quoted>[^"\n]{1,1024}+)["]"""
    r"""|<<-?(?P<tag>[A-Z]{1,20}+)[ \t]*\r?\n(?P<heredoc>(?:.*\r?\n){1,40}?)[ \t]*(?P=tag)[ \t]*$)"""
)
_SENSITIVE = re.compile(r"(?m)^[ \t]*sensitive[ \t]*+=[ \t]*+true\b")
_HEX_KEY = re.compile(r"[0-9a-fA-F]{16,}+")
_MAX_BLOCK = 4000  # characters of a variable's block looked at


def sensitive_defaults(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the default of each Terraform variable that is a secret by its role: the block says
    `sensitive = true`, or its name is a credential's (`variable "db_password"`), when the value is
    random, hex (a key, whatever its length), plain words or, under a credential's name, a chosen
    password; not when it is empty, a reference or an example."""
    close = -1  # the next brace that starts a line, found once for every head before it: linear
    for head in _VARIABLE.finditer(text):
        if close < head.end():
            close = text.find("\n}", head.end())
            if close == -1:
                return
        if close - head.end() > _MAX_BLOCK:
            continue
        body = text[head.end() : close + 1]
        credential = secret_name(head["name"])
        if not credential and _SENSITIVE.search(body) is None:
            continue
        default = _TF_DEFAULT.search(body)
        if default is None:
            continue
        group = "quoted" if default["quoted"] is not None else "heredoc"
        raw = default[group]
        value = raw.strip()
        if len(value) < 8 or "${" in value or not not_example(value):
            continue
        if not (word_passphrase(value) or looks_random(value) or _HEX_KEY.fullmatch(value)) and not (
            credential and credential_value(value)
        ):
            continue  # (`sensitive = true` over a word with a digit: `eu-west-1`)
        start = head.end() + default.start(group) + (len(raw) - len(raw.lstrip()))
        yield kind_of_name(head["name"]), start, start + len(value)


# a YAML mapping named by a credential, or saying `NoEcho: true`, and its `Default:` (a
# CloudFormation or SAM template's parameter, an Ansible role's argument spec): the credential's value
_YAML_DEFAULT = re.compile(
    r"""(?m)^(?P<indent>[ \t]++)(?i:default):[ \t]++(?:(?P<q>["'])(?P<quoted>[^"'\n]{1,256}+)(?P=q)"""
    r"""|(?P<bare>[^\s"'#]{1,256}+))[ \t]*+(?:#[^\n]*+)?\r?$"""
)
_YAML_PARENT = re.compile(r"""[ \t]*+(?P<name>[A-Za-z_][\w.-]{0,127}+):[ \t]*+\r?\Z""")
_NO_ECHO = re.compile(r"(?i)[ \t]++noecho:[ \t]++(?:true|'true'|\"true\"|yes)\b")
_SIBLINGS = 30  # lines above and below a default looked at for its parent and siblings


def yaml_defaults(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each YAML `Default:` whose mapping is a credential by its role (see _YAML_DEFAULT),
    judged as Terraform's defaults are (see sensitive_defaults): its parent's name is a credential's,
    or a sibling says `NoEcho: true`."""
    for default in _YAML_DEFAULT.finditer(text):
        indent = default["indent"]
        line_start = default.start()
        parent, no_echo = None, False
        for _ in range(_SIBLINGS):  # up: the siblings, then the parent (a line indented less)
            if line_start == 0:
                break
            prev = text.rfind("\n", 0, line_start - 1) + 1
            line = text[prev : line_start - 1]
            line_start = prev
            if not line.strip():
                continue
            if line.startswith(indent) and line[len(indent) : len(indent) + 1] not in (" ", "\t"):
                no_echo = no_echo or _NO_ECHO.match(line) is not None
                continue
            if not line.startswith(indent):
                parent = _YAML_PARENT.fullmatch(line)
                break
        if parent is None:
            continue
        pos = default.end() + 1
        for _ in range(_SIBLINGS):  # down: the siblings after it
            stop = text.find("\n", pos)
            line = text[pos : len(text) if stop == -1 else stop]
            if line.strip() and not line.startswith(indent):
                break
            no_echo = no_echo or _NO_ECHO.match(line) is not None
            if stop == -1:
                break
            pos = stop + 1
        credential = secret_name(parent["name"])
        if not credential and not no_echo:
            continue
        group = "quoted" if default["q"] is not None else "bare"
        value = default[group]
        if len(value) < 8 or "${" in value or "{{" in value or not not_example(value):
            continue
        if looks_random(value) or _HEX_KEY.fullmatch(value) or credential_value(value):
            yield kind_of_name(parent["name"]), default.start(group), default.end(group)


# a user and its password as one value, after a name or a directive that says so: Elastic's
# `cloud.auth: "user:pass"`, Squid's `login=user:pass`, HAProxy's `stats auth user:pass`,
# `credentials = user:pass` (matched at the occurrences of the words, found once per text)
LOGIN_WORDS = ("auth", "login", "credential")
_LOGIN_PAIR = re.compile(
    r"""(?i:auth|login|credentials?)["']?+(?:[ \t]*+[:=][ \t]*+|(?P<blank>[ \t]++))(?P<q>["']?+)"""
    r"""(?P<user>[\w.@+-]{2,64}+):(?!:)(?P<secret>(?(q)[^"'\n]{1,128}+|[^\s"'@,;]{1,128}+))(?(q)(?P=q)|(?=[\s,;]|\Z))"""
)
_DIRECTIVE = re.compile(r"[ \t]*+(?:[\w.-]++[ \t]++)*+")  # what may precede `stats auth user:pass`
_CODE_MARK = re.compile(r"[{}()\[\]$]")


def login_pairs(text: str, lowered: str, at: Sequence[int], budget: Budget) -> Iterator[tuple[str, int, int]]:
    """Yield the password of each `user:password` value of a login's name or directive (see
    _LOGIN_PAIR) at the occurrences `at` of its word, when it looks chosen or generated and is not
    the user again, a reference or code."""
    for hit in at:
        if hit and lowered[hit - 1].isalpha():
            continue  # (a longer word: oauth, blogin)
        m = _LOGIN_PAIR.match(text, hit)
        if m is None:
            continue
        secret = m["secret"]
        if secret == m["user"] or _CODE_MARK.search(secret) or not not_example(secret) or stock_word(secret):
            continue
        line = text.rfind("\n", 0, hit) + 1
        if m["blank"] is not None and not _DIRECTIVE.fullmatch(text, line, hit):
            continue  # a blank after the word: a directive's line only (`stats auth`), not prose
        if credential_value(secret) or passphrase(secret):
            yield "password-assignment", m.start("secret"), m.end("secret")


# a connection string's password up to its `;`, whatever it holds (`&`, blanks): Snowflake's and
# ADO.NET's `...;password=Fjord&Glacier-9;db=...`; or in braces, which ODBC takes with `;` and `}`
# inside, `Pwd={S3cret;2023}`; or before a blank and the next keyword (at the occurrences of `pass`
# and `pwd`)
_CONNECTION_PASSWORD = re.compile(
    r"(?i:password|pwd)=(?:(?P<secret>[^;\"'\n{}]{1,128}+);(?=[ \t]*+[\w.-]{1,40}+=)"
    r"|\{(?P<braced>(?:[^}\n]|\}\}){1,256}+)\}"
    # libpq's and DB-API's keyword form, `host=db user=app password=VALUE dbname=app`: up to a blank
    # and the next keyword (code's arguments are joined by commas)
    r"|(?P<spaced>[^\s;\"'{}]{1,128}+)(?=[ \t]++[a-z_]{2,40}+=)"
    # ... and last, after another keyword's pair and a blank, to the string's or line's end
    # (not code's arguments: `username=auth[0], password=auth[1])`)
    r"|(?P<last>[^\s;\"'{}()\[\],]{1,128}+)(?=[\"'`]|[ \t]*+(?:\n|\Z)))"
)
_PAIR_BEFORE = re.compile(r"[a-z_]{2,40}=[^\s=\"'`,()\[\]]{1,128}[ \t]+\Z")


def connection_passwords(
    text: str, lowered: str, at: Sequence[int], budget: Budget
) -> Iterator[tuple[str, int, int]]:
    """Yield each password of a `;`-separated connection string (see _CONNECTION_PASSWORD)."""
    for hit in at:
        if hit and (lowered[hit - 1].isalnum() or lowered[hit - 1] in "_.-"):
            continue
        m = _CONNECTION_PASSWORD.match(text, hit)
        if m is not None:
            group = next(g for g in ("secret", "braced", "spaced", "last") if m[g] is not None)
            if group == "last" and _PAIR_BEFORE.search(text, max(0, hit - 170), hit) is None:
                continue
            secret = m[group].strip()
            if credential_value(secret) or passphrase(secret) or word_passphrase(secret):
                yield "password-assignment", m.start(group), m.end(group)


_FLAGS = {
    "mysql": _MYSQL_FLAG,
    "ldap": _LDAP_FLAG,
    "login": _LOGIN_FLAG,
    "curl": _CURL_FLAG,
    "openssl": _OPENSSL_FLAG,
    "mongo": _MONGO_FLAG,
    "zip": _ZIP_FLAG,
    "other": _OTHER_FLAG,
}


def flag_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the password of each command line that passes one as a flag (see _FLAG_COMMANDS).
    Linear: each command's flags are looked for only up to the next command word or line end (a
    lazy run after each `mysql` scanned 300 characters per word: 7 s on 1 MB of `mysql `)."""
    starts: list[int] = []
    for name in FLAG_COMMAND_WORDS:
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
        flags = _FLAGS[word.lastgroup or "other"]
        for flag in flags.finditer(text, start, stop + 12):
            if flag.start() >= stop:
                break
            value = _FLAG_VALUE.match(text, flag.end())
            if value is None:
                continue
            group = value.lastgroup or "bare"
            begin, secret = value.start(group), value[group]
            if word["curl"]:
                user, _, secret = secret.partition(":")  # (`-u user` alone: curl asks for it)
                if secret == user:
                    break  # `-u deploy2:deploy2`: the user again, a placeholder
                begin += len(user) + 1
            if not_example(secret) and (word["mysql"] or named_credential("password", secret)):
                yield "command-line-password", begin, begin + len(secret)
                break
            # (not one: the flag meant something else there, `redis-cli -p 6379 -a X`'s port)


def putty_private_lines(text: str) -> Iterator[tuple[str, int, int]]:
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

# define('DB_PASSWORD', 'S3cret!') in PHP (WordPress's wp-config.php: DB_PASSWORD, AUTH_KEY, ...)
PHP_DEFINE = re.compile(
    r"""define\([ \t]*(?P<nq>["'])(?P<name>[A-Za-z0-9_]{2,64}+)(?P=nq)[ \t]*,[ \t]*(?P<q>["'])(?P<secret>[^"'\n]{1,256}+)(?P=q)[ \t]*\)"""
)
# a literal default of a secret environment variable: os.environ.get("API_TOKEN", "t0k3n..."),
# os.getenv('DB_PASSWORD', 'S3cret!'), Ruby's ENV.fetch("DB_PASSWORD", "S3cret!"), Laravel's
# env('DB_PASSWORD', 'S3cret!'), process.env.DB_PASSWORD || "S3cret!", ?? 'S3cret!'
# (one pattern per spelling, each led by its literal: an alternation of them scanned 10 times slower)
_ENV_DEFAULT_CALL = r"""\([ \t]*(?P<nq>["'])(?P<name>[\w.-]{1,64}+)(?P=nq)[ \t]*,[ \t]*[bru]{0,2}(?P<q>["'])(?P<secret>[^"'\n]{1,256}+)(?P=q)"""
ENV_DEFAULTS = (  # the call's name, where `env` is in it, its pattern
    ("environ", 0, re.compile(r"environ\.(?:get|setdefault)" + _ENV_DEFAULT_CALL)),
    ("getenv", 3, re.compile(r"getenv" + _ENV_DEFAULT_CALL)),
    ("env.get", 0, re.compile(r"(?<!environ)env\.get" + _ENV_DEFAULT_CALL)),
    ("ENV.fetch", 0, re.compile(r"ENV\.fetch" + _ENV_DEFAULT_CALL)),  # Ruby
    ("get_env", 4, re.compile(r"get_env" + _ENV_DEFAULT_CALL)),  # Elixir's System.get_env("NAME", "default")
    ("env(", 0, re.compile(r"(?<![\w.$>])env" + _ENV_DEFAULT_CALL)),  # Laravel's env('NAME', 'default')
    (
        "env_var(",
        0,
        re.compile(r"(?<![\w.$>])env_var" + _ENV_DEFAULT_CALL),
    ),  # dbt's env_var('NAME', 'default')
    (
        "process.env",
        8,
        re.compile(
            r"""process\.env\.(?P<name>\w{1,64}+)[ \t]*(?:\|\||\?\?)[ \t]*(?P<q>["'`])(?P<secret>[^"'`\n]{1,256}+)(?P=q)"""
        ),
    ),
)


def named_literals(pattern: re.Pattern[str]) -> Callable[[str], Iterator[tuple[str, int, int]]]:
    """Yield the literal of each match whose name holds a credential and whose value is one, and
    its kind by the name."""

    def find(text: str) -> Iterator[tuple[str, int, int]]:
        for m in pattern.finditer(text):
            value = m["secret"]
            if (
                secret_name(m["name"])
                and named_credential(m["name"], value)
                and " " not in value  # prose: 'Use at least 12 characters'
                and REPEATED.search(value) is None
                and not encodes_other_text(value)
            ):
                yield kind_of_name(m["name"]), m.start("secret"), m.end("secret")

    return find


# a literal assigned to a name (`_HOOK_A = "whsec_7Fq..."`, shell's `local a='xoxb-9021...' b='...'`),
# found from its `=` (led by a literal: scanned at C speed), and the name before it
# (a piece of a secret holds a digit and no blank)
_NAMED_LITERAL = re.compile(r"""=[ \t]*+(?P<q>["'])(?P<value>(?=[^"'\s\\]*?[0-9])[^"'\s\\]{4,200}+)(?P=q)""")
_NAME_BEFORE_EQUALS = re.compile(r"(?<![\w.$])(?P<name>[A-Za-z_]\w{0,40}+)(?::[^=\n]{1,40}+)?[ \t]*+\Z")
# a name used in an expression that joins names: `A + B`, PHP's `$a . $b`, Lua's `a .. b`, or side
# by side in a template (`"${a}${b}"`, `$a$b`, an f-string's `{A}{B}`)
_JOIN = re.compile(r"[ \t]*+(?:\+|\.\.?)[ \t]*+|")
MIN_JOINED = 16  # characters a joined value needs to be judged
MAX_NAMES = 64


def joined_names(text: str, find_secrets: Scanner) -> Iterator[tuple[str, int, int]]:
    """Yield each literal of a secret split over names and joined again (`_HOOK_A + _HOOK_B`,
    `"${a}${b}"`): the names assigned a literal once in the text, each joined value scanned by
    every rule."""
    literals: dict[str, tuple[int, int] | None] = {}
    for m in _NAMED_LITERAL.finditer(text):
        named = _NAME_BEFORE_EQUALS.search(text, max(0, m.start() - 80), m.start())
        if named is not None:
            name = named["name"]
            literals[name] = None if name in literals else (m.start("value"), m.end("value"))
    names = {name: span for name, span in literals.items() if span is not None}
    if not 2 <= len(names) <= MAX_NAMES:
        return  # (past MAX_NAMES, generated code: each position would be tried against every name)
    known = "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
    reference = re.compile(
        rf"\$\{{(?P<braced>{known})\}}|\$(?P<dollar>{known})(?!\w)|\{{(?P<curly>{known})\}}"
        rf"|(?<![\w.$])(?P<bare>{known})(?!\w)"
    )
    at = 0
    for ref in reference.finditer(text):
        if ref.start() < at:
            continue
        run, pos = [ref], ref.end()
        while (join := _JOIN.match(text, pos)) is not None and (nxt := reference.match(text, join.end())):
            if not join.group() and "bare" in (run[-1].lastgroup, nxt.lastgroup):
                break  # side by side only in a template
            run.append(nxt)
            pos = nxt.end()
        at = pos
        if len(run) < 2:
            continue
        spans = [names[r[r.lastgroup or "bare"]] for r in run]
        joined = "".join(text[a:b] for a, b in spans)
        if len(joined) >= MIN_JOINED and (inner := find_secrets(joined)):
            for a, b in spans:
                yield inner[0].kind, a, b


# base64 that decodes to secrets: a kubeconfig's client-key-data (a PEM key, whose base64 starts
# LS0tLS1CRUdJTi: "-----BEGIN"), a Kubernetes Secret's `data:` values (.env files, passwords)
ENCODED_KEY = "LS0tLS1CRUdJT"
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


def encoded_secrets(text: str, find_secrets: Scanner) -> Iterator[tuple[str, int, int]]:
    """Yield each base64 value that decodes to a private key, or, in a Kubernetes Secret manifest,
    to text holding a secret (.env lines) or to a credential under a credential's name; the decoded
    text is scanned by `find_secrets`, every rule, this finder among them."""
    pos = 0
    while (at := _next(text, ENCODED_KEY, pos)) != -1:
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
        elif "\n" not in decoded.strip() and secret_name(entry["name"]) and credential_value(decoded.strip()):
            yield kind_of_name(entry["name"]), entry.start("value"), entry.end("value")
