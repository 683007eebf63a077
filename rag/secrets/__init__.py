"""Keep secrets out of the index: skip secret-bearing files, redact high-confidence secrets in text.

Redaction replaces each secret by `[REDACTED:<kind>]` and never changes the number of lines (a
multi-line match keeps its line breaks after the marker), so citations by line stay exact.

Tokens known by their prefix (`ghp_`, `pypi-AgE`, `xoxb-`, `sk-ant-`, ...) are redacted wherever they
stand, with no name beside them (see rag.secrets.tokens), and so is a secret passed right after its
key id (`Client("SK...", "<secret>")`, `Session("AKIA...", "<secret>")`). Credentials assigned to
names (`DB_PASSWORD=...`, `password: ...`, `"apiKey": "..."`, `auth_token = ...`, `db_password: str =
...`, `config["password"] = ...`, in any case, quoted or not) are redacted when the value is a
literal, not code: see rag.secrets.assignments. HTTP Basic and docker/npm `auth` values count when their base64 decodes to
`user:password`; base64 that decodes to a private key (a kubeconfig's `client-key-data`), or in a
Kubernetes Secret to `.env` lines or a credential, is redacted whole.

The rules also run over the text as its values read (see rag.secrets.decoded): the lines that hold
escapes decoded (a notebook's `"\\"password\\": \\"...\\"\\n"`), backslash-continued lines joined,
`NAME = ("part" "part")` and YAML `name: >` block scalars joined into one value, and a value on the
line below its name joined to it (`NAME = (` then `"value"`, `const NAME =` then `"value";`). A secret found
there is mapped back to its span in the text, so the redaction keeps the line breaks it covers.

Cost: each rule has a gate, a substring test or a literal-prefixed search (`"ghp_"`, `"://"`, ...),
or the lowered words it names (`pass`, `key`, `token`, ...), whose occurrences are found once per
text (str.find) and shared by every rule and finder that names them; its full regex runs only when
the gate passes, at those occurrences or the lines that hold them when it can. Over the eight
corpora's 56 MB this costs 1.16 times what the form rules alone did (bench/secret_scan.py,
docs/security.md). No rule scans a span of text more than a bounded number of times: hostile
inputs (1 MB of BEGIN lines, of `mysql `) stay linear (bench/hostile.py --shapes).

False positives are kept low by shape checks: token bodies must mix upper case, lower case and
digits (so `sk-` in `task-runner-...` never counts), JWT headers must decode to `{"alg"...}`, key
blocks must hold base64, and one-character fills (`XXXX`, `0000`) are placeholders. A URL password
is not redacted when it is a template or environment reference (`${PASS}`, `{password}`, `%s`,
`<password>`, `$PASSWORD`), a mask (`***`), the user name again (`postgres:postgres`), or made of
stock example words (`password`, `pass123`, `foo:bar`, `changeme`); `git@host:org/repo` has no
`://` and is never a candidate. An assigned value needs 8+ characters, letters with a digit or a
symbol, no placeholder words (`your-api-key`, `xxxx`, `***`), must not be stock words in leetspeak
(`p@ssword`), a path, a file name or an identifier (`keys/server-2024.pem`, `secrets.v1.yaml`,
`tokenizer_v2`, `settings.SECRET_KEY`), and, unquoted, must not be code (`self.password`,
`getpass()`, `os.environ[...]`, `None`, `${VAR}`, `next_token_2`).

Behind these forms, secrets are found by what they are (see rag.secrets.nature): a value that
looks random (rag.secrets.randomness: length, classes of characters, entropy, as written and once
decoded) in a credential context, whatever the form around it: a name, header, flag, XML element,
table column, name/value pair, a well-known client call's credential argument, a URL's user part,
literals joined by `+`; and key material by its framing (BEGIN/END lines with any number of
dashes, age and BIP 32 keys).

And by default (see rag.secrets.anywhere), a value that looks generated is redacted wherever it
stands, with no context, unless its structure says it is public (a digest, a UUID, a public key, a
name made of words, a number).

The modules, by role: names (the files skipped whole), values (the shape of credential values and
names), randomness (what looks generated), tokens (tokens known by their prefix, key ids and their
secrets), assignments (credentials assigned to names), finders (secrets one regex cannot find),
nature (random values in credential contexts), anywhere (generated values anywhere), rules (every rule, in the order it runs), decoded
(the text as its values read), scan (running the rules, redacting what they find).
docs/security.md lists what is redacted and what is not.
"""

from __future__ import annotations

from rag.secrets.names import is_secret_file
from rag.secrets.scan import Finding, find_secrets, redact

__all__ = ["Finding", "find_secrets", "is_secret_file", "redact"]
