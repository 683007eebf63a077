"""Find secrets by what they are: a value that looks random (rag.secrets.randomness) in a
credential context, whatever the form around it.

A context is what the value belongs to: a name, key, header, flag or XML element whose words say
password, secret, token, key, auth, credential, session, private or signature (in any case and
with any separator: `DB_PASSWORD`, `dbPassword`, `X-Api-Key`, `--auth-token`, `<password>`);
the `value` beside such a `name` (Kubernetes env lists, ECS task definitions, XML properties);
the column of a table whose header says so (CSV, Markdown); the credential argument of a
well-known client call (`redis.Redis(host, port, db, password)`, `HTTPBasicAuth(user, pw)`,
`smtp.login(user, pw)`); the user part of a URL (`https://<token>@host`); a SQL statement that
sets a password (`IDENTIFIED BY`). The value may be quoted or not, start with any character, sit
on the line below its name, or be split into literals joined by `+`, `.`, `||` or nothing.

For the words of a password (pass, pwd, secret), a chosen value counts too (values.credential_value:
`Tr0ub4dor&3`); for the others only a random one does, so `cache_key = "user_profile_v2"` and
`signature = "HMAC-SHA256"` stay.

Cost: each word is found by a literal search in the lowered text (the same gates the form rules
use), and its name, operator and value by one anchored match; Python looks only at the names
that end in an operator, a table separator or a line end.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Iterator, Sequence

from rag.secrets.anywhere import (
    DIGEST_WORD,
    PUBLISHABLE,
    TEST_VECTOR,
    chosen_password,
    digest_shaped,
    generated_password,
    random_bytes,
    short_name,
)
from rag.secrets.assignments import CODE_NAME, HASH_VALUE, MORE_OPERATORS, closes_name_literal
from rag.secrets.credential_names import SEGMENTS, WORDS, credential_name
from rag.secrets.finders import Budget
from rag.secrets.randomness import (
    CONSONANT_RUN,
    as_text,
    ascending,
    known_shape,
    looks_random,
    may_be_random,
    roughly_random,
)
from rag.secrets.tables import (
    MAX_ROW,
    SQL_COLUMNS,
    CreatedTables,
    copy_rows,
    header_column,
    insert_rows,
    table_cells,
    table_row,
)
from rag.secrets.values import (
    PASSWORD_SYMBOLS,
    REPEATED,
    app_password,
    credential_value,
    format_string,
    kind_of_name,
    may_be_chosen,
    not_example,
    passphrase,
    password_name,
    word_passphrase,
)

# what may lead a quoted literal: Python's `b`, `r`, `u`; C#'s verbatim and interpolated `@`, `$`
_QUOTE_PREFIX = r"(?:[bruBRU]{0,2}|@\$?|\$@?)"
# a word, the rest of its name, a closing quote or bracket, then an operator (`=`, `:`, `:=`,
# `=>`, `,`, `>`, a table's `|` or tab, blanks) or the end of the name (a `name: X` whose value
# is beside it); in the lowered text, led by the word's literal
_AFTER_WORD = (
    r"(?P<tail>[a-z0-9_.-]{0,40}+)(?P<close>[\"'`]?+\]?+)"
    # an operator (a type annotation's `: &str =` too) or blanks, then (maybe on the next line)
    # the start of a quoted value or of an unquoted one long enough to be random
    r"(?:(?P<op>[ \t]*+(?::=|=>|<<?-|"
    + MORE_OPERATORS
    + r"(?!=)|:[ \t]*+&?(?:'[a-z]+[ \t]+)?[a-z_][\w.]*+(?:<[^>\n]{0,40}+>|\[[^\]\n]{0,40}+\])?+[ \t]*+=(?!=)|[:=>])|[ \t]++)"
    r"(?=[ \t]*+(?:\r?\n[ \t]*+(?:-[ \t]++)?)?+(?:![a-z!]{0,15}+[ \t]++)?+"  # a YAML tag: `!unsafe '..'`
    r"""(?:"""
    + _QUOTE_PREFIX
    + r"""(?:\"\"\"|'''|["'`])[^"'`\r\n]{6}|\[=?\[[^\]\r\n]{6}|(?:[a-z][a-z-]{1,15}[ \t]+)?[^\s"'`,;:=(){}\[\]<>]{12}"""
    r"""|(?:new[ \t]++)?[a-z_][\w.:]{0,60}+\([ \t]*+[bru]{0,2}["'`][^"'`\r\n]{6}))"""  # or a wrapper's literal
    # an object whose `value` key holds the value (`"admin_password": {"value": "..."}`: Terraform's
    # plans and state, ARM parameter files)
    r"""|(?P<object>[ \t]*+[:=][ \t]*+\{)"""
    # a quoted name, a comma, then a quoted value (`"password", "..."`)
    r"""|(?P<comma>(?<=["'`])[ \t]*+,)(?=[ \t]*+(?:\r?\n[ \t]*+)?[bruBRU]{0,2}["'`][^"'`\r\n]{6})"""
    # a separator in a row that may be a table's header (no code or prose after it to the line's
    # end, 300 characters at most: the finder tells, by one search for every separator before the
    # next _ROW_STOP, where a lookahead here scanned 300 characters at each `key,` of a megabyte)
    r"|(?P<sep>[ ]*+[,|\t;])"
    # a call named for the credential, its literal argument (`setPassword("..")`, `authToken.set("..")`)
    r"""|(?P<call>\()(?=[ \t]*+(?:[bru]{0,2}|@)["'`][^"'`\r\n]{6})"""
    # the end of the name: a name field's value, whose value is beside it
    r"""|(?P<end>(?=[ \t]*+(?:\r?\n|}|/?>|</|\Z))|(?<=["'`])(?=[ \t]++[a-z])))"""
)
_NAMED = {word: re.compile(re.escape(word) + _AFTER_WORD) for word in WORDS}
# past the budget (finders.Budget): a word, the rest of its name, an operator, a separator or a
# blank, then (maybe on the next line) a quoted value of 8+ characters or an unquoted one of 12+
_COARSE_VALUE = (
    r"""[ \t]*+(?:\r?\n[ \t]*+(?:-[ \t]++)?)?+"""
    r"""(?:[bru]{0,2}(?P<quote>["'`])(?P<quoted>[^"'`\r\n]{8,1024}+)(?P=quote)|(?P<bare>[^\s"'`,;:=(){}\[\]<>&]{12,1024}+))"""
)
_COARSE_NAMES = re.compile(
    "(?P<name>(?P<word>"
    + "|".join(WORDS)
    + r""")[a-z0-9_.-]{0,40}+)["'`]?+\]?+(?P<op>[ \t]*+(?::=|=>|[:=>,|;])|[ \t])"""
    + _COARSE_VALUE
)
# a .NET configuration key's sections before its last (`"Mail:Password"`, `["Smtp:Auth:Password"]`):
# a name of its own, where `aws:secretsmanager:` and `urn:x:` are parts of an ARN or URN
_CONFIG_PATH = re.compile(r"""["'\[](?:[A-Z][A-Za-z0-9_]{0,40}:){1,4}\Z""")
_QUERY_VALUE = re.compile(r"""[^\s"'`&?#;<>]{1,256}+""")
_PUBLIC_BEFORE = re.compile(r"(?i)\b(?:public|publishable|verifying)[ \t]++\Z")
_ROW_STOP = re.compile(r"[\n=(){}\[\]<>:]")  # code, prose or a line's end: what ends a header row's rest

# a name that is a name field's value: its value is that of the `value` key beside it
_VALUE_KEY = re.compile(r"""(?<![\w-])(?i:value)["'`]?[ \t]*(?::|=>|=)[ \t]*|<(?i:value)>""")
# what ends an item before its value: another name field, a brace, a new YAML list item
_ITEM_END = re.compile(r"""[{}]|\n[ \t]*-[ \t]|(?<![\w-])(?i:name)["'`]?[ \t]*(?::|=>|=)|<(?i:name)>""")
_OTHER_NAME = re.compile(r"""(?<![\w-])(?i:name)["'`]?[ \t]*(?::|=>|=)|<(?i:name)>""")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z-]{1,15}[ \t]+(?=\S)")  # Token, Bearer, Basic, ApiKey, SSWS...
# a quoted literal, maybe prefixed (b"", r"", u""); and what joins two: an operator (`+`, PHP's
# `.`, Lua's `..`, SQL's `||`, VB's `&`, Zig's and Haskell's `++`, OCaml's `^`, D's `~`) maybe before
# a line break, a backslash continuation, or blanks (Python's and C's adjacent literals)
_PREFIX = re.compile(_QUOTE_PREFIX + r"(?=[\"'`])")
_LONG_BRACKET = re.compile(r"\[(?P<eq>=?)\[(?P<value>[^\]\r\n]{1,1024}+)\](?P=eq)\]")
_JOINED = re.compile(
    r"""(?:[ \t]*(?:\+\+?|\.\.?|\|\||&|\^|~)[ \t]*(?:\r?\n[ \t]*)?|[ \t]*\\\r?\n[ \t]*|[ \t]*)[bruBRU]{0,2}(?=[\"'`])"""
)
_CODE_AFTER = re.compile(r"[(\[.]|[ \t]*[,)\]}]")  # what follows a name in code, not a value
_SYMBOL = re.compile(r"[!#%^*~@]")  # no name in code holds one
_JS_NAME = re.compile(r"[A-Za-z_][\w]*\$[A-Za-z_$][\w$]*")  # a bundler's renamed binding
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")  # a dotted name in code
# an unquoted value: up to a blank, a quote, a bracket, an operator or a separator (or a URL
# query's next `&name=`), base64 padding allowed; possessive, so each candidate scans its own
# characters only
_UNQUOTED = re.compile(r"""(?:[^\s"'`,;:=(){}\[\]<>&]|&(?![\w.-]{1,40}=)){1,1024}+={0,2}""")
# a literal in a wrapper that marks or types it, its one argument: Puppet's `Sensitive('...')`,
# pydantic's `SecretStr("...")`, `new String("...")`, `Secret::new("...")`
_WRAPPED = re.compile(
    r"""(?:new[ \t]++)?[A-Za-z_]\w{0,40}+(?:(?:\.|::)[A-Za-z_]\w{0,40}+){0,2}+[ \t]*+\([ \t]*+"""
    r"""(?P<arg>[bruBRU]{0,2}(?P<q>["'`])[^"'`\n]{1,256}+(?P=q))[ \t]*+\)"""
)


def named_values(word: str) -> _NamedValues:
    """The finder of the values named by `word` (see WORDS)."""
    return _NamedValues(word)


class _NamedValues:
    """Find the values of names that hold one word: `find(text, lowered)` yields kind, start, end."""

    def __init__(self, word: str) -> None:
        self.word, self.strong, self.pattern = word, WORDS[word], _NAMED[word]

    def __call__(
        self, text: str, lowered: str, at: Sequence[int], budget: Budget
    ) -> Iterator[tuple[str, int, int]]:
        headers: set[int] = set()  # table rows already read as a header, or found not one
        table_end = -1  # where the last table read ends: its rows are no headers
        pattern, size = self.pattern, len(lowered)
        row_from, row_stop = 1, 0  # the first _ROW_STOP at or after row_from (none: the text's end)
        for hit in at:
            m = pattern.match(lowered, hit)
            if m is None:
                continue
            sep = m["sep"]
            if sep is not None:  # the rest of a header row: no code or prose to its end, 300 at most
                end = m.end()
                if not row_from <= end <= row_stop:  # (found once for every separator before it)
                    stop = _ROW_STOP.search(lowered, end)
                    row_from, row_stop = end, size if stop is None else stop.start()
                if row_stop - end > 300 or (row_stop < size and lowered[row_stop] != "\n"):
                    continue
            if not budget.take():
                if not budget.coarse:  # the first finder past the budget reads every word's names
                    budget.coarse = True
                    yield from _coarse(_COARSE_NAMES, text, lowered, 0, budget)
                return
            close = m["close"]
            start = _name_start(text, m.start())
            quoted_name = close[:1] in ("'", '"', "`")
            # the cheap tests of each form first: most matches are of none
            field = None
            if m["end"] is not None or (sep is not None and quoted_name and sep.strip() == ","):
                field = _name_field(text, start)  # `- name: DB_PASSWORD`, `"name": "X",` then its value
                if field is None and m["comma"] is None:
                    if m["end"] is None or quoted_name or not _last_cell(text, start):
                        continue
                    sep = ""  # the last cell of a row that may be a table's header
            if field is None and sep is not None:
                # a header row is short: its start is looked for that far back only
                line = text.rfind("\n", max(0, start - MAX_ROW - 1), start) + 1
                if quoted_name or (line == 0 and start > MAX_ROW) or line in headers or line < table_end:
                    continue
                headers.add(line)
            name = text[start : m.end("tail")].lstrip("$-.")
            # part of a longer token: a URL's user (`//x-access-token:`), an ARN or URN
            # (`aws:secretsmanager:`), a type name (`AWS::MSK::BatchScramSecret`)
            if text[max(0, start - 2) : start].endswith(("//", "/")) or "::" in name:
                continue
            if (
                text[start - 1 : start] == ":"
                and _CONFIG_PATH.search(text, max(0, start - 80), start) is None
            ):
                continue
            if not credential_name(name, self.word) or _PUBLIC_BEFORE.search(text, max(0, start - 16), start):
                continue  # (`Public key: age1...`: the name's word before it says what it is)
            if TEST_VECTOR.search(name):
                continue  # `rfc8032_test1_secret`, `kat_key`: a published test vector, named as one
            if field is not None:
                found = _paired_value(
                    text, field, m.end(), self.strong, budget, _uuid_counts(self.word, name)
                )
                if found is not None:
                    yield kind_of_name(name), *found
                continue
            if sep is not None:  # a row that may be a table's header
                column = header_column(text, line, start)
                if column is not None:
                    values, table_end = _column_values(text, line, column, self.strong, budget)
                    yield from values
                continue
            if m["object"] is not None:
                key = _VALUE_KEY.search(text, m.end(), min(len(text), m.end() + _OBJECT_REACH))
                if key is not None and not any(c in text[m.end() : key.start()] for c in "{}"):
                    value = _literal(text, key.end(), self.strong, budget, uuid=self.word != "key")
                    if value is not None:
                        yield kind_of_name(name), *value
                continue
            if m["comma"] is not None:
                if text[start - 1 : start] != close[:1]:
                    continue  # `("X-Api-Key", "...")`: the quoted string is the name, whole
                # in a list of strings a random one only; a call's name and value (`param("X_PASSWD",
                # "...")`) as any name's
                pair = self.strong and text[max(0, start - 2) : start - 1] == "("
                value = _value(text, m.end(), pair, budget)
                if pair and value is not None and not _ARGUMENT_END.match(text, value[1] + 1):
                    value = _value(text, m.end(), False, budget)  # (not the call's two arguments alone)
                if value is not None:
                    yield kind_of_name(name), *value
                continue
            if m["call"] is not None:
                if _setter(name, self.word):
                    value = _value(text, m.end(), self.strong, budget, uuid=_uuid_counts(self.word, name))
                    if value is not None and _ARGUMENT_END.match(text, value[1] + 1):
                        yield kind_of_name(name), *value
                continue
            op = m["op"].strip(" \t")
            if (
                not op
                and not _keyword(text, start, name)
                and not (
                    quoted_name and _sectioned(text, start, name) and text[m.end() : m.end() + 1] in "\"'"
                )
                and not (text[m.end() : m.end() + 1] == "`" and _password_noun(name))
            ):
                continue  # a blank is an operator after a flag, a keyword, a setting, a configuration key
                # quoted as an argument (`set "Smtp:Password" "..."`) or before a code span in prose
                # (`password \`...\``; not `pass \`x\``, `Passing \`x\``: verbs) only
            if op == ">" and text[max(0, start - 1) : start] != "<":
                continue
            # a flag's value on a command line is no code, dotted or not (`--token dp.st.prd.<secret>`)
            flag = not op and text.startswith("-", start)
            uuid = _uuid_counts(self.word, name)
            if op == "=" and text[start - 1 : start] in ("?", "&"):  # a query's or an option string's
                query = _QUERY_VALUE.match(text, m.end())  # value, to its `&`, `?` or `#`: a literal
                value = _judged(text, *query.span(), self.strong, True, budget, uuid) if query else None
                if value is None and query is not None and ("%" in query[0] or "+" in query[0]):
                    # a form's body, URL-encoded: `password=violet%20tractor%20...`
                    plain = urllib.parse.unquote_plus(query[0])
                    if plain != query[0] and _is_secret(plain, self.strong, True, budget, uuid):
                        value = query.span()
            else:
                gap = _GAP.match(text, m.end())
                quote = gap.end() if gap else m.end()
                if text[quote : quote + 1] in ("'", '"') and closes_name_literal(
                    text, start, m.end("tail"), quote
                ):
                    continue  # `'--password='.$connection['password']`: code after the name's literal
                value = _value(text, m.end(), self.strong, budget, op == ">", flag, uuid)
            if value is not None:
                yield kind_of_name(name), *value


def _password_noun(name: str) -> bool:
    r"""Whether a name before a code span in prose is a password's noun (`password \`...\``), not
    the verb `pass` (`pass \`x\``)."""
    return password_name(name) and not name.lower().endswith("pass")


def _sectioned(text: str, start: int, name: str) -> bool:
    """Whether a name is a configuration key with sections (`Smtp:Password`, `db.password`,
    `Smtp__Password`), not a word in a list of strings (`[ "password" "confirm" ]`)."""
    return text[start - 1 : start] == ":" or "." in name or "__" in name


# what follows a call's literal argument: the call's end (its one argument; `Credential(id, secret)`
# takes an id first)
_ARGUMENT_END = re.compile(r"[ \t]*+\)")
_SETTER_CASE = re.compile(r"(?:[Ss]et|[Ww]ith|[Uu]se)(?:[A-Z]|_[A-Za-z])")  # (Go's and C#'s `SetPassword(`)


def _setter(name: str, word: str) -> bool:
    """Whether a call named `name` sets or gives the credential its words name: the name alone
    (`.password(`, `apiKey(`), after set, with or use (`setPassword(`, `with_api_key(`), or its
    property's setter (`authToken.set(`, Gradle's `.value(`); not a function of one (`hashPassword(`,
    `verify_token(`), nor one reached through another object (`vault.getSecret(`)."""
    for suffix in (".set", ".value", ".convention"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    name = name[name.rfind(".") + 1 :]
    if _SETTER_CASE.match(name):
        name = name[3 if name[:3].lower() in ("set", "use") else 4 :].lstrip("_")
    segments = [s.lower() for s in SEGMENTS.findall(name)]
    at = next((i for i, s in enumerate(segments) if word in s), None)
    return (
        at is not None
        and segments[at].startswith(word)  # (not `split_passwd(`)
        and all(s in _QUALIFIERS for s in segments[:at])
        and credential_name(name, word)
    )


# the words that say whose or which credential a name holds (`dbPassword`, `apiKey`, `authToken`),
# where a verb before it makes the call a function of one (`validate_password`, `hashPassword`)
_QUALIFIERS = frozenset(
    ["api", "auth", "access", "client", "app", "bearer", "private", "secret", "master", "admin", "user"]
    + ["db", "root", "service", "bot", "refresh", "store", "key", "signing", "encryption", "account"]
)


def _coarse(
    pattern: re.Pattern[str], text: str, lowered: str, at: int, budget: Budget
) -> Iterator[tuple[str, int, int]]:
    """Past the candidates' budget: each value that `pattern` finds in the lowered text from `at`
    on after a `name` led by a `word`, when it is a secret (see _is_secret, and Budget for its own
    budget); the name is not judged, so a look-alike's value may be taken too."""
    for m in pattern.finditer(lowered, at):
        quoted = m["quoted"] is not None
        start, end = m.span("quoted" if quoted else "bare")
        name = m["name"]
        # a password's word, after an operator (after a separator, a value that may be chosen is
        # as often the next cell or argument)
        strong = WORDS.get(m["word"], True) and m["op"][-1:] not in (",", "|", ";")
        if _is_secret(text[start:end], strong, quoted, budget):
            yield kind_of_name(name), start, end


_FIELD_NAMES = ("name", "key", "variable")


def _name_field(text: str, start: int) -> int | None:
    """Where the field whose value is the name at `start` begins, when the name is the value of
    a `name`, `key` or `variable` field (`- name: `, `"name": "`, `key="`); else None."""
    head = text[max(0, start - 24) : start].rstrip(" \t\"'`")
    if head.lower().endswith(("<name>", "<key>")):  # an XML property: `<name>X</name>` then `<value>`
        return start - 24 + head.rfind("<") if start >= 24 else head.rfind("<")
    for op in ("=>", ":", "="):
        if head.endswith(op):
            head = head[: -len(op)].rstrip(" \t\"'`")
            break
    else:
        return None
    lowered = head.lower()
    for field in _FIELD_NAMES:
        if lowered.endswith(field) and not lowered[-len(field) - 1 : -len(field)].isalnum():
            return start - 24 + len(head) - len(field) if start >= 24 else len(head) - len(field)
    return None


def _last_cell(text: str, start: int) -> bool:
    """Whether the name at `start`, last on its line, follows a table's separator (`user,password`)."""
    return text[max(0, start - 16) : start].rstrip(" ")[-1:] in (",", "|", "\t", ";")


def _keyword(text: str, start: int, name: str) -> bool:
    """Whether a name followed by a blank and its value is a flag (`--password x`), a keyword or
    constant (`PASSWORD 'x'`, `ENV API_TOKEN x`), a setting's name (`auth_token x`) or the first
    word of its line (`requirepass x`, `password x` in a config file), not a word of prose."""
    if (
        "-" in (text[start - 1 : start], text[start : start + 1])
        or name.isupper()
        or any(c in name for c in "_.-")
    ):
        return True
    at = start  # back over the blanks before the name only: each blank is passed by one name at most
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    # SQL's `[WITH | ENCRYPTED] PASSWORD 'x'`, `CREATE USER app PASSWORD 'x'`, in lower case too
    return at == 0 or text[at - 1] == "\n" or _SQL_BEFORE.search(text, max(0, at - 80), at) is not None


_SQL_BEFORE = re.compile(r"(?i)(?:\b(?:with|encrypted|unencrypted)|\b(?:role|user)[ \t]+[\w\"`.-]{1,63})\Z")


def _name_start(text: str, at: int) -> int:
    """Where the name that holds the word at `at` starts (64 characters back at most)."""
    low = max(0, at - 64)
    while at > low and (text[at - 1].isalnum() or text[at - 1] in "_.$-"):
        at -= 1
    return at


# blanks, and one line break (a YAML item's dash); a YAML tag (`!unsafe`, `!!str`)
_GAP = re.compile(r"[ \t]*+(?:\r?\n[ \t]*+(?:-[ \t]++)?)?(?:![A-Za-z!]{0,15}+[ \t]++)?+")


def _value(
    text: str,
    at: int,
    strong: bool,
    budget: Budget,
    element: bool = False,
    flag: bool = False,
    uuid: bool = False,
) -> tuple[int, int] | None:
    """The span of the secret value at `at` (blanks and one line break skipped), or None; a
    `flag`'s value, unquoted, is judged as a literal's."""
    gap = _GAP.match(text, at)
    at = gap.end() if gap else at
    if element:  # <password>VALUE</password>
        end = text.find("<", at, at + 1024)
        return _judged(text, at, end, strong, True, budget, uuid) if end != -1 else None
    return _literal(text, at, strong, budget, flag, uuid)


def _literal(
    text: str, at: int, strong: bool, budget: Budget, flag: bool = False, uuid: bool = False
) -> tuple[int, int] | None:
    """Read a quoted literal (and the literals joined to it) or an unquoted token at `at`; return
    the span of the secret when it is one (a UUID too, with `uuid`)."""
    bracket = _LONG_BRACKET.match(text, at)
    if bracket is not None:  # Lua's long string: `[[...]]`, `[=[...]=]`
        start, end = bracket.span("value")
        return (start, end) if _is_secret(bracket["value"], strong, True, budget, uuid) else None
    prefix = _PREFIX.match(text, at)
    if prefix is None:
        scheme = _SCHEME.match(text, at)  # Authorization: Token <secret>
        if scheme is not None:
            at = scheme.end()
        token = _UNQUOTED.match(text, at)
        after = None if token is None else _CODE_AFTER.match(text, token.end())
        # a literal in a list of options (`password=Zaq12wsx!Nas,domain=X`): no name holds a symbol
        if (
            token is not None
            and after is not None
            and after[0].lstrip(" \t") == ","
            and _SYMBOL.search(token[0])
        ):
            after = None
        if token is None or after is not None:
            wrapped = _WRAPPED.match(text, at) if strong else None
            if wrapped is not None:  # a password's literal in a wrapper (`Sensitive('...')`), alone
                arg = wrapped.start("arg")
                found = _literal(text, arg, strong, budget, uuid=uuid) if arg > at else None
                return found if found is not None and found[1] < wrapped.end() else None
            return None  # a call, a subscript, an attribute, an argument's type: code
        return _judged(text, at, token.end(), strong, flag, budget, uuid)
    parts: list[tuple[int, int]] = []
    pos = prefix.end()
    if text.startswith(('"""', "'''"), pos):  # a triple-quoted literal on one line (HOCON, Python, Kotlin)
        end = text.find(text[pos : pos + 3], pos + 3, pos + 1027)
        if end == -1 or text.find("\n", pos + 3, end) != -1:
            return None
        return (pos + 3, end) if _is_secret(text[pos + 3 : end], strong, True, budget, uuid) else None
    while len(parts) < 8:
        quote = text[pos]
        end = text.find(quote, pos + 1, pos + 1026)
        if end == -1 or text.find("\n", pos + 1, end) != -1:
            break
        parts.append((pos + 1, end))
        joined = _JOINED.match(text, end + 1)
        if joined is None:
            break
        pos = joined.end()
    if not parts:
        return None
    value = "".join(text[a:b] for a, b in parts)
    start, end = parts[0][0], parts[-1][1]
    scheme = _SCHEME.match(value)
    if scheme is not None and len(parts) == 1 and " " not in value[scheme.end() :]:
        start += scheme.end()  # "Token <secret>", "ApiKey <secret>": a header's value
        value = value[scheme.end() :]
    return (start, end) if _is_secret(value, strong, True, budget, uuid) else None


def _judged(
    text: str, start: int, end: int, strong: bool, quoted: bool, budget: Budget, uuid: bool = False
) -> tuple[int, int] | None:
    """The span start..end when the value there is a secret (see _is_secret)."""
    value = text[start:end].strip()
    if not value:
        return None
    start = text.index(value, start)
    return (start, start + len(value)) if _is_secret(value, strong, quoted, budget, uuid) else None


def _is_secret(value: str, strong: bool, quoted: bool, budget: Budget, uuid: bool = False) -> bool:
    """A random value; under a password's word, also a chosen literal in quotes (unquoted, a
    chosen value is as often code: the form rules judge those by the line around them). Past the
    budget's judging (see Budget), a value counts when it may be random by the tests that run at C
    speed, or when a password's quoted literal may be chosen: redacted rather than let through
    unjudged. With `uuid` (a token's, a password's or an API key's name), a UUID counts too; without
    it (any key's name), hex written as a key's fingerprint does not."""
    if _COLON_BYTES.fullmatch(value):  # a key's bytes as hex pairs and colons (a Thread network key)
        return random_bytes(list(bytes.fromhex(value.replace(":", ""))))
    random = may_be_random(value)
    if not random and len(value) >= 20 and _random_letters(value):
        return True  # letters of one case: no name (`NRAK-WNZHRIBELTHMFLLSMEGXROAUUQP`)
    if not (random or strong and quoted):
        return False  # (the cheap test first: most values are words)
    if uuid and len(value) >= 36 and _KEYED_UUID.fullmatch(value) and not REPEATED.search(value):
        return True  # a UUID is public but under a credential's name (Heroku's API keys, Splunk's tokens)
    if not uuid and _KEY_FINGERPRINT.fullmatch(value):
        return False  # any key's name (not an API key's): a key's fingerprint or id as gpg writes them
    if value[:4].lower() in ("arn:", "urn:") or format_string(value):
        return False
    if not strong and PUBLISHABLE.fullmatch(value):
        return False  # public by its vendor's prefix, under a key's or a token's name too (`STRIPE_KEY`)
    if not quoted and (CODE_NAME.fullmatch(value) or _DOTTED.fullmatch(value) or _JS_NAME.fullmatch(value)):
        return False  # a name in code: utils$1.isArray, _win32typing.PyHKEY, _ref2$allOwnKeys
    if not budget.judge(value):
        return (random and roughly_random(value)) or (strong and quoted and may_be_chosen(value))
    if not strong and _NAMED_HASH.fullmatch(value):
        return False  # a name and a short hash of what it names: a cache's key (`julia-depot-v3-699b48d7858cb0e1`)
    if looks_random(value) and (strong or not short_name(value)):
        return True  # (a password's word takes any random value; a key's, no name like `uint16-slice`)
    if (
        strong
        and quoted
        and (app_password(value) or passphrase(value) or "-" in value and word_passphrase(value))
    ):
        return True
    if (
        not (strong and quoted)
        or " " in value
        or "\t" in value
        or "(" in value
        or not credential_value(value)
    ):
        return False
    # (the costlier tests last: few values get here) a hash, a test vector, a UUID, date or version
    return not (HASH_VALUE.match(value) or REPEATED.search(value) or ascending(value) or known_shape(value))


_VENDOR_LETTERS = re.compile(r"[A-Za-z]{2,8}[-_]")
# two words or more, maybe a version, then hex shorter than a digest's 32 digits
_NAMED_HASH = re.compile(r"(?:[a-z]{3,}+[-_.]){2,}+(?:v?[0-9]{1,3}+[-_.])?+[0-9a-f]{6,31}+")


def _random_letters(value: str) -> bool:
    """Whether a value (after a vendor's prefix) is 20+ letters of one case that read as no word
    does (few vowels, five consonants in a row) and spread over the alphabet: a key of capitals."""
    prefix = _VENDOR_LETTERS.match(value)
    body = value[prefix.end() :] if prefix is not None else value
    if len(body) < 20 or not body.isalpha() or not body.isascii() or not (body.isupper() or body.islower()):
        return False
    vowels = sum(c in "aeiouAEIOU" for c in body)
    return (
        vowels < 0.3 * len(body)
        and len(set(body)) >= 14
        and CONSONANT_RUN.search(body.lower()) is not None
        and not ascending(body)
    )


# a UUID, maybe led by a vendor's short prefix (LaunchDarkly's `sdk-`); an API key's name
_API_KEY = re.compile(r"(?i)api|sdk")


def _uuid_counts(word: str, name: str) -> bool:
    """Whether a UUID is a secret under `name`, which holds `word`: under a password's, a token's or
    an API key's name, not any key's (`WS_KEY`)."""
    return word != "key" or _API_KEY.search(name) is not None


_COLON_BYTES = re.compile(r"(?:[0-9a-fA-F]{2}:){15,63}[0-9a-fA-F]{2}")
# an OpenPGP key's fingerprint or long id as gpg prints them: 40 or 16 capital hex digits
_KEY_FINGERPRINT = re.compile(r"[0-9A-F]{40}|[0-9A-F]{16}")
_KEYED_UUID = re.compile(
    r"(?:[a-z]{2,8}-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_PAIR_WINDOW = 1200
_OBJECT_REACH = 200  # characters from an object's `{` to its `value` key


def _paired_value(
    text: str, field: int, name_end: int, strong: bool, budget: Budget, uuid: bool = False
) -> tuple[int, int] | None:
    """The value of the `value` key beside a name field, after it or before it in the same item:
    `- name: DB_PASSWORD` then `value: ...`; `{"value": "...", "name": "DB_PASSWORD"}`;
    `<add key="ApiKey" value="..."/>`."""
    after = _VALUE_KEY.search(text, name_end, min(len(text), name_end + 160))
    if after is not None and _ITEM_END.search(text, name_end, after.start()) is None:
        if after[0].startswith("<"):  # `<value>...</value>`: the element's text, a literal
            return _value(text, after.end(), strong, budget, element=True, uuid=uuid)
        return _literal(text, after.end(), strong, budget, uuid=uuid)
    # from the line above, within _PAIR_WINDOW characters (a value of 1,024 and its key)
    low = max(0, field - _PAIR_WINDOW)
    line = text.rfind("\n", low, field)
    above = text.rfind("\n", low, line) if line > low else -1
    keys = list(_VALUE_KEY.finditer(text, max(low, above), field))
    if keys:
        before = keys[-1]
        between = text[before.end() : field]
        if not any(c in between for c in "{}") and _OTHER_NAME.search(between) is None:
            return _literal(text, before.end(), strong, budget, uuid=uuid)
    return None


# ---- tables: a header row that names a credential column, then its values --------------------------


def _column_values(
    text: str, line: int, column: tuple[str, int, int], strong: bool, budget: Budget
) -> tuple[list[tuple[str, int, int]], int]:
    """The secrets of a credential column in the rows below its header, up to the first row of
    another shape (a Markdown table's `|---|` row skipped); and where the table ends."""
    sep, index, width = column
    header, pos = table_row(text, line)
    kind = kind_of_name(header[table_cells(header, sep)[index][0] : table_cells(header, sep)[index][1]])
    found: list[tuple[str, int, int]] = []
    while pos < len(text):
        line = pos + 1
        row, end = table_row(text, line)
        cells = table_cells(row, sep)
        if len(cells) != width:
            break
        pos = end
        a, b = cells[index]
        cell = row[a:b].strip()
        if sep == "|" and set(cell) <= set("-: "):
            continue
        quoted = cell[:1] == cell[-1:] and cell[:1] in ('"', "'") and len(cell) > 1
        value = cell[1:-1] if quoted else cell
        literal = quoted or sep != "|" and " " not in value  # a data file's cell of one token is a literal
        if value and _is_secret(value, strong, literal, budget):
            start = line + a + row[a:b].index(value)
            found.append((kind, start, start + len(value)))
    return found, pos


# ---- credential arguments of well-known client calls ----------------------------------------------

# the callee (the name before `(`, lowered, without its qualifier) -> the positions (from 0) of its
# credential arguments, and whether they are passwords (a chosen value counts too)
CALLS: dict[str, tuple[tuple[int, ...], bool]] = {
    "redis": ((3,), True),  # redis.Redis(host, port, db, password)
    "strictredis": ((3,), True),
    "httpbasicauth": ((1,), True),  # requests.auth.HTTPBasicAuth(user, password)
    "httpdigestauth": ((1,), True),
    "httpproxyauth": ((1,), True),
    "basicauth": ((1,), True),  # aiohttp.BasicAuth(login, password)
    "plainauth": ((2,), True),  # Go's smtp.PlainAuth(identity, username, password, host)
    "auth": ((1,), True),  # requests' auth=(user, password)
    "login": ((1,), True),  # smtplib, imaplib, ftplib, poplib: login(user, password)
    "connect": (
        (2, 3),
        True,
    ),  # pymysql/MySQLdb (host, user, password); paramiko (host, port, user, password)
    "mysqli_connect": ((2,), True),
    "mysql_connect": ((2,), True),  # PHP's mysql_connect(server, user, password)
    "mysql_real_connect": ((3,), True),  # MySQL's C API: (mysql, host, user, password, db, ...)
    "oci_connect": ((1,), True),  # PHP's Oracle oci_connect(user, password, ...)
    "pqsetdblogin": ((6,), True),  # libpq's PQsetdbLogin(host, port, options, tty, db, login, password)
    "ftp_login": ((2,), True),  # PHP's ftp_login(ftp, user, password)
    "ssh2_auth_password": ((2,), True),  # PHP's ssh2_auth_password(session, user, password)
    "ldap_bind": ((2,), True),  # PHP's and C's ldap_bind(link, dn, password)
    "simple_bind_s": ((1,), True),  # python-ldap's simple_bind_s(who, cred)
    "pgp_sym_encrypt": ((1,), True),  # PostgreSQL's pgcrypto: pgp_sym_encrypt(data, password)
    "pgp_sym_decrypt": ((1,), True),
    "pdo": ((2,), True),  # PHP's new PDO(dsn, user, password)
    "getconnection": ((2,), True),  # JDBC's DriverManager.getConnection(url, user, password)
    "networkcredential": ((1,), True),  # .NET
    "usernamepasswordcredentials": ((1,), True),  # Apache HttpClient
    "passwordauthentication": ((1,), True),  # java.net
    "usernamepasswordauthenticationtoken": ((1,), True),  # Spring Security
    "session": ((1, 2), False),  # boto3.Session(key id, secret, session token)
    # Credentials(key id, secret, token); Perl LWP's credentials(netloc, realm, user, password)
    "credentials": ((1, 2, 3), False),
    "newstaticcredentials": ((1, 2), False),  # Go's AWS SDK
    "basicawscredentials": ((1,), False),  # Java's AWS SDK
    "oauthhandler": ((0, 1), False),  # tweepy
    "set_access_token": ((0, 1), False),
    # a callee named with its qualifier, where the last name alone says too little
    "jwt.encode": ((1,), True),  # PyJWT's encode(claims, key), jsonwebtoken's sign(payload, secret)
    "jwt.decode": ((1,), True),
    "jwt.sign": ((1,), True),
    "jwt.verify": ((1,), True),
    "hmac.new": ((0,), True),  # Python's hmac.new(key, msg, digest)
    "credentials.basic": ((1,), True),  # OkHttp's Credentials.basic(user, password)
    "wifi.begin": ((1,), True),  # Arduino's WiFi.begin(ssid, password), WiFi.softAP(ssid, password)
    "wifi.softap": ((1,), True),
}
# callees whose one argument, when they are given only one, is the password: Redis' `auth(password)`
ONE_ARGUMENT = frozenset({"auth"})
# the lowered words that find the calls (one literal search each; auth, credential, session and
# token are the contexts' words too), and the pattern that finds a callee ending in one
CALL_WORDS = (
    "auth",
    "login",
    "connect",
    "redis",
    "credential",
    "session",
    "token",
    "pdo",
    "jwt",
    "hmac",
    "bind",
    "pgp_sym",
    "wifi",
)
_CALLEE = {
    word: re.compile(
        re.escape(word) + r"[a-z_]{0,24}+(?:\.[a-z_]{1,24}+)?(?=[ \t]*(?:=[ \t]*)?(?P<paren>\())"
    )
    for word in CALL_WORDS
}
# a call is read when a quote comes within its first 200 characters (a literal argument) on its line:
# the next quote or line break is found once for the calls before it (a regex's scan of 200
# characters at each `auth(` of a megabyte of them took 1.3 s)
_QUOTE_OR_BREAK = re.compile(r"""[\n"'`]""")


def call_arguments(word: str) -> _CallArguments:
    """The finder of the credential arguments of the calls found by `word` (see CALLS)."""
    return _CallArguments(word)


class _CallArguments:
    """Find the credential arguments of well-known calls: `find(text, lowered)`."""

    def __init__(self, word: str) -> None:
        self.word, self.pattern = word, _CALLEE[word]

    def __call__(
        self, text: str, lowered: str, at: Sequence[int], budget: Budget
    ) -> Iterator[tuple[str, int, int]]:
        pattern, size = self.pattern, len(lowered)
        quote_from, quote = 1, 0  # the first quote or line break at or after quote_from
        for hit in at:
            m = pattern.match(lowered, hit)
            if m is None:
                continue
            paren = m.start("paren")
            if not quote_from <= paren + 1 <= quote:  # (found once for every call before it)
                stop = _QUOTE_OR_BREAK.search(lowered, paren + 1)
                quote_from, quote = paren + 1, size if stop is None else stop.start()
            if quote - paren > 201 or quote == size or lowered[quote] == "\n":
                continue
            if not budget.take():
                return  # (past the budget, calls are not read: the names' values still are)
            start = _name_start(lowered, m.start())
            qualified = ".".join(lowered[start : m.end()].split(".")[-2:]).lstrip("$-")
            callee = qualified.rpartition(".")[2]
            spec = CALLS.get(qualified) or CALLS.get(callee)
            # `with_basic_auth(url, user, password)`, Go's `SetBasicAuth(user, password)`: the last
            last = spec is None and callee.replace("_", "") in _BASIC_AUTH_CALLS
            if last:
                spec = (), True
            if spec is None:
                continue
            positions, strong = spec
            arguments = list(_arguments(text, paren, _LAST_OF if last else max(positions) + 1))
            if last:
                positions = (len(arguments) - 1,) if len(arguments) >= 2 else ()
            if len(arguments) == 1 and callee in ONE_ARGUMENT:
                positions = (0,)
            fewer = (
                strong
                and len(arguments) >= 2
                and min(positions, default=0) >= len(arguments)
                and not last
                and not _MORE_ARGUMENTS.match(text, arguments[-1][1])
            )
            if fewer:  # fewer arguments than its form's (`connect(user, password)`): the last, when it
                positions = (len(arguments) - 1,)  # reads as a password, not a name (`"client-2024"`)
            for i, (a, b) in enumerate(arguments):
                if i in positions and _PREFIX.match(text, a) is not None:
                    found = _literal(text, a, strong, budget, uuid=True)
                    if (
                        found is not None
                        and found[1] <= b
                        and (not fewer or _password_shaped(text[found[0] : found[1]]))
                    ):
                        yield "credential-argument", *found


def _password_shaped(value: str) -> bool:
    """Whether a value reads as a password by itself: chosen, generated, random, or of both cases,
    a digit and a symbol, with no `_` or `.` (`Bramble@Tide7x`; not `protocol-v2`, `mqtt-ws#v5`,
    `myadmin@mydb`, `utf8mb4_0900_ai_ci`)."""
    if chosen_password(value) or generated_password(value) or looks_random(value):
        return True
    return (
        not PASSWORD_SYMBOLS.isdisjoint(value)
        and "_" not in value
        and "." not in value
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and credential_value(value)
    )


# after a call's last positional argument: a keyword or unpacked one (`password=...`, `**config`)
_MORE_ARGUMENTS = re.compile(r"""["'`]?[ \t]*+,\s*+(?:\*\*|[A-Za-z_]\w*+[ \t]*+=(?!=))""")
_LAST_OF = 8  # the arguments read for a call whose last is the credential
# calls that give Basic auth its user and password, the password last (not `useBasicAuth(router,
# "/admin/*")`, which guards a route)
_BASIC_AUTH_CALLS = frozenset({"basicauth", "setbasicauth", "withbasicauth"})

_ARG_END = re.compile(r"""["'`()\[\]{},]""")


def _arguments(text: str, paren: int, count: int) -> Iterator[tuple[int, int]]:
    """The spans of the first `count` positional arguments of the call whose `(` is at `paren`
    (within 300 characters, brackets nested twice at most; a keyword argument ends them)."""
    pos, depth, start, limit = paren + 1, 0, paren + 1, min(len(text), paren + 300)
    while pos < limit and count > 0:
        m = _ARG_END.search(text, pos, limit)
        if m is None:
            return
        c = m[0]
        if c in "\"'`":
            close = text.find(c, m.end(), limit)
            if close == -1:
                return
            pos = close + 1
            continue
        if c in "([{":
            depth += 1
            if depth > 2:
                return  # calls in calls in calls: not a client's credentials
        elif c in ")]}" and depth:
            depth -= 1
        elif depth == 0:
            arg = text[start : m.start()]
            stripped = arg.strip()
            if re.match(r"[A-Za-z_]\w*[ \t]*=(?!=)|\*", stripped):
                return  # keyword arguments follow the positional ones
            lead = len(arg) - len(arg.lstrip())
            yield start + lead, start + lead + len(stripped)
            count -= 1
            if c == ")":
                return
            start = m.end()
        pos = m.end()


# ---- a token as a URL's user: https://<token>@host, https://<token>:x-oauth-basic@host ----------------

_URL_USER = re.compile(
    r"://(?P<user>[^\s:/?#@'\"<>\[\]()]{12,256})(?::[^\s/?#@'\"<>]{0,256})?@(?=[A-Za-z0-9\[])"
)


def url_users(text: str, lowered: str, at: Sequence[int], budget: Budget) -> Iterator[tuple[str, int, int]]:
    """Yield each URL user part that looks random (a token passed as the user), at the
    occurrences `at` of `://`."""
    for hit in at:
        m = _URL_USER.match(text, hit)
        if m is None:
            continue
        if not budget.take():  # the rest by one search
            for m in _URL_USER.finditer(text, hit):
                if _token_user(text, m, budget):
                    yield "url-token", m.start("user"), m.end("user")
            return
        if _token_user(text, m, budget):
            yield "url-token", m.start("user"), m.end("user")


def _token_user(text: str, m: re.Match[str], budget: Budget) -> bool:
    """Whether a URL's user (see _URL_USER) is a token: random, and not a Sentry DSN's public key."""
    return _random_user(m["user"], budget) and not _SENTRY_DSN.match(text, m.end())


# a Sentry DSN's host: its key (the URL's user) is public, sent by every browser that reports
_SENTRY_DSN = re.compile(r"o[0-9]+\.ingest\.(?:[a-z]{2}\.)?sentry\.io/")


def _random_user(user: str, budget: Budget) -> bool:
    """Whether a URL's user looks random (past the budget's judging: roughly random)."""
    return may_be_random(user) and (looks_random(user) if budget.judge(user) else roughly_random(user))


# ---- SQL: CREATE or ALTER USER ... IDENTIFIED BY '...' (MySQL, Oracle) ---------------------------------

_IDENTIFIED = re.compile(r"identified[ \t]+(?:with[ \t]+[\w'\"`]+[ \t]+)?by[ \t]+(?:password[ \t]+)?")


def sql_passwords(
    text: str, lowered: str, at: Sequence[int], budget: Budget
) -> Iterator[tuple[str, int, int]]:
    """Yield the password of each SQL statement that sets one without naming it (IDENTIFIED BY)."""
    for hit in at:
        m = _IDENTIFIED.match(lowered, hit)
        if m is None:
            continue
        if not budget.take():
            yield from _coarse(_COARSE_IDENTIFIED, text, lowered, hit, budget)
            return
        found = _literal(text, m.end(), True, budget)
        if found is None:  # Oracle's unquoted password, an identifier's characters with a digit or `#$`:
            # `IDENTIFIED BY Ledger_2031` (not prose's `identified by group_id`)
            bare = _SQL_BARE_PASSWORD.match(text, m.end())
            statement = _SQL_USER_STATEMENT.search(lowered, max(0, hit - 200), hit)
            if (
                bare is not None
                and statement is not None
                and not_example(bare[0])
                and any(c.isdigit() or c in "#$" for c in bare[0])
            ):
                found = bare.span()
        if found is not None:
            yield "password-assignment", *found


# a statement that sets a user's or a link's password (not prose's `each device is identified by ...`)
_SQL_USER_STATEMENT = re.compile(
    r"\b(?:create|alter)[ \t]++(?:user|role|login)\b[^;]*+\Z|\bconnect[ \t]++to[ \t]++\S++[ \t]++\Z"
)
# an unquoted password, to the statement's or line's end
_SQL_BARE_PASSWORD = re.compile(
    r"[A-Za-z][\w#$]{7,127}+(?=[ \t]*+(?:[;\r\n]|\Z"
    r"|(?i:default|temporary|quota|profile|password|account|using|replace|container)\b))"
)
_COARSE_IDENTIFIED = re.compile("(?P<name>(?P<word>" + _IDENTIFIED.pattern + "))(?P<op>)" + _COARSE_VALUE)


# ---- SQL rows: INSERT ... VALUES and COPY ... FROM stdin, by their column lists ---------------------


_HEX_LITERAL = re.compile(r"0[xX]([0-9a-fA-F]{16,512})")


def sql_rows(text: str, lowered: str, at: Sequence[int], budget: Budget) -> Iterator[tuple[str, int, int]]:
    """Yield the secrets of the credential columns of SQL's rows (`INSERT INTO accounts (email,
    api_secret) VALUES ('a@b.c', '...'), (...)`; a COPY dump's tab-separated lines), at the
    occurrences `at` of `insert` or `copy`: each value judged as a literal under its column's name."""
    reach, tables = 0, CreatedTables(text, lowered)
    for hit in at:
        if hit < reach or hit and lowered[hit - 1].isalnum():
            continue
        m = SQL_COLUMNS.match(lowered, hit)
        if m is None:
            continue
        names = tables.named(m, hit)
        wanted: dict[int, tuple[str, bool, bool]] = {}
        for i, name in enumerate(names):
            for word, strong in WORDS.items():
                if i not in wanted and word in name.lower() and credential_name(name, word):
                    wanted[i] = (name, strong, _uuid_counts(word, name))
        if not wanted or not budget.take():
            continue
        rows = copy_rows(text, m.end(), len(names)) if m["copy"] else insert_rows(text, m.end())
        for row in rows:
            if len(row) != len(names):
                break
            reach = row[-1][1]
            for i, (name, strong, uuid) in wanted.items():
                start, end = row[i]
                value = _HEX_LITERAL.fullmatch(text, start, end)
                decoded = (
                    as_text(bytes.fromhex(value[1])) if value is not None and len(value[1]) % 2 == 0 else None
                )
                if decoded is not None:  # mysqldump's --hex-blob: `0x3861...`, judged as the text it is
                    if _is_secret(decoded, strong, True, budget, uuid):
                        yield kind_of_name(name), start, end
                    continue
                found = _judged(text, start, end, strong, True, budget, uuid)
                if found is not None:
                    yield kind_of_name(name), *found


def digest_cells(text: str) -> list[tuple[int, int]]:
    """The spans of the values of SQL rows in a column whose name names a digest (`sha256`,
    `checksum`, `etag`; from the INSERT's column list or the table's CREATE TABLE) and that are
    written as one (see digest_shaped), in order: a digest a dump stores is public as it stands
    elsewhere; a salt or a signature's random text in such a column is not."""
    lowered = text.lower()
    spans: list[tuple[int, int]] = []
    tables = CreatedTables(text, lowered)
    for word in ("insert", "copy"):
        reach, hit = 0, lowered.find(word)
        while hit != -1:
            m = SQL_COLUMNS.match(lowered, hit) if hit >= reach else None
            if m is not None:
                names = tables.named(m, hit)
                wanted = [i for i, name in enumerate(names) if DIGEST_WORD.search(name)]
                rows = copy_rows(text, m.end(), len(names)) if m["copy"] else insert_rows(text, m.end())
                for row in rows if wanted else ():
                    if len(row) != len(names):
                        break
                    reach = row[-1][1]
                    spans.extend(row[i] for i in wanted if digest_shaped(text[row[i][0] : row[i][1]]))
            hit = lowered.find(word, max(hit + 1, reach))
    return sorted(spans)


# ---- a password after any command's flag that names one ----------------------------------------------

# a flag, then its value after a blank or `=`: `--db-password X`, `-deststorepass X`, `--client-secret=X`
_FLAG_VALUE = re.compile(
    r"""(?P<name>--?+[A-Za-z][\w.-]{0,48}+)(?:[ \t]++|=)(?P<q>["']?)"""
    r"""(?P<secret>[^\s"'`$%<>{}()\[\]|;&,\\-][^\s"'`$%<>{}()\[\]|;&,\\]{7,255}+)(?P=q)(?=[\s;|&)\\]|\Z)"""
)
_FLAG_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_BEFORE_FLAG = frozenset(" \t\n\"'=([,")
_FLAG_REACH = 48  # characters of a flag's name before its credential's word
# a password's noun at a name's end (`my password`, `DB_PASSWD`, `client secret`)
_PASSWORD_NOUN = r"password|passwd|passphrase|passcode|pwd|secret"
# a flag whose name ends in a password's word (`--db-password`, `-deststorepass`, `--client-secret`)
_FLAG_WORD_LAST = re.compile(
    rf"(?i)(?:{_PASSWORD_NOUN}|pass|psk|(?<![\w-])-?-auth)\Z"
)  # (`--auth`: espota's)
# a value that says where the password is, not what (openssl's `env:NAME`, `file:PATH`, `fd:N`)
_REFERENCE_VALUE = re.compile(r"(?i)(?:env|file|fd|pass|stdin)(?::|\Z)")


def flag_values(word: str) -> Callable[[str, str, Sequence[int], Budget], Iterator[tuple[str, int, int]]]:
    """The finder of the values of flags named by a password's `word` on any command line (a known
    command's own flags, `mysql -p`, are rag.secrets.finders' flag_passwords): a chosen value
    counts, as a command line writes it unquoted."""

    def find(text: str, lowered: str, at: Sequence[int], budget: Budget) -> Iterator[tuple[str, int, int]]:
        done = -1
        for hit in at:
            if hit < done:
                continue
            start = hit
            while start > 0 and hit - start < _FLAG_REACH and lowered[start - 1] in _FLAG_NAME_CHARACTERS:
                start -= 1
            dash = lowered.find("-", start, hit + 1)  # (the run back may take a word before the flag)
            if dash == -1 or dash > 0 and lowered[dash - 1] not in _BEFORE_FLAG:
                continue
            m = _FLAG_VALUE.match(text, dash)
            if m is None or m.end("name") <= hit or not credential_name(m["name"].lstrip("-"), word):
                continue
            done = m.end()
            if _FLAG_WORD_LAST.search(m["name"]) is None:
                continue  # the word names something else of the password (`--password-manager`, `-passin`)
            value = m["secret"]
            if value[:4].lower() in ("arn:", "urn:") or _REFERENCE_VALUE.match(value) or not budget.take():
                continue
            if credential_value(value) and not format_string(value):
                yield "command-line-password", m.start("secret"), m.end("secret")

    return find


# ---- a password's name, then its literal, whatever the punctuation between ---------------------------

# what may stand between a name and its value when no operator list names it: blanks and at most three
# runs of punctuation (`@password "X"`, `set password "X"`, `(def password "X")`, `<password>X<`,
# `-define(PASSWORD, "X")`, `fetch("DB_PASSWORD") { "X" }`, `password == "X"`), then a quoted literal;
# or blanks alone, then a bare value that ends its line (`ENV DB_PASSWORD X`, `db.password X`), or an
# XML element's text (`<password>X</password>`)
_BESIDE = re.compile(
    r"""["'`]?+(?P<glue>[ \t]*+(?:[)\]{}>,:=!?|&@.]{1,3}+[ \t]*+){0,3}+)"""
    r"""(?:(?P<q>["'`])(?P<quoted>[^\s"'`\\()]{8,128}+)(?P=q)|(?P<bare>[^\s"'`<>(){}\[\],;\\]{8,128}+)(?=<|[ \t]*+(?:\r?\n|\Z)))"""
)
# a name that ends in a password's noun (`DB_PASSWORD`, `smtp.pass`, `dbPass`; not `passing`, `in pass`)
_PASSWORD_LAST = re.compile(rf"(?i:{_PASSWORD_NOUN})\Z|[_.-](?i:pass)\Z|[a-z0-9]Pass\Z")
# a name a bare value may follow: a variable's or a key's, with a separator or in capitals (`ENV
# DB_PASSWORD X`, `db.password X`, `PASSWORD X`), not a word of prose or a command (`resetpassword X`)
_KEY_NAME = re.compile(r"[\w-]*[_.-][\w.-]*|[A-Z][A-Z0-9_]*")
_ARGUMENT_AFTER = re.compile(r"[)\]][^,]*+,")
# the operators the assignment rules judge with care (`password = None`, `password: str`): not glue
_OPERATOR_GLUE = frozenset({"=", ":", ":=", "=>", "?=", "||=", ":-"})


def beside_values(word: str) -> Callable[[str, str, Sequence[int], Budget], Iterator[tuple[str, int, int]]]:
    """The finder of the literal beside a name that holds a password's `word` when the syntax
    between them is no listed operator (see _BESIDE): a chosen value counts."""

    def find(text: str, lowered: str, at: Sequence[int], budget: Budget) -> Iterator[tuple[str, int, int]]:
        done = -1
        for hit in at:
            if hit < done:
                continue
            end = hit + len(word)
            while end < len(text) and end - hit < _FLAG_REACH and (text[end].isalnum() or text[end] in "_-"):
                end += 1
            start = _name_start(text, hit)
            m = _BESIDE.match(text, end)
            if m is None:
                continue
            glue = m["glue"].strip(" \t\"'`")
            element = glue == ">" and text[m.end() : m.end() + 1] == "<"  # (`<password>X</password>`)
            bare_stands = element or not m["glue"].strip(" \t") and text[m.end() : m.end() + 1] != "<"
            if glue in _OPERATOR_GLUE or m["bare"] is not None and not bare_stands:
                continue  # an operator other rules judge; a bare value after punctuation, but an element's text
            if not m["glue"] and m["q"] is None:
                continue  # (the name's own continuation)
            if _ARGUMENT_AFTER.search(m["glue"]):
                continue  # the next argument after a call or subscript that holds the name (`env["X"], "Y"`)
            if text[end : end + 1] in ("'", '"', "`") and text[start - 1 : start] == text[end] and not glue:
                continue  # literals side by side: a list of words (`[ "password" "tokenField" ]`)
            name = text[start:end].lstrip("$@-.")
            if (
                not _PASSWORD_LAST.search(name)
                or m["bare"] is not None
                and not (element or _KEY_NAME.fullmatch(name))
            ):
                continue  # (a bare value after a word of prose: `the vault password policy**`)
            if text[start - 1 : start] in ("'", '"', "`") and "," in glue:
                continue  # a quoted word among a list's items (`('https', 'svc', 'password', 'gw:8443')`)
            if not credential_name(name, word) or not budget.take():
                continue
            done = m.end()
            group = "quoted" if m["q"] is not None else "bare"
            value = m[group]
            if value[0] in "$%{<" or format_string(value) or CODE_NAME.fullmatch(value):
                continue
            if credential_value(value) and not _DESCRIBED.search(value):
                yield "password-assignment", m.start(group), m.end(group)

    return find


# ---- what a command's `login` is given: `wandb login <key>`, `vault login <token>` ----------------------

# a command line (maybe after a prompt): up to three words, `login`, its flags, then one bare value
_LOGIN_ARGUMENT = re.compile(
    r"""(?m)^[ \t]*+(?:[$>#][ \t]++)?(?:[\w.-]{1,40}+[ \t]++){1,3}?login(?:[ \t]++--?[\w-]{1,40}+(?:=[^\s'"]{0,80}+)?)*+"""
    r"""[ \t]++(?P<q>["']?)(?P<secret>[A-Za-z0-9_.+/=-]{20,256}+)(?P=q)(?=[ \t]*+(?:$|[;&|#\\]))"""
)
_LONG_HEX = re.compile(r"[0-9a-f]{32,}|[0-9A-F]{32,}")  # (a key of 16 bytes or more)


def login_arguments(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the value a command's `login` is given as it stands, when it looks generated (any hex of
    32 digits or more too, which elsewhere may be a commit's id): an API key or a token."""
    for m in _LOGIN_ARGUMENT.finditer(text):
        value = m["secret"]
        if _LONG_HEX.fullmatch(value) or may_be_random(value) and looks_random(value):
            yield "command-line-password", m.start("secret"), m.end("secret")


# ---- a password stated in prose: `my password is X`, `the passphrase for root was: "X"` ------------------------

_STATED_NAME = re.compile(rf"(?i)(?:{_PASSWORD_NOUN})\Z")
_CONDITION_BEFORE = re.compile(r"(?:\bif|\bwhile|\band|\bor|\bnot|\belif|\bassert)[ \t]++\Z")
_DESCRIBED = re.compile(r"(?i)-(?:[a-z]+ed|based)\Z")
_STATED = re.compile(
    r"""(?:[ \t]++(?:for|of)(?:[ \t]++[\w.@-]{1,40}+){1,3}?)?"""  # whose: `the password for root is X`
    r"""[ \t]++(?:is|was|are)(?:[ \t]++(?:now|still|set[ \t]++to))?(?:[ \t]*+:)?[ \t]++(?P<q>["'`]?)(?P<secret>[^\s"'`(\[][^\s"'`]{7,63}+)(?(q)(?P=q)|)"""
    r"""(?=[.,;:!?)]*+(?:\s|\Z))"""
)


def stated_values(word: str) -> Callable[[str, str, Sequence[int], Budget], Iterator[tuple[str, int, int]]]:
    """The finder of the values a sentence gives a password's `word` (a support ticket's "my
    password is X", a runbook's "the passphrase was: X"): a chosen value counts."""

    def find(text: str, lowered: str, at: Sequence[int], budget: Budget) -> Iterator[tuple[str, int, int]]:
        for hit in at:
            end = hit + len(word)
            while end < len(lowered) and end - hit < _FLAG_REACH and lowered[end].isalpha():
                end += 1  # (the word's whole: password, passphrase)
            start = hit
            while start > 0 and hit - start < _FLAG_REACH and lowered[start - 1].isalpha():
                start -= 1  # (bounded: a run of `passpass...` must not be read back to its start at each)
            name = text[start:end]
            if lowered[end : end + 1] not in (" ", "\t") or _STATED_NAME.search(name) is None:
                continue  # (a boarding pass, a compiler's second pass: not a password's word)
            if not credential_name(name, word) or _CONDITION_BEFORE.search(
                lowered, max(0, start - 16), start
            ):
                continue  # (`if secret is DEFAULT:`: a comparison in code)
            m = _STATED.match(text, end)
            if m is None or not budget.take():
                continue
            value = m["secret"].rstrip(".,;:!?)") if not m["q"] else m["secret"]
            if len(value) < 8 or _DESCRIBED.search(value) or CODE_NAME.fullmatch(value):
                continue  # how it is kept (`SHA256-hashed`, `AES-256-encrypted`), a name in code
            if not m["q"] and ("(" in value or ")" in value):
                continue  # a type or a call (`NVARCHAR(128)`)
            if credential_value(value) and not format_string(value):
                yield "password-assignment", m.start("secret"), m.start("secret") + len(value)

    return find
