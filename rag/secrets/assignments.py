"""Find credentials assigned to names: the patterns of assignments, env and config lines, and their checks."""

from __future__ import annotations

import re

from rag.secrets.credential_names import NOT_CREDENTIAL, WORDS, credential_name
from rag.secrets.randomness import ascending, encodes_other_text
from rag.secrets.values import (
    HASHED_NAME,
    NOT_AUTH_TOKEN,
    REPEATED,
    credential_value,
    not_example,
    password_name,
    varied,
    word_passphrase,
)

# An assignment to a name that holds a credential (the name in the rule, at the end of a longer
# one: DB_PASSWORD, spring.datasource.password, clientSecret, x-api-key, _authToken), maybe quoted
# (JSON, PHP, YAML) or a subscript's key (`config["db_password"] =`), by `=`, `:`, `:=`, `=>`, a
# type annotation's `: str =` (`db_password: SecretStr = ...`, as typed settings classes write
# them), a type after a blank (Go's `var dbPassword string =`, Bicep's `param adminPassword string
# =`) or LDIF's `::` before base64; then a quoted literal (maybe b"", r"", u""), or one unquoted
# token: no quotes, brackets, braces, `=:,;&|<>` (so `os.environ["K"]`, `getpass()`, `${VAR}`,
# `<password>`, `ENC(...)` stop it early; a chosen `Heron=Lantern=62` may hold up to three `=`),
# base64 padding allowed, followed by a space, a quote, `;&|` or the end. Possessive runs: a token
# never backtracks, and it cannot run past the next `:` or its fourth `=`, so no character is
# scanned by more than a few candidates (linear on any input).
# assignments past `=` and `:=`: Make's `?=`, `+=` and `::=`, Ruby's `||=`, JavaScript's `??=`
MORE_OPERATORS = r"(?:\?\??|\+|\|\||::)="
ASSIGNED = (
    r"""(?P<name>{name})["'`]?(?:\[[0-9A-Za-z_]{{0,8}}\]|[\]}}])?(?P<sp1>[ \t]*)"""  # (C's `password[] =`, Perl's `$h{pass} =`)
    r"""(?P<op>:=|=>|<-|"""
    + MORE_OPERATORS
    + r"""(?![=>])|:[ \t]*+[A-Za-z_][\w.]*+(?:\[[^\]\r\n]{{0,80}}+\])?+[ \t]*+=(?![=>])"""
    r"""|(?<=[ \t])[A-Za-z_][\w.]*+[ \t]*+=(?![=>])|::(?=[ \t])|[:=])(?P<sp2>[ \t]*)"""
    r"""(?:[bru]{{0,2}}(?P<q>["'`]))?"""
    r"""(?P<secret>(?(q)[^"'`\s]{{8,}}+|(?=[^\s"'`:,;&|()\[\]{{}}<>]{{8}})"""
    r"""[^\s"'`=:,;&|()\[\]{{}}<>]++(?:=[^\s"'`=:,;&|()\[\]{{}}<>]++){{0,3}}+={{0,2}}))"""
    r"""(?(q)(?P=q)|(?=[\s"'`;&|]|\Z))"""
)
# an unquoted value may end the line or the statement, or be followed by a comment or a shell operator
_VALUE_END = re.compile(r"""[ \t]*(?:[\r\n;&|"'`\\#]|//|\Z)""")
# Unquoted values shaped as names in code, not literals: self.password, settings.API_KEY,
# config.db.secret (dotted; not ya29.a0AfH6SMBx, whose digits sit between letters), next_token_2,
# DEFAULT_PASSWORD_2 (snake case), environment_specified? (Ruby's predicate), CancelToken$1 (a bundler's renamed binding)
CODE_NAME = re.compile(
    r"(?![\w$.]*[A-Za-z][0-9]+[A-Za-z])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\.\?|[?!])?"
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+\??|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Za-z_]\w*\$[0-9]*"
)
_SEARCH_KEY_NAME = re.compile(r"search[_.-]?(?:only[_.-]?)?api[_.-]?\Z")
_SECRET_KEY_NAME = re.compile(r"(?:api|private|encryption|signing|master)[_.-]?\Z")

HASH_VALUE = re.compile(
    r"(?:pbkdf2_sha(?:1|256)|bcrypt(?:_sha256)?|argon2|scrypt|sha1|md5)\$|\$(?:2[abxy]|argon2|[156])\$"
    r"|(?:pbkdf2:sha(?:1|256|512):[0-9]+|scrypt:[0-9]+:[0-9]+:[0-9]+)\$"  # Werkzeug's
)
_KEY_BEFORE = re.compile(r"[\w:.-]*\Z")  # the rest of the key a credential name ends

_HEX_NUMBER = re.compile(r"0[xX][0-9a-fA-F]{1,8}")  # token = 0x7fffffff: a number of 32 bits at most
# a dotted name in code whose first part has no digit (rust_openssl.hpke.X25519PrivateKey), where
# a token's first part has one (ya29.a0AfH6SMBx)
DOTTED_CODE = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_$][\w$]*)+")


def assigned_secret(match: re.Match[str]) -> bool:
    """Accept a quoted credential literal, or an unquoted token that is a literal, not code.

    Unquoted values are code as often as not (`password = request.POST['password']`, `password=None`,
    `password: str`, `token = self.token`, `def login(user, password):`), so one counts only when it
    is a credential value (see credential_value: `password`, `None`, `str` fail) that does not
    start as a reference, path, operator or YAML tag/alias (`$%#/~!*@.+-`), is not a name in code
    (see CODE_NAME), and either is written `NAME=value` as in .env files and shells (where a
    command may follow: `PGPASSWORD=... psql`) or ends the line or statement (`password = Zebra9Pass4`,
    `password: s3cr3t!`, then maybe a comment, `;`, `&`, `|` or a closing quote) where code would go
    on with `,`, `)`, `(` or an operator. An identifier with a digit that ends a line
    (`password = userPass1`) is taken for a literal: ini and YAML values look the same.
    """
    value = match["secret"]
    if not _path_named(match):
        return False
    typed = _TYPE_WORD.match(match["op"])
    if typed is not None and typed[0].lower() in NOT_CREDENTIAL:
        return False  # another attribute after it, not a type: `type="password" placeholder="..."`
    if word_passphrase(value) and password_name(match["name"]):
        return _not_a_reference(match) and _passphrase_position(match)
    if not credential_value(value) or encodes_other_text(value):
        return False
    if not _not_a_reference(match):
        return False
    if match["q"]:
        return _opens_value(match)
    if value[0] in "$%#/~!*@.+-" or CODE_NAME.fullmatch(value) or DOTTED_CODE.fullmatch(value):
        return False
    if match.string[max(0, match.start("name") - 5) : match.start("name")] in ("this.", "self."):
        return False  # an attribute set in code to a variable: this.password = newPassword1;
    if match["op"] == "=" and not match["sp1"] and not match["sp2"]:
        return True
    return _VALUE_END.match(match.string, match.end("secret")) is not None


def _passphrase_position(match: re.Match[str]) -> bool:
    """Whether a password's plain words (values.word_passphrase) stand where no code does: quoted,
    or unquoted as a literal (see _unquoted_phrase) that ends its line or statement."""
    text = match.string
    if match["q"]:
        return _opens_value(match)
    key = _KEY_BEFORE.search(text, max(0, match.start("name") - 40), match.start("name"))
    name = (key.group() if key else "") + match["name"]
    if _VALUE_END.match(text, match.end("secret")) is None and not _environment(match, name):
        return False  # (code goes on: `connect(password=generated_phrase)`; a command may follow a variable)
    return _unquoted_phrase(match, name)


def _unquoted_phrase(match: re.Match[str], name: str) -> bool:
    """Whether an unquoted password's plain words are a literal: joined by `-` (no name in code
    is), after a YAML or properties `:` and a blank (`db_password: copper_pylon_saffron83`), or
    given to an environment variable (`PGPASSWORD=copper.gravel.quiet`); where `password =
    generated_phrase` is code."""
    return "-" in match["secret"] or match["op"] == ":" and bool(match["sp2"]) or _environment(match, name)


def _environment(match: re.Match[str], name: str) -> bool:
    """Whether a value is given to an environment variable: an upper-case name, `=` and no blank."""
    return name.isupper() and match["op"] == "=" and not match["sp1"] and not match["sp2"]


def _opens_value(match: re.Match[str]) -> bool:
    """Whether a quoted value's quote opens it, rather than closing the literal that holds the name
    (see closes_name_literal)."""
    return not closes_name_literal(
        match.string, match.start("name"), match.end("name"), match.start("secret") - 1
    )


def closes_name_literal(text: str, name_start: int, name_end: int, quote: int) -> bool:
    """Whether the quote at `quote`, where a value would open, closes the literal that holds the
    name, so that what follows is code joined to it: `'--password='.$connection['password']` (PHP),
    `"--token=" + token` (the name's literal opened before it on its line, no quote of its kind
    between the name and this one, and an operator after it)."""
    q = text[quote]
    if _CONCATENATION.match(text, quote + 1) is None:
        return False  # a value follows the quote, not an operator (`"pw = \"...\""` in a notebook)
    line = text.rfind("\n", 0, name_start) + 1
    return q not in text[name_end:quote] and text.count(q, line, name_start) % 2 == 1


# an operator that joins a literal to code: PHP's `.`, Lua's `..`, `+`, SQL's `||`, VB's `&`, D's `~`
_CONCATENATION = re.compile(r"[ \t]*+(?:\.\.?|\+|\|\||&|~)[ \t]*+[\w$@(]")


def _not_a_reference(match: re.Match[str]) -> bool:
    """Reject what names or tests a credential without being one: a type name (the hash of
    `"AWS::MSK::BatchScramSecret"` in a schema), an ARN (`arn:aws:...:secret:name-a1b2c3`, where
    `:secret:` reads as an assignment), a URL's user name (`https://x-access-token:...@`), a password hash (`hashed_password`, `pbkdf2_sha256$...`), a
    patterned test vector (`ccccc`, `abcdefghij`)."""
    text, start, value = match.string, match.start("name"), match["secret"]
    before = text[max(0, start - 40) : start]
    key = _KEY_BEFORE.search(before)
    if key is not None and "::" in key.group() + match["name"]:
        return False
    if before.endswith(":") and match["op"] == ":" and not match["sp1"] and not match["sp2"]:
        return False
    if match["op"] == ":" and key is not None and before[: key.start()].endswith("//"):
        return False  # a URL's user (`https://x-access-token:<token>@host`): the url-password rule's
    if value[:4].lower() in ("arn:", "urn:") or _HEX_NUMBER.fullmatch(value):
        return False
    if HASHED_NAME.search(before[-24:].lower()) or HASH_VALUE.match(value):
        return False
    return REPEATED.search(value) is None and not _ascending_run(value)


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
ENV_LINE = (
    r"""^[ \t]*(?:(?:export|ENV|ARG|set|SET)[ \t]+|-[ \t]+)?["']?(?P<name>[A-Z0-9_]*?{suffix})["']?(?P<sp1>)"""
    r"""(?P<op>[=:])(?P<sp2>[ \t]*)(?P<q>["']?)(?P<secret>[^\s"']{{8,}}+)(?P=q)["']?[ \t]*(?:\#[^\r\n]*)?\r?$"""
)


def _line_value(match: re.Match[str]) -> bool:
    """Accept the value that ends an environment or config line when it is a credential literal
    (see credential_value, _not_a_reference), not a reference (`$(cat ...)`, `${X}`), a path
    (SSH_PRIVATE_KEY=~/.ssh/id_ed25519) or a name in code; a YAML key needs the blank after its colon."""
    value = match["secret"]
    if match["op"] == ":" and not match["sp2"] or value[0] in "$%<{/~":
        return False
    if word_passphrase(value) and password_name(match["name"]):
        return _unquoted_phrase(match, match["name"]) and _not_a_reference(match)
    if CODE_NAME.fullmatch(value):
        return False
    return credential_value(value) and not encodes_other_text(value) and _not_a_reference(match)


def env_secret(match: re.Match[str]) -> bool:
    """Accept an environment value (see _line_value) whose name is not a pagination token's."""
    name = match["name"]
    if name.endswith("TOKEN") and NOT_AUTH_TOKEN.search(name[:-5].lower()):  # NEXT_TOKEN
        return False
    if name.endswith("KEY") and _SEARCH_KEY_NAME.search(name[:-3].lower()):  # ALGOLIA_SEARCH_API_KEY
        return False
    return _line_value(match)


# A config line (.properties, INI, YAML): a lower-case password name, then one token that is the
# rest of the line (`db.password=Pa55:w0rd!x`, `password: Xy7:kq2Lm9Qz`), colons and all
CONFIG_LINE = re.compile(
    r"""^[ \t]*(?:(?:export|ENV|ARG|set)[ \t]+|-[ \t]+)?(?P<name>[\w.-]{0,40}?(?i:password|passwd|pwd))"""
    r"""(?P<sp1>[ \t]*)(?P<op>[=:])(?P<sp2>[ \t]*)(?:(?P<tag>!{1,2}[A-Za-z]{1,15})[ \t]+)?(?P<secret>[^\s"'`,;]{8,}+)[ \t]*(?:[ \t][#;][^\r\n]*)?\r?$""",
    re.MULTILINE,
)  # (after a YAML tag: `password: !!str ..`; a value ending in `,` or `;` is code: `password: req.body.password1,`, `this.password = pw1;`)
_CALL_OR_INDEX = re.compile(r"[\w)\]][(\[]")  # get_password(x), os.environ['PW']: code, not a value


def config_secret(match: re.Match[str]) -> bool:
    """Accept a config value (see _line_value) that is not a YAML tag or alias, nor code: a call,
    a subscript, a dotted name, an attribute set in code."""
    value = match["secret"]
    if (
        match["op"] == ":"
        and value[0] in "!*&"
        or _CALL_OR_INDEX.search(value)
        or DOTTED_CODE.fullmatch(value)
        and not (word_passphrase(value) and _unquoted_phrase(match, match["name"]))
    ):
        return False  # (`db.password: copper.gravel.quiet` is a literal: see _unquoted_phrase)
    if (
        match["tag"] == "!!str"
        and value.isdigit()
        and not_example(value)
        and varied(value)
        and not ascending(value)
    ):
        return True  # digits YAML is told to keep as a string: a numeric password (`!!str 0731...`)
    return not match["name"].startswith(("this.", "self.")) and _line_value(match)


_TYPE_WORD = re.compile(r"[A-Za-z_]\w*+(?=[ \t]*+=)")  # the word of the `name type =` operator
# the segments of a key path before a name (`checksum/` of Kubernetes' `checksum/secret` annotation)
_PATH_LEAD = re.compile(r"[\w.-]{1,40}/\Z")


def _path_named(match: re.Match[str]) -> bool:
    """Whether a name written after a path's segments (`checksum/secret`, `vault/token`) still names a
    credential with them (see credential_name): a checksum of a secret is no secret."""
    start = match.start("name")
    lead = _PATH_LEAD.search(match.string, max(0, start - 41), start)
    if lead is None:
        return True
    name = lead[0] + match["name"]
    word = next((w for w in WORDS if w in match["name"].lower()), None)
    return word is None or credential_name(name, word)


def pass_word(match: re.Match[str]) -> bool:
    """Accept a bare `pass` only as a word of the name (DB_PASS, db-pass, dbPass), not bypass or compass."""
    start = match.start("name")
    if len(match["name"]) != 4 or start == 0:
        return True
    before = match.string[start - 1]
    return not before.isalnum() or (match.string[start] == "P" and (before.islower() or before.isdigit()))


def secret_key_name(match: re.Match[str]) -> bool:
    """Require a `key` name to be an API, private, encryption, signing or master key (api_key, apiKey,
    X-API-Key, PRIVATE_KEY, encryptionKey), not any key."""
    start = match.start("name")
    if _SEARCH_KEY_NAME.search(match.string[max(0, start - 20) : start].lower()) is not None:
        return False  # a search-only API key: made to ship in a browser's bundle (Algolia's)
    return _SECRET_KEY_NAME.search(match.string[max(0, start - 11) : start].lower()) is not None


def auth_token_name(match: re.Match[str]) -> bool:
    """Reject a token name that says its value is public or not a credential (publicKeyToken,
    NextToken, ChangeToken, idempotency and lock tokens)."""
    start = match.start("name")
    return NOT_AUTH_TOKEN.search(match.string[max(0, start - 24) : start].lower()) is None
