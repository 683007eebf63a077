"""Redact by default: a value that looks generated is a secret wherever it stands, in code, config,
docs, logs, data files or comments, unless its own shape or the syntax right before it says what
public thing it is.

The rules before this one find credentials by their context (a name, a header, a flag, a column)
and name their kind; this one needs no context. A token is a run of 16+ characters of the
alphabets secrets are written in (letters, digits, `+ / _ -`, base64's `=` padding), starting
with a letter or digit (12+ when it mixes both cases and digits and stands as a value of its own,
see _short_value; a dotted one whole when no part of it reads as a name, else its parts), judged by itself (rag.secrets.randomness.looks_random: length, classes
of characters and how often they switch, entropy for its alphabet, as written and once decoded);
when one of its parts between `-` and `_` is a word, its longest part is judged (`PuTTY-User-Key`
is a name, `sk_live_<random>` a key). A path's parts at either end that are words stay out of the
span (`services/<token>`). It is kept when it is public by its structure:

* a digest: hex shorter than 32 digits (an id, a short hash), a git object id (40), hex of a
  digest's length after a word that names one (`sha256`, `checksum`, `integrity`, `commit`,
  `etag`, ...), or a digest with its algorithm (`sha512-...`, `h1:...`: randomness.known_shape);
* a UUID (randomness.known_shape), a ULID (its first ten characters the time it was made);
* a label of a host name (`app.cluster-<id>.eu-west-1.rds.amazonaws.com`), asked of every resolver;
* base64 that decodes to a binary file of known format (an image, a font, an archive), or after a
  `data:...;base64,` header;
* a public key or certificate: the body of a `BEGIN CERTIFICATE` or `BEGIN PUBLIC KEY` block, an
  SSH public key (its base64 names its type), Stripe's publishable keys, age recipients, BIP 32
  extended public keys; and the ids a secret belongs to (an AWS access key id, a Twilio SID), which
  rag.secrets.tokens redacts the secret beside;
* a value whose enclosing word has a known shape: a password hash (`pbkdf2_sha256$...$...`),
  `sha256:<hex>`;
* an example marked as one (`EXAMPLE`, `xxxx`, `your_...`, `<...>`: randomness.looks_random);
* a name: 40% or more of it English words or the abbreviations code spells (the word list spelling
  correction ships), a constant's name (`U8TO64_LE_NOCASE`), a name declared or used as one
  (`struct X`, `.X`, `X(`), or named again in the text; a set of distinct letters;
* a number (`0x83126e978d4fdf3cULL`), a duration (`P3Y6M4DT12H30M5S`), a Go pseudo-version, a media
  type's suffix (`+zip`), hex in a URL's path (a gist, a commit).

Under a credential name none of these exceptions apply (but an SSH public key's, which no private
key shares): the rules before this one redact a random value there whatever its shape. Byte arrays
of 16 to 64 random bytes are key material too (key_bytes); quoted passwords that a manager
generates with symbols, or a person chooses (memorable words and a number, leetspeak, a word with a
symbol and a number), and app passwords are redacted wherever they stand.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import re
import string
from collections.abc import Iterator

from rag.secrets.decoded import SPELT_ESCAPE, unescape
from rag.secrets.randomness import CLASS_OF as _CLASS_OF
from rag.secrets.randomness import (
    MIN_LENGTH,
    as_text,
    ascending,
    decode,
    known_shape,
    looks_random,
    may_be_random,
    random_as_written,
    roughly_random,
)
from rag.secrets.tables import header_column, table_cells, table_row
from rag.secrets.tokens import PAIRED
from rag.secrets.values import (
    CASE_PARTS,
    PASSWORD_SYMBOLS,
    REPEATED,
    app_password,
    credential_value,
    example_jwt,
    not_example,
    varied,
)
from rag.words import english_words

DEFAULT_KIND = "random-value"  # a rule that names the kind by its context wins where both find one

# a token starts at a letter or digit (`-p` before a password, `/` before a path's part stay out)
# (and holds a digit or a capital, looked for in C: a snake_case name is no candidate)
# (and may hold dots: a password manager's `T7yc96ge.mlfjxF6VS3k` is one token, a dotted name its parts)
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?=[a-z+/_.-]*+[0-9A-Z])[A-Za-z0-9][A-Za-z0-9+/_.-]{11,}+={0,2}(?![A-Za-z0-9+/_=-])"
)
_UNDOTTED = re.compile(
    r"(?<![A-Za-z0-9])(?=[a-z+/_-]*+[0-9A-Z])[A-Za-z0-9][A-Za-z0-9+/_-]{15,}+={0,2}(?![A-Za-z0-9+/_=-])"
)
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
MIN_HEX = 32  # shorter hex is an id or a short hash (.NET's publicKeyToken, a logical id's suffix)
# the ids a secret belongs to, not secrets (the rules of rag.secrets.tokens redact the secret beside
# one), and keys that are public by design: Stripe's and Supabase's publishable keys and the ids of
# Stripe's objects (accounts, customers, events, charges, ...: its secrets are `sk_`, `rk_` and
# `whsec_`), Twilio's SIDs (its secrets have no prefix), Airtable's ids (its tokens are `pat`), age
# recipients, BIP 32 extended public keys, IPFS content ids (digests)
# keys a vendor names public by their prefix, made to be shipped inside a web page or an app:
# Stripe's (and Clerk's) publishable keys, Supabase's, Mapbox's public tokens (`pk.` then a JWT-like
# body; its secret ones are `sk.`), RevenueCat's SDK keys (`appl_`, `goog_`, `amzn_`)
PUBLISHABLE = re.compile(
    r"pk_(?:live|test)_[A-Za-z0-9]+|sb_publishable_[A-Za-z0-9_-]+|pk\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"
    r"|(?:appl|goog|amzn)_[A-Za-z0-9]{24,40}|phc_[A-Za-z0-9]{30,}"  # (PostHog's project key ships to browsers)
)
_PUBLIC_ID = re.compile(
    "|".join(p[2] for p in PAIRED)
    + "|"
    + PUBLISHABLE.pattern
    + r"|(?:AC|SK|PN|MG|CA|SM|MM|CH|RE|FW|IS|US|VA|WS|XR|KS|CF|QU|TR|WK|PK|CR|ZS)[0-9a-f]{32}"
    + r"|(?:app|tbl|fld|rec|viw|sel|usr|wsp|ent)[A-Za-z0-9]{14}"
    + r"|(?:acct|cus|evt|ch|pi|pm|py|po|tr|txn|re|in|ii|il|sub|si|price|prod|plan|seti|src|card|ba|cn|dp|du"
    + r"|ic|iauth|ipi|req|file|link|plink|cs_(?:live|test)|prc|we)_[A-Za-z0-9]{14,}"
    + r"|age1[02-9ac-hj-np-z]{58}|[xyztuv]pub[1-9A-HJ-NP-Za-km-z]{100,}"
    + r"|baf[a-z][a-z2-7]{50,}|Qm[1-9A-HJ-NP-Za-km-z]{44}"
    # a ULID: an id whose first ten characters are the time it was made (2016 to 2102), maybe after
    # its kind's prefix (`acc_01HQ...`; not a key's or a token's: `sk_`)
    + r"|(?:(?!(?:sk|rk|key|tok|token|secret|pat|api)_)[a-z]{2,8}_)?0[1-3][0-9A-HJKMNP-TV-Z]{24}"
)
# the labels after a label of a host name (`billing.cluster-<id>.eu-central-1.rds.amazonaws.com`):
# two or more, to a top-level domain of letters, not a call; what every resolver is asked
_HOST_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789.-"
_HOST_REST = re.compile(r"(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+\.[a-z]{2,24}(?![\w.(-])")
_PART = re.compile(r"[-_]")
_WORD = re.compile(r"[A-Za-z]*[a-z][A-Za-z]*")  # a part of letters only: a word, a name, PuTTY
# the text around a token up to blanks, quotes or brackets: `pbkdf2_sha256$...$<token>` is one hash
_ENCLOSING = re.compile(r"""[^\s"'`<>()\[\]{},;]*\Z""")
# the digests of no bytes, which code compares with (an unsigned payload's SHA-256, an empty file's)
_EMPTY_DIGESTS = frozenset(
    hashlib.new(name, b"").hexdigest() for name in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")
)
_DIGEST_LENGTHS = frozenset({32, 40, 56, 64, 96, 128})  # md5, sha1, sha224, sha256, sha384, sha512
# a word that says the hex after it is a digest or an object id, within the same line
DIGEST_WORD = re.compile(
    # (`sha` alone as a word or a name's part: `fileSha`, `SHA_VALUE`; not `Shared`, `SHADOW`)
    r"(?i)(?:sha[-_]?(?:1|224|256|384|512)|sha(?-i:(?=[^A-Za-z]|\Z|[A-Z][a-z]))"
    r"|md5|blake2?b?|hash|digest|checksum|integrity|\bsum|"
    r"etag|commit|\brev(?:ision)?\b|\boid\b|fingerprint|crc|\bobject|\btree\b|parent|"
    r"\bref\b|\bhead\b|sha1sum|sha256sum|signature|spki|\b(?:tlsa|sshfp|cds|fp)\b)"
)
_CHECKSUM_LINE = re.compile(
    r"(?:  | \*)[\w./${}-]{1,255}"
)  # `sha256sum`'s output: two blanks (or ` *`), a file
_BASE64_DIGEST = re.compile(r"[A-Za-z0-9+/]{21,86}={0,2}")
_DIGEST_LOOKBACK = 80  # characters before a hex value, on its line, where a digest's word counts
_DATA_URI = re.compile(r"(?i);base64,\Z")
_ENTITY_TAG = re.compile(r"""(?i)\b(?:etag|if-none-match|if-match)["']?[ \t]*+[:=][ \t]*+(?:W/)?["']?\Z""")
# the ciphertext of a value encrypted for the repository: sops' `ENC[AES256_GCM,data:<base64>,iv:...,
# tag:...]`, Vault's transit `vault:v1:<base64>` (what decrypts it is elsewhere)
_CIPHERTEXT_LEAD = re.compile(r"(?:ENC\[[A-Z0-9_]+,data:|,iv:|,tag:|\bvault:v[0-9]+:)\Z")
_PLIST_KEY = re.compile(r"<key>(?P<name>[^<>]{1,64})</key>\s*+<string>\Z")
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?P<label>CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|PGP PUBLIC KEY BLOCK|X509 CRL|"
    r"CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST|TRUSTED CERTIFICATE|DH PARAMETERS|EC PARAMETERS|"
    r"PGP MESSAGE|PGP SIGNATURE)-----"  # (a message encrypted to a key, as a Salt pillar keeps one: ciphertext)
)
_SIGNED_MAIL = re.compile(r"(?i)(?:dkim|arc-message)-signature:[^\n]*+(?:\r?\n[ \t][^\n]*+)*+\Z")
_VERSIONED = re.compile(r"(?:vault:)?v[0-9]{1,2}:(?:[A-Za-z0-9+/]{8,64}={0,2}:)?\Z")  # and a nonce (Pulumi's)
_TEST_VECTOR_WORDS = ("rfc", "vector", "answer", "kat")
# a published test vector's mark, in prose or a name: `RFC 8032`, `rfc7515Key`, `test vector`, `known-answer`
TEST_VECTOR = re.compile(  # (in a CamelCase or joined name too: `hmacMatchesRfc4231Case1`, `Ed25519RFC8032`)
    r"(?:(?<![A-Za-z])|(?<=[a-z0-9]))(?:RFC|Rfc|rfc)[ _-]?[0-9]{3,5}"
    r"|(?i:test[ _-]?vectors?(?:\b|_)|known[ _-]?answer|(?:\b|_)kat(?:\b|_))"
)
_HASHED_HOST = re.compile(r"\|1\|[A-Za-z0-9+/]{27}=\|[A-Za-z0-9+/]{27}=")
_PUBLIC_KEY_LEAD = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)[ \t]+(?:[0-9]{3,5}[ \t]+)?\Z"
)  # (and its size before a fingerprint: WinSCP's and PuTTY's `ssh-ed25519 255 <base64>`)
# a call that makes a public key of its argument, maybe through a decoding call (`hex.DecodeString(`)
_PUBLIC_KEY_CALL = re.compile(
    r"(?i)(?:pub(?:lic)?[-_]?key|verif(?:y|ying|ication)[-_]?key)[\w.]{0,30}+\([ \t]*+"
    r"(?:[A-Za-z_][\w.]{0,30}+\([ \t]*+)?(?:[bru]?[\"'`])?\Z"
)
# the first bytes of binary files that base64 carries in code and docs
_MAGIC = (
    b"\x89PNG",
    b"GIF8",
    b"\xff\xd8\xff",  # JPEG
    b"RIFF",  # WebP, WAV
    b"wOFF",
    b"wOF2",
    b"\x00\x01\x00\x00",  # TrueType
    b"OTTO",
    b"%PDF",
    b"\x1f\x8b",  # gzip
    b"PK\x03\x04",
    b"\x00asm",
    b"\x00\x00\x01\x00",  # ICO
    b"BM",
    b"<svg",
    b"<?xml",
)


# tokens judged whole per million characters (about a millisecond each); past them a token that the
# tests at C speed call random is redacted unless its own shape is public (a file denser in random
# tokens than any real one may lose look-alikes, never secrets). The most a real file reached, of
# the eight corpora and the 43 code-search repositories, is 3,325 (a uv.lock)
TOKENS_PER_MB = 4096


def random_tokens(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the span of each token of `text` that looks generated and is not public by its structure."""
    scan = _Scan(text)
    examples = _example_jwts(text)
    for value, start, parts in _tokens(text):
        if examples and any(b <= start < e for b, e in examples):
            continue  # jwt.io's sample token, whole and in its parts
        spans = list(scan.judge(value, start))
        for part, at in parts if not spans else ():
            spans.extend(scan.judge(part, at))  # a dotted token not generated whole: its parts
        for span in spans:
            yield DEFAULT_KIND, *span


_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{10,}+\.(?P<payload>[A-Za-z0-9_-]{10,}+)\.[A-Za-z0-9_-]{16,}+")


def _example_jwts(text: str) -> list[tuple[int, int]]:
    """The spans of jwt.io's sample token (see example_jwt) in `text`, found by its claims' start
    as base64 writes them (`{"sub":"1234567890"` is `eyJzdWIiOiIxMjM0NTY3ODkwIi...`)."""
    if "eyJzdWIiOiIxMjM0NTY3ODkwIi" not in text:
        return []
    return [m.span() for m in _JWT.finditer(text) if example_jwt(m[0])]


class _Scan:
    """The judge of one text's tokens, with what it keeps between them: the tokens it may still
    judge whole (TOKENS_PER_MB) and the text's public blocks, found once needed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.budget = TOKENS_PER_MB * max(1, len(text) // 1_000_000)
        self.blocks: list[tuple[int, int]] | None = None
        self.lowered: str | None = None
        self.variants: dict[str, bool] = {}

    def judge(self, value: str, start: int) -> Iterator[tuple[int, int]]:
        """The spans of the token `value` at `start` that look generated."""
        text = self.text
        if not may_be_random(value) or _NUMBER.fullmatch(value) or _DURATION.fullmatch(value):
            return
        if _CONSTANT.fullmatch(value) or _PSEUDO_VERSION.search(value) or _MEDIA_SUFFIX.search(value):
            return
        if value.isalpha() and len(set(value)) == len(value):
            return  # a set of letters: format or option letters (cdiouxXfFeEgGaA)
        if "-" in value and _product_code(value):
            return  # a product's or a part's code: short groups of capitals or digits (`E-2R-QXPLAN-25-04-01-D`)
        if not roughly_random(value.rstrip("=")) and not _encoded(value):
            return  # (the cheap test first: most tokens are names)
        if len(value.rstrip("=")) < 16 and not _short_value(text, value, start):
            return
        self.budget -= 1
        if self.budget < 0:
            if not _public_shape(text, start, value):
                yield start, start + len(value)
            return
        if _public(text, start, start + len(value), value):
            return  # (a public key's base64 may hold a part that reads as a word)
        pieces = [(value, start)]
        if "/" in value and _a_path(value):
            pieces = _path_parts(value, start)  # a path or a URL's: each part is judged alone
        for piece, at in pieces:
            if not _generated(text, piece, at) or _code_name(text, at, piece) or self.variant(piece, at):
                continue
            if self.blocks is None:
                self.blocks = _public_blocks(text)
            if not any(b <= at < e for b, e in self.blocks) and not _public_header(text, at):
                yield _trimmed(piece, at)

    def variant(self, value: str, start: int) -> bool:
        """Whether the token `value` at `start` is written elsewhere in another form (see variant):
        asked once per distinct token, whose copies all have the same other forms."""
        if value in self.variants:
            return self.variants[value]
        if self.lowered is None:
            self.lowered = self.text.translate(_ASCII_LOWER)
        found = self.variants[value] = variant(self.text, self.lowered, value, start)
        return found


def variant(text: str, lowered: str, value: str, start: int) -> bool:
    """Whether the token `value` at `start` of `text` (`lowered`: its ASCII letters in lower case) is written
    elsewhere in another form: in another case (`SecP384r1MLKEM768` beside
    `WOLFSSL_SECP384R1MLKEM768`); with a few characters added, removed or changed (a test's valid
    id and its invalid neighbours: `cjld2cyuq0000t3rmniod1foy`, `1cjld2cyuq0000t3rmniod1foyZZZ`,
    `tz4a98xxat96iws-zmbrgj3a`); as its letters and digits alone (`Hello@World#123` and the
    `helloworld123` a test expects); or whether two of its parts begin alike
    (`ihi0053c/IHI0053C_acle`, `kint64max/kint64min`). Such a token is a name or a test's input:
    a generated secret is written the same way each time, and no part of it repeats another."""
    parts = [p.lower() for p in _VARIANT_PARTS.split(value) if len(p) >= _VARIANT_CORE]
    if len({p[:_VARIANT_CORE] for p in parts}) < len(parts):
        return True
    if _stripped_elsewhere(lowered, value, start):
        return True
    n, own = len(value), value.lower()
    trim = min(4, (n - 12) // 2)
    if trim > 0:  # characters added or removed at either end: the rest is found elsewhere
        core = own[trim : n - trim]
        at = lowered.find(core)
        while at != -1:
            if at != start + trim and not _same_token(text, at - trim, value):
                return True
            at = lowered.find(core, at + 1)
    for offset in (0, n // 2):  # a few characters changed: one half is found, the rest nearly
        half = own[offset : offset + n // 2]
        at = lowered.find(half)
        while at != -1:
            begin = at - offset
            if begin != start and begin >= 0:
                window = lowered[begin : begin + n]
                changed = sum(a != b for a, b in zip(window, own)) + n - len(window)
                if 0 < changed <= _VARIANT_CHANGES or changed == 0 and not _same_token(text, begin, value):
                    return True
            at = lowered.find(half, at + 1)
    return False


def _same_token(text: str, at: int, value: str) -> bool:
    """Whether `value` is written at `at` as it is, a token of its own (not part of a longer one)."""
    end = at + len(value)
    if at < 0 or text[at:end] != value:
        return False
    return not (at > 0 and text[at - 1].isalnum() or end < len(text) and text[end].isalnum())


# ASCII letters to lower case, every other character kept: a text's positions stay its own (`str.lower`
# writes `İ` as two characters, and a token after one would be found where it is not)
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_VARIANT_PARTS = re.compile(r"[/._-]")
_VARIANT_CORE = 6  # characters two parts of a token share at their start, when one names the other
_VARIANT_CHANGES = 3  # characters a test changes in a valid value to make an invalid one

_NAME_PART = re.compile(r"[a-z]{2,4}|[A-Za-z]*[a-z][A-Za-z]*")  # an extension, a domain, a word


def _tokens(text: str) -> Iterator[tuple[str, int, tuple[tuple[str, int], ...]]]:
    """Each token of `text` with where it starts, and the parts to judge if it is not generated
    whole. A dotted token is whole when it is mostly letters of both cases, with a digit, and none
    of its parts reads as a name (a word, CamelCase words, an extension, a domain:
    `cdn.example.com`, `Foo2Bar.min.js`, `CoflatMap.ToCoflatMapOps`) or is encoded text (a JWT's);
    else its parts are the tokens."""
    for match in _TOKEN.finditer(text):
        value, start = match[0], match.start()
        if "." not in value:
            if len(value) >= 16 or _three_classes(value):
                yield value, start, ()
            continue
        value = value.rstrip(".")  # a sentence's full stop
        if value.startswith("pk.eyJ") and PUBLISHABLE.fullmatch(value):
            continue  # a public token, its parts too (Mapbox's body reads as a JWT's)
        long_part = max(map(len, value.split("."))) >= 16  # (most are names: `self.assertEqual`)
        parts = tuple((p[0], start + p.start()) for p in _UNDOTTED.finditer(value)) if long_part else ()
        if _lettered(value) and not any(
            _name_part(p) or _encoded_part(p) for p in _DOTTED_PARTS.split(value)
        ):
            yield value, start, parts
        else:
            for part, at in parts:
                yield part, at, ()


_DOTTED_PARTS = re.compile(r"[./_-]")
_CODE_GROUP = re.compile(r"[A-Z]{1,6}|[0-9]{1,6}|[A-Z0-9]{1,2}")


def _product_code(value: str) -> bool:
    """Whether `value` is three or more short groups joined by `-`, each of capitals or of digits
    (or of two characters at most): a product's or a part's code, not a key."""
    parts = value.split("-")
    return len(parts) >= 3 and all(_CODE_GROUP.fullmatch(part) for part in parts)


def _encoded_part(part: str) -> bool:
    """Whether a part of a dotted token is encoded text, judged alone (a JWT's header, `eyJ...`)."""
    return len(part) >= 12 and decode(part) is not None


def _name_part(part: str) -> bool:
    """Whether a part of a dotted token reads as a name: an extension or a domain (`js`, `com`),
    words (`Exporter`, `ToMapOps`, `Set3D`), CamelCase words (`CoflatMap`)."""
    if len(part) >= 3 and _words(part):
        return True  # (`Set3D`, `MyEnum`)
    if len(part) < 2 or not _NAME_PART.fullmatch(part):
        return False
    return len(part) <= 4 and part.islower() or len(CASE_PARTS.findall(part)) >= 2 and _word_case(part)


def _lettered(value: str) -> bool:
    """Whether a dotted token is mostly letters of both cases, with a digit, as a password is
    (numbers with a decimal point, as in an SVG path's `351.48C346.12`, are not; nor are names in
    code, `self.assertEqual`)."""
    if len(value) < 16:
        return False
    kinds = value.translate(_CLASS_OF)  # each letter or digit as its class, at C speed
    upper, lower = kinds.count("2"), kinds.count("1")
    return "0" in kinds and min(upper, lower) >= 2 and 2 * (upper + lower) >= len(kinds)


# a quoted literal of 14 to 64 characters with a symbol a password manager adds (`!#%^&*~`) and
# no blank, bracket, slash, quote, `$`, `=` or `:` (a regex, a path, a URL, a format, a template)
_SYMBOLED = re.compile(
    r"""(?P<q>["'`])(?P<value>(?=[A-Za-z0-9@.+_-]*[!#%^&*~])[A-Za-z0-9!#%^&*~@.+_-]{14,64})(?P=q)"""
)


_GLOB_OR_ESCAPE = re.compile(r"\*\.|\.\*|%[0-9A-Fa-f]{2}")


# literals joined by `+` (a line break maybe after it): a value split to hide it, judged whole
_PLUS_JOINED = re.compile(
    r"""(?P<q>["'])[A-Za-z0-9+/=_-]{4,64}+(?P=q)(?:[ \t]*+(?:\r?\n[ \t]*+)?\+[ \t]*+(?:\r?\n[ \t]*+)?(?P=q)[A-Za-z0-9+/=_-]{4,64}+(?P=q)){1,7}+"""
)
_PIECE = re.compile(r"""["']([A-Za-z0-9+/=_-]*)["']""")
_MIN_JOINED_LITERALS = 20  # characters joined literals need to be judged


def joined_literals(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the span of each run of literals joined by `+` whose joined value looks generated
    (`"2mMYzlmWPPT" + "bCXNWAvJWrI" + "JFztIYic34"`), whatever name it has, unless what stands
    before it says it is public (a public key's name, a marked test vector, a JWK's public member)."""
    for m in _PLUS_JOINED.finditer(text):
        if _joined_generated(text, m):
            yield DEFAULT_KIND, m.start() + 1, m.end() - 1


def _joined_generated(text: str, m: re.Match[str]) -> bool:
    """Whether the literals of `m` (from its first quote to its last) make a value that looks
    generated and is not public by what stands before it."""
    value = "".join(_PIECE.findall(m[0]))
    return (
        len(value) >= _MIN_JOINED_LITERALS
        # (not a long digest split over lines: `"38b060a7..." +` then `"274edebf..."`)
        and not _HEX.fullmatch(value)
        and not _words(value)
        and looks_random(value)
        and not _public(text, m.start() + 1, m.start() + 1 + len(value), value)
    )


# a list of 2 to 8 literals, and a join with nothing between them beside it: `"".join(["..", ".."])`,
# `["..", ".."].join('')`, `-join @('..', '..')`, `String.join("", "..", "..")`. rag.secrets.decoded
# reads these in the text as written; this finds them where its view unescapes them too (a script
# in a JSON string, a notebook's source: `"k = \"\".join([\"..\", \"..\"])"`)
_LITERAL_LIST = re.compile(
    r"""(?P<q>["'])[A-Za-z0-9+/=_-]{4,64}+(?P=q)(?:[ \t]*+,[ \t]*+(?:\r?\n[ \t]*+)?@?(?P=q)[A-Za-z0-9+/=_-]{4,64}+(?P=q)){1,7}+"""
)
# ... or a format of nothing but placeholders before them: `stringWithFormat:@"%@%@%@", @"..", @".."`,
# `String.format("%s%s", "..", "..")`, `"%s%s" % ("..", "..")`, `"{}{}".format("..", "..")`
_JOIN_BEFORE = re.compile(
    r"""(?:(?:""|'')\.join\([ \t]*+[\[(]|-join[ \t]*+@?\(|[Ss]tring\.[Jj]oin\([ \t]*+(?:""|'')[ \t]*+,"""
    r"""|@?(?P<fq>["'])(?:%[@sv]|\{\}){2,8}+(?P=fq)(?:[ \t]*+,|[ \t]*+%[ \t]*+\(|\.format\())[ \t]*+@?\Z"""
)
_JOIN_BY_NAME = re.compile(r"""(?:""|'')\.join\([ \t]*+(?P<name>[A-Za-z_]\w{0,63}+)[ \t]*+\)""")
_LIST_NAME = re.compile(r"(?P<name>[A-Za-z_]\w{0,63}+)[ \t]*+=[ \t]*+[\[(][ \t]*+\Z")
_JOIN_AFTER = re.compile(r"""[ \t]*+[\])][ \t]*+\.join(?:ed)?\([ \t]*+(?:""|''|``)?[ \t]*+\)""")


def listed_literals(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the span of each list of literals that a join makes one value of (there, or by the
    name the list is assigned to: `_K = ["..", ".."]` then `"".join(_K)`), when that value looks
    generated (judged as joined_literals judges literals joined by `+`; hex of a key's length too,
    which a join, unlike a digest split over lines, makes on purpose)."""
    joined_names: set[str] | None = None  # the names given to a join (`"".join(_K)`), found once
    for m in _LITERAL_LIST.finditer(text):
        joined = _JOIN_BEFORE.search(text, max(0, m.start() - 40), m.start()) or _JOIN_AFTER.match(
            text, m.end()
        )
        if joined is None:
            named = _LIST_NAME.search(text, max(0, m.start() - 80), m.start())
            if named is None:
                continue
            if joined_names is None:
                joined_names = {j["name"] for j in _JOIN_BY_NAME.finditer(text)}
            if named["name"] not in joined_names:
                continue
        value = "".join(_PIECE.findall(m[0]))
        if (
            _joined_generated(text, m)
            or _HEX.fullmatch(value)
            and len(value) in (32, 40, 48, 64)
            and varied(value)
        ):
            yield DEFAULT_KIND, m.start() + 1, m.end() - 1


def joins(text: str) -> bool:
    """The gate of listed_literals: a join's name, or a format's (`format`, `printf`, `"%s%s" % (..)`)."""
    return (
        "join" in text
        or "Join" in text
        or "ormat" in text
        or "printf" in text
        or '" % (' in text
        or "' % (" in text
    )


def plus_joined(text: str) -> bool:
    """The gate of joined_literals: a quote, blanks and `+`."""
    return _PLUS_GATE.search(text) is not None


_PLUS_GATE = re.compile(r"""["'][ \t]*(?:\r?\n[ \t]*)?\+""")  # `+` ending a line or leading the next


def random_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each quoted literal that reads as a generated password with symbols
    (`"ZheCWvmS^m4HPj~OjBVC"`): upper and lower case and digits, random as written (see _SYMBOLED)."""
    for match in _SYMBOLED.finditer(text):
        value = match["value"]
        if _GLOB_OR_ESCAPE.search(value):
            continue  # a glob (`Microsoft.VC14*.CRT`) or URL escapes (`q%3Dr...`)
        if not _three_classes(value):
            continue  # a generator mixes upper and lower case, and digits
        letters = re.sub(r"[^A-Za-z0-9]+", "", value)  # and as what its letters and digits encode
        if len(letters) >= 12 and not _words(letters) and looks_random(value) and looks_random(letters):
            yield DEFAULT_KIND, match.start("value"), match.end("value")


# a memorable password as managers generate them and people choose them, quoted: 2 to 6 words of
# 3-12 letters (capitalised or lower case) joined by `-` or a symbol, and a number of 2-4 digits
# (`"Lantern-Ferry-Nightshift-09"`, `'Ledger#Squall-58'`, `"Thistle&Quarry-2029"`)
_WORD_PASSWORD = r"(?:[A-Z][a-z]{2,11}|[a-z]{3,12})"
_MEMORABLE = re.compile(
    rf"""(?P<q>["'`])(?P<value>{_WORD_PASSWORD}(?:[-!#&*~%^$]{_WORD_PASSWORD}){{1,5}}"""
    r"""[-!#&*~%^$]?[0-9]{2,4}[!#&*~%^$]?)(?:\\[rn])?(?P=q)"""  # (expect's `send "...\r"`)
)

_WORD_PARTS = re.compile(r"[A-Za-z]+")
_YEAR = re.compile(r"-(?:199[0-9]|20[0-3][0-9])\Z")


def memorable_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each quoted memorable password (see _MEMORABLE): joined by a symbol (`!#&*~%^$`), or by
    `-` between capitalised words (lower-case words, a `-` and a number name packages: `vue-router-42`)."""
    for match in _MEMORABLE.finditer(text):
        value = match["value"]
        words = _WORD_PARTS.findall(value)
        symbol = any(c in value for c in "!#&*~%^$")
        if not symbol and _YEAR.search(value):
            continue  # a name and its year: `Windows-Server-2019`
        if (symbol or sum(word[0].isupper() for word in words) >= 2) and not_example(value):
            yield DEFAULT_KIND, match.start("value"), match.end("value")


# a password a person chose, quoted whole or after a user's name and `:` (`"svc:Cl0ver-Ley-Silage"`):
# 8 to 40 characters, no blank (a passphrase of plain words is a sentence, and stays), `=` inside only
_CHOSEN = re.compile(
    r"""(?P<q>["'`])(?:[A-Za-z0-9._-]{1,32}:)?(?P<value>[A-Za-z0-9!@#$%^&*~?+_-][A-Za-z0-9!@#$%^&*~?+=_-]{6,38}[A-Za-z0-9!@#$%^&*~?+_-])(?P=q)"""
)
# a letter beside a digit or a symbol: what a chosen password has and most literals do not
_CHOSEN_HINT = re.compile(r"[A-Za-z][0-9@$!#%^&*~?]|[0-9@$!#%^&*~?][A-Za-z]")
_CHOSEN_SYMBOLS = frozenset("!#%^&*~?")
# how leetspeak writes letters (`p0lytunn3l`: polytunnel; `Gr@ssl4nd`: grassland)
_LEET = {"0": "o", "1": "il", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "8": "b", "9": "g"}
_LETTER_SYMBOL_LETTER = re.compile(r"[A-Za-z][@$][A-Za-z]")
_PLAIN_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_MEMBER = re.compile(r"[A-Z][A-Za-z0-9]*+#[a-z][A-Za-z0-9]*+")
_CAPITALISED = re.compile(r"[A-Z][a-z]{3,}")  # a name, a place, a team: `Chicago74331!`, `Yankees2Jeter#`


def chosen_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each password a person chose (see chosen_password) or a manager generated (see
    generated_password): quoted, or bare with a symbol inside it (`curl -u ops:Sl0thBear!Staging`;
    generated, in a log line or a CSV cell: `joining with Fq#7~vTp8*lsHZ!Q2m`), a generated one
    with a run of 4+ letters and digits (`a*B1+c2-D3` is an expression) and not a piece of a longer
    run of symbols (see _in_encoded_run)."""
    lowered: str | None = None  # (the text's ASCII letters in lower case, made once a value needs it)
    if any(q in text for q in "\"'`"):
        for match in _CHOSEN.finditer(text):
            value = match["value"]
            if (
                _CHOSEN_HINT.search(value)
                and not _GLOB_OR_ESCAPE.search(value)
                and _quoted_password(value)
                and not _stripped_elsewhere(
                    lowered := lowered or text.translate(_ASCII_LOWER), value, match.start("value")
                )
            ):
                yield DEFAULT_KIND, match.start("value"), match.end("value")
    reach = 0
    hints = ((m.start(), m.end()) for m in _INNER_SYMBOL.finditer(text))
    for hint, hint_end in heapq.merge(hints, _closing_bangs(text)):
        if hint < reach:
            continue
        start, end = hint, hint_end
        while start > 0 and text[start - 1] in _BARE_CHARACTERS and hint - start < 40:
            start -= 1
        while (
            end < len(text)
            and end - start <= 40
            and (
                text[end] in _BARE_CHARACTERS
                or text[end] == "="
                and text[end + 1 : end + 2] in _BARE_CHARACTERS
            )
        ):
            end += 1  # (`=` inside, not before: `NAME=` starts no value)
        reach = end
        value = text[start:end]
        if (
            8 <= len(value) <= 40
            and (start == 0 or text[start - 1] in _BARE_BEFORE)
            and (end == len(text) or text[end] in _BARE_AFTER)
            and (
                chosen_password(value)
                and not any(c in value for c in "_*#=")  # a name, a product, a reference (`Type#X86`)
                or len(value) >= 14
                and _three_classes(value)
                and generated_password(value)
                and not _words(_NOT_ALNUM.sub("", value))  # (`1^kMaxRetryWindow`: words)
                and max(map(len, _NOT_ALNUM.split(value))) >= 4
                and not _in_encoded_run(text, start, end)
            )
            and not _stripped_elsewhere(lowered := lowered or text.translate(_ASCII_LOWER), value, start)
        ):
            yield DEFAULT_KIND, start, end


# a quoted literal that may be base64 (standard or URL-safe) or hex of a short password
_ENCODED_LITERAL = re.compile(r"""(?P<q>["'`])(?P<value>[A-Za-z0-9+/_-]{12,88}={0,2})(?P=q)""")
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]+")


# a literal spelt wholly in escapes of printable characters, eight or more (`"\x47\x78..."`,
# `'\u{47}\u{78}...'`, Perl's `"\x{47}\x{78}..."`): a text written so is hidden on purpose
_SPELT_LITERAL = re.compile(rf"""(?P<q>["'`])(?P<value>(?:{SPELT_ESCAPE}){{8,128}})(?P=q)""")


def spelt_literals(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each literal spelt wholly in escapes whose text is a credential's (see credential_value):
    a chosen password is redacted so wherever it stands, with no name beside it."""
    for match in _SPELT_LITERAL.finditer(text):
        value = unescape(match["value"])
        # (capitals alone: a format's magic bytes)
        if any(c.islower() for c in value) and credential_value(value) and not ascending(value):
            yield DEFAULT_KIND, match.start("value"), match.end("value")


def encoded_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each quoted literal that is base64 or hex of a password: one token of 8 to 64
    characters that is a credential's value (values.credential_value) with a symbol a password
    holds, or chosen (see chosen_password) or random (`"U2VvaHM2aGVpb2hhITIy"`, base64 of
    `Seohs6heioha!22`, given to a decoder). Test data encodes words and sentences
    (`SGVsbG8gV29ybGQh`: `Hello World!`)."""
    for match in _ENCODED_LITERAL.finditer(text):
        if not may_be_random(match["value"]):
            continue  # (the cheap test first: base64 and hex of text mix cases, or digits and letters)
        decoded = decode(match["value"])
        if decoded is None or not 8 <= len(decoded) <= 64 or not decoded.isprintable() or " " in decoded:
            continue
        if ascending(decoded) or REPEATED.search(decoded):
            continue  # a table of digits or letters in hex (`404142434445...`: `@ABCDE...`)
        if len(decoded) < 10 and _HEX_DIGITS.fullmatch(match["value"]):
            continue  # a number in hex that happens to be printable (`3423432448783446`: `4#C$Hx4F`)
        if credential_value(decoded) and (
            not PASSWORD_SYMBOLS.isdisjoint(decoded) or chosen_password(decoded) or looks_random(decoded)
        ):
            yield DEFAULT_KIND, match.start("value"), match.end("value")


def _stripped_elsewhere(lowered: str, value: str, start: int) -> bool:
    """Whether `value` (at `start`) has symbols and its letters and digits alone, in lower case,
    stand elsewhere in the text (`lowered`: its ASCII letters in lower case): the output a test expects of its input
    (`"Hello@World#123"` slugified to `"helloworld123"`)."""
    bare = "".join(filter(str.isalnum, value)).lower()
    if len(bare) < 8 or len(bare) == len(value):
        return False
    end = start + len(value)
    at = lowered.find(bare)
    while at != -1:
        if not start <= at < end:
            return True
        at = lowered.find(bare, at + 1)
    return False


# a bare password: a symbol inside it, between a letter or digit and a letter (what a name, an
# operator or markup rarely has), or ending it after a word and a number (`Scorpio1987!`, see
# _closing_bangs), and blanks, a `:` or `=` or brackets around it
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_INNER_SYMBOL = re.compile(r"[A-Za-z0-9][!@$%^&~?][A-Za-z]")


def _closing_bangs(text: str) -> Iterator[tuple[int, int]]:
    """The spans of a letter, 2 to 6 digits and a closing `!` (`Scorpio1987!`), or of a letter and a
    closing `!` in a token that holds a digit (`Harbor7Lumen!`), found from each `!` (a second
    alternative in _INNER_SYMBOL doubled its search)."""
    at = text.find("!")
    while at != -1:
        if at + 1 == len(text) or not (text[at + 1].isalnum() or text[at + 1] in "_!="):
            digits = at
            while digits > 0 and text[digits - 1].isdigit() and at - digits < 6:
                digits -= 1
            if at - digits >= 2 and digits > 0 and text[digits - 1].isalpha() and text[digits - 1].isascii():
                yield digits - 1, at + 1
            elif at > 0 and text[at - 1].isascii() and text[at - 1].isalpha():
                start = at  # a word, a digit inside the token, a closing `!`: `Harbor7Lumen!`
                while start > 0 and text[start - 1] in _BARE_CHARACTERS and at - start < 40:
                    start -= 1
                if any(c.isdigit() for c in text[start:at]):
                    yield at - 1, at + 1
        at = text.find("!", at + 1)


_BARE_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*~?+_-")
_BARE_BEFORE = frozenset(" \t\n:=,([{")
_BARE_AFTER = frozenset(" \t\r\n,;)]}")


def _in_encoded_run(text: str, start: int, end: int) -> bool:
    """Whether the bare token at start..end is a piece of a longer run of symbols and letters with
    no blank (base85 data, a minified expression): brackets, `;`, `<>` or `|` in the run beside it."""
    low, high = max(0, start - 80), min(len(text), end + 80)
    before = text[low:start]
    cut = max(before.rfind(c) for c in " \t\n\"'`,")
    after = text[end:high]
    stops = [i for i in (after.find(c) for c in " \t\n\"'`,") if i != -1]
    run = before[cut + 1 :] + after[: min(stops) if stops else len(after)]
    return any(c in run for c in "{}()<>|;[]")


def _quoted_password(value: str) -> bool:
    """Whether a quoted literal is a password a person chose (with no `=`: `a=b` is a setting) or a
    manager generated (not a query's `&`, a test's expected `==`, nor words around an `=`)."""
    if chosen_password(value) and "=" not in value:
        return True
    return (
        generated_password(value)
        and "&" not in value
        and "==" not in value  # a test's expected text (`"argv_zero==%r"`)
        and ("=" not in value or not _words(_NOT_ALNUM.sub("", value)))
    )


def generated_password(value: str) -> bool:
    """Whether `value` is a password a manager generated, symbols among its letters and digits
    (`xK9#mQ2$vL7@pR4!`): 12+ characters from a letter or digit on, a symbol inside, and random as
    written (looks_random); the tokens judged elsewhere hold no such symbol. A set of letters a
    format takes ends in its symbol (`"diouxXeEfFgGaAcs%"`)."""
    lead = 1 if value[:1] in _GENERATED_SYMBOLS else 0  # (a generator may start with a symbol: `*Tq7v...`)
    return (
        len(value) - lead >= 12
        and value[lead : lead + 1].isalnum()
        and not _GENERATED_SYMBOLS.isdisjoint(value[lead + 1 : -1])
        and looks_random(value)
    )


_GENERATED_SYMBOLS = frozenset("!#%&*?@^~")  # (not `$`: names in code and manglings hold one)


def chosen_password(value: str) -> bool:
    """Whether `value` reads as a password a person chose: a word of its own (a run of letters,
    digits, `@` and `$`, up to a capital) that is an English word of 4+ letters only once its
    leetspeak is read, a substitution inside it, with a symbol, a `@` or `$` among letters, a second
    such word or a word of 6+ letters (`p0lytunn3l!Gr0w`, `Gr@ssl4nd!Ley`, `Cl0ver-Ley-Silage`); or,
    from a letter on, a symbol (`!#%^&*~?`), a digit and an English or capitalised word of 4+
    letters, with a second one or a number of 2+ digits (`Winter2023!`, `Kiosk!Ward7`,
    `Chicago74331!`). Names in code spell their
    words plainly, and end in their numbers (`handler500`, `Extent3D`, `QueryClient#defaultQuery`)."""
    if keyboard_walk(value):
        return True
    if not value[0].isalnum() or not any(map(str.isalpha, value)) or not not_example(value):
        return False
    if "_" in value and _IDENTIFIER.fullmatch(value):
        return False  # a snake_case name (`gis_point3d_id`)
    if _MEMBER.fullmatch(value):
        return False  # a class's member, as docs name it (`Tuple2#swap`, `QueryClient#defaultQueryOptions`)
    symbol = any(c in _CHOSEN_SYMBOLS for c in value)
    leets = [word for part in _LEET_PART.findall(value) if (word := _leet_word(part.rstrip("0123456789")))]
    if leets and (
        symbol or _LETTER_SYMBOL_LETTER.search(value) or len(leets) >= 2 or any(len(w) >= 6 for w in leets)
    ):
        return True
    if not symbol or not value[0].isalpha() or not any(map(str.isdigit, value)):
        return False
    words = [
        part
        for part in _PLAIN_WORD.findall(value)
        if len(part) >= 4 and (_english(part.lower()) or _CAPITALISED.fullmatch(part))
    ]
    return len(words) >= 2 or bool(words) and _NUMBER_RUN.search(value) is not None


# the keys of a US keyboard by row and column, each shifted symbol read as its key
_KEY_ROWS = ("1234567890-=", "qwertyuiop[]", "asdfghjkl;'", "zxcvbnm,./")
_KEY_AT = {key: (row, col) for row, keys in enumerate(_KEY_ROWS) for col, key in enumerate(keys)}
_UNSHIFTED = str.maketrans('!@#$%^&*()_+{}:"<>?', "1234567890-=[];',./")


def keyboard_walk(value: str) -> bool:
    """Whether `value` is a walk over the keyboard, as people make passwords (`1qaz@WSX3edc$RFV`,
    `!QAZ2wsx`, `zaq12wsx`): 8+ keys, 6 of them distinct, each of three steps in four to a key next
    to the one before (across, down or diagonally; not the same key again), and two steps in five
    between rows (a layout's table, `qwertyuiop`, and a count, `123456789abcdef`, keep to a row),
    letters with digits or symbols."""
    if len(value) < 8 or not any(map(str.isalpha, value)) or value.isalpha():
        return False
    keys = [_KEY_AT.get(c) for c in value.lower().translate(_UNSHIFTED)]
    if None in keys or len(set(keys)) < 6:
        return False
    steps = [(a, b) for a, b in zip(keys, keys[1:]) if a is not None and b is not None]
    near = [(a, b) for a, b in steps if a != b and abs(a[0] - b[0]) <= 1 and abs(a[1] - b[1]) <= 1]
    rows = sum(1 for a, b in near if a[0] != b[0])
    return len(near) >= 0.75 * len(steps) and rows >= 0.4 * len(steps)


_LEET_PART = re.compile(r"[A-Za-z0-9@$][a-z0-9@$]*")  # a word of a password: up to the next capital
_NUMBER_RUN = re.compile(r"[0-9]{2}")


def _leet_word(part: str) -> str | None:
    """The English word of 4+ letters that `part` spells once its leetspeak is read, if it spells
    none as written and the substitution is not its first or last letter (`p0lytunn3l`, `Gr@ssl4nd`;
    not `handler5`)."""
    if len(part) < 4 or not any(c in _LEET for c in part[1:-1]) or not any(map(str.isalpha, part)):
        return None
    readings = [""]
    for c in part:
        letters = _LEET.get(c, c.lower())
        readings = [r + letter for r in readings for letter in letters][:8]
    return next((r for r in readings if _english(r)), None)


# Google's and Apple's app passwords, wherever they stand (`xcrun altool -p abqx-kmvr-zlot-weud`)
_APP_PASSWORD = re.compile(r"(?<![\w-])[a-z]{4}-[a-z]{4}-[a-z]{4}-[a-z]{4}(?![\w-])")
_APP_PASSWORD_MIDDLE = re.compile(r"-[a-z]{4}-[a-z]{4}-")  # led by a literal: searched at C speed


def app_passwords(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield each app password (four groups of four letters, three of them no English word)."""
    for middle in _APP_PASSWORD_MIDDLE.finditer(text):
        match = _APP_PASSWORD.match(text, middle.start() - 4)
        if (
            match is not None
            and app_password(match[0])
            and not_example(match[0])
            and not REPEATED.search(match[0])
        ):
            yield DEFAULT_KIND, match.start(), match.end()


# 0x83126e978d4fdf3cULL; a hex float's digits (0x1.1b3829ac28058p+3)
_NUMBER = re.compile(
    r"0[xX][0-9a-fA-F]+(?:[uUlLzZ]{1,3}|_?[ui](?:8|16|32|64|128|size))?|[0-9a-fA-F]+p[+-]?[0-9]+"
)
_CONSTANT = re.compile(
    r"_*[A-Z][A-Z0-9]*(?:_+[A-Z0-9]+)+_*"
)  # a constant's or a macro's name: U8TO64_LE_NOCASE
_PSEUDO_VERSION = re.compile(r"(?:^|-)[0-9]{14}-[0-9a-f]{12}$")  # Go's v0.0.0-20180306012644-bacd9c7ef1dd
_MEDIA_SUFFIX = re.compile(r"\+(?:json|xml|zip|gzip|cbor|ber|der|yaml|jwt|sqlite|wbxml|fastinfoset)\Z")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# the words and the punctuation code puts before a name it declares or uses
_DECLARES = re.compile(
    r"(?:\b(?:struct|enum|class|union|typedef|def|fn|func|type|interface|trait|impl|new|object|record|"
    r"module|namespace|using|import|extends|implements|define|ifdef|ifndef|defined)\s+|\.|->|::|#)\s*\Z"
)
# an ISO 8601 duration (P3Y6M4DT12H30M5S), a Go or Rust one (2562047788015215h30m8s)
_DURATION = re.compile(
    r"P(?:[0-9]+[YMWD])*(?:T(?:[0-9]+(?:\.[0-9]+)?[HMS])+)?|(?:[0-9]+(?:h|m|s|ms|us|ns))+[0-9]*"
)
_PATH_WORD = re.compile(r"(?=[A-Za-z]*[aeiouy])[A-Za-z]{3,}(?:[-_][A-Za-z0-9]+)*|v?[0-9]{1,4}")


def _a_path(value: str) -> bool:
    """Whether a token with `/` is a path (a part of it a word), not base64 (`+`, `=` padding)."""
    if "+" in value or value.endswith("="):
        return False
    return any(_PATH_WORD.fullmatch(part) or (part and _words(part)) for part in value.split("/"))


_VENDOR_DOT = re.compile(r"(?:^|[\s\"'`=:(\[,])[a-z]{2,4}\.\Z")  # `hvs.`, where code has `obj.`


def _code_name(text: str, start: int, value: str) -> bool:
    """Whether the token at `start` is a name in code: declared or used as one (after `struct`,
    `.`, `::`, `->`; before `(`, `<`, `[`, `::`), or named again elsewhere in the text with some
    word in it. A generated secret stands in a string, a value or a flag, once."""
    if not _IDENTIFIER.fullmatch(value):
        return False
    end = start + len(value)
    after = text[end : end + 2]
    if after[:1] in ("(", "[") or after == "::" or after[:1] == "<" and after != "</":
        return True  # (`</` closes an element: `<string>sk_...</string>`)
    lead = text[max(0, start - 25) : start]
    if _VENDOR_DOT.search(lead) and len(value) >= 20 and _three_classes(value):
        return False  # a vendor's prefix and a dot (Vault's `hvs.<token>`), not an attribute
    if _DECLARES.search(lead[:-1] if lead.endswith("$") else lead):  # core.$ZodCheckDef
        return True
    # (another copy looked for from this one: the nearest, not all of them, for a token written often)
    return _coverage(value) >= 0.25 and (text.find(value, end) != -1 or text.rfind(value, 0, start) != -1)


def _path_parts(value: str, start: int) -> list[tuple[str, int]]:
    """The parts of a path of 16 characters or more, each with where it starts."""
    out, at = [], start
    for part in value.split("/"):
        if len(part) >= 16:
            out.append((part, at))
        at += len(part) + 1
    return out


def _secret_lead(lead: str) -> bool:
    """Whether the parts before a token's hex name a token or a secret (Shopify's `shpat_`, `sk-`,
    `token_`; not `key`, which names cache and sort keys too), or are a vendor's short prefix joined
    by `_` (SonarQube's `squ_`; a file's name and its content hash are joined by `-` or `.`, and a
    word or a digest's name before `_` names what follows): the hex after them is no content hash."""
    parts = [part for part in _PART.split(lead.lower()) if part]
    if any(part.endswith(("pat", "tok", "token", "secret", "sk")) for part in parts):
        return True
    if len(parts) >= 2 and parts[-1] in ("live", "test"):
        return True  # a key's mode after its vendor's name: `shippo_live_`, `rk_test_`
    return _VENDOR_LEAD.fullmatch(lead) is not None and not (_a_word(lead[:-1]) or DIGEST_WORD.search(lead))


_VENDOR_LEAD = re.compile(r"[a-z]{2,6}_")
_PREFIXED_ID = re.compile(r"(?P<lead>[a-z]{1,8}-)[0-9a-f]{8,31}")


def _generated(text: str, value: str, start: int) -> bool:
    """Whether the token `value` at `start` looks generated and is not public by its structure."""
    if not may_be_random(value) or not roughly_random(value.rstrip("=")) and not _encoded(value):
        return False
    prefixed = _PREFIXED_ID.fullmatch(value)
    if prefixed is not None and not _secret_lead(prefixed["lead"]):
        return False  # a resource's id: a short prefix and hex shorter than a digest (`sg-0774c04d6527a082f`)
    judged = _judged(value)
    if (
        judged != value
        and _HEX.fullmatch(judged)
        and not _secret_lead(value[: value.rfind(judged)])
        and not any(
            len(part) >= 12 and random_as_written(part) for part in _PART.split(value) if part != judged
        )
    ):
        return False  # a name with its content's hash (app-eb0a5b9302e8d32828d8a73f137cc8f0.js), no random part besides
    own = sum(map(str.isalnum, judged))
    if own < (MIN_LENGTH if _three_classes(judged) else 16):
        return False  # aarch64-pc-win32: too few characters of its own to be a generated secret
    short = len(value.rstrip("=")) < 16  # (_Scan.judge has found it standing as a value: _short_value)
    if (short or own < 14) and (judged != value or not (short or _short_value(text, value, start))):
        return False
    return not (
        _public(text, start, start + len(value), value)
        or _words(judged)
        or _CAMEL_WORDS.fullmatch(judged)
        or not looks_random(judged)
    )


SHORT_RUN = 2.5  # a random value's runs of one class average under 2 characters


def _short_value(text: str, value: str, start: int) -> bool:
    """Whether a short token (`value` at `start`: under 16 characters, or under 14 letters and
    digits) stands as a value of its own: one piece, no `/` or `-` (`ec2/L-7FA2B9C0`), no base64
    padding (a short etag or id, `Kq8vZ2mWx4Ts=`), no base64 or hex of text, runs of one class as
    short as a random string's (not `Http2StreamPool`); and quoted, with no `:`, `=` or `(` after the
    quote (a key or a call: `"Rds2KmsKeyId": {`), or unquoted where a value stands: alone on its
    line (a password on stdin), or ending its line after `=`, `:` or a table's separator. An
    identifier in code (`export { uint8x16ToI32 }`, `enum { kAesGcm128V2 }`)
    stands in none of those places."""
    if (
        "/" in value
        or "-" in value
        or value.endswith("=")
        or _mean_run(value) >= SHORT_RUN
        or _short_text(value)
    ):
        return False
    end = start + len(value)
    if text.endswith(("&apos;", "&quot;"), 0, start) and text.startswith("&", end):
        return True  # quoted in XML: `&apos;..&apos;`
    if start and text[start - 1] in _QUOTES:
        if end >= len(text) or text[end] not in _QUOTES and text[end] != "\\":
            return False  # (a closing quote, or an escape: expect's `send "..\r"`)
        after = text[end + 1 : end + 5].lstrip(" \t")
        return not after.startswith((":", "(")) and not (after.startswith("=") and after[1:2] != "=")
    # (the line around it read _SHORT_REACH characters each way: a megabyte on one line stays linear)
    before = text[max(0, start - _SHORT_REACH) : start]
    before = before[before.rfind("\n") + 1 :].rstrip(" ")
    before = before if before.endswith("\t") and before.strip() else before.rstrip("\t")
    rest = text[end : end + _SHORT_REACH].partition("\n")[0].rstrip(" \t\r").lstrip(" ")
    if rest and rest[0] not in "#;,\t|":
        return False
    return (
        not before or before.endswith(("=", ":", ",", "\t", "|")) and not before.endswith(("::", "==", "!="))
    )


_QUOTES = frozenset("\"'`")
_SHORT_REACH = 256


def _short_text(value: str) -> bool:
    """Whether a short token is base64 or hex of printable text (`SGVsbG8gV29ybGQ`, `Hello World`
    without its padding): test data, judged no further."""
    if _HEX.fullmatch(value):
        return len(value) % 2 == 0 and as_text(bytes.fromhex(value)) is not None
    body = value.rstrip("=")
    if not _BASE64_BODY.fullmatch(body):
        return False
    whole = body[: len(body) // 4 * 4]  # (a prefix cut from longer base64: `LS0tLS1CRUdJT`)
    return as_text(base64.b64decode(whole.replace("-", "+").replace("_", "/"))) is not None


_BASE64_BODY = re.compile(r"[A-Za-z0-9+/_-]+")


def _mean_run(value: str) -> float:
    """The mean length of the runs of one class in `value` (a capitalised word is one run)."""
    parts = CASE_PARTS.findall(value)
    return sum(map(len, parts)) / max(1, len(parts))


def _three_classes(value: str) -> bool:
    """Whether `value` mixes upper and lower case (two of each) and digits, as a password manager's
    16 characters with a symbol or two do (`gMpoJueTK4u_DpTJ`)."""
    return min(sum(map(str.isupper, value)), sum(map(str.islower, value))) >= 2 and any(
        map(str.isdigit, value)
    )


_WORD_PART = re.compile(r"[a-z]+|[A-Z][a-z]+|v[0-9]+|[0-9]{1,4}")


def _trimmed(value: str, start: int) -> tuple[int, int]:
    """The span of `value` (at `start`) without the path's parts at either end that are words or
    versions (`services/`, `api/v1/`, `/download`): the random parts and what lies between them."""
    parts = value.split("/")
    first, last = 0, len(parts) - 1
    while first < last and _WORD_PART.fullmatch(parts[first]):
        first += 1
    while last > first and _WORD_PART.fullmatch(parts[last]):
        last -= 1
    lead = sum(len(p) + 1 for p in parts[:first])
    trail = sum(len(p) + 1 for p in parts[last + 1 :])
    return start + lead, start + len(value) - trail


# a byte: hex, Ada's based literal (`16#FC#`; Erlang's `16#FC`) or a small number, maybe cast (`(byte) 0x22`) or typed
# by a suffix (Scala's `0x49.toByte`, Kotlin's `.toByte()`, Fortran's `12_int8`, Rust's `0x1fu8`)
_BYTE = (
    r"(?:\((?:unsigned[ \t]+char|u?int8_t|s?byte|u?char|u8|i8)\)[ \t]*+)?"
    r"(?:0[xX][0-9a-fA-F]{1,2}|16#[0-9a-fA-F]{1,2}#?|-?[0-9]{1,3})"
    r"(?:\.toU?Byte(?:\(\))?|_u?int8|[ui]8)?"
)
_BYTE_VALUE = re.compile(r"0[xX]([0-9a-fA-F]{1,2})|16#([0-9a-fA-F]{1,2})|(-?[0-9]{1,3})")
_BYTE_GAP = r"[ \t\r\n]*+(?:&[ \t]*+\r?\n[ \t]*+)?"  # blanks, and Fortran's `&` before a line break
# a literal array of 16 to 64 bytes (a key's or a seed's length): `[]byte{0x1f, ...}`, `new byte[] {-12, ...}`,
# Haskell's leading commas, Fortran's `(/ ... /)`, Erlang's and Elixir's binaries `<<...>>`
# the name an array is declared or assigned to, right before it: `uint8_t NAME[32] = `, `NAME := []byte`
_ARRAY_NAME = re.compile(
    r"(?P<name>[A-Za-z_]\w{0,63}+)[ \t]*+(?:\[[^\]\n]{0,8}+\])?[ \t]*+:?=[^=;\n]{0,40}+\Z"
)
_BYTE_ARRAY = re.compile(
    rf"(?:<<|[{{\[(]/?){_BYTE_GAP}(?P<body>{_BYTE}(?:{_BYTE_GAP},{_BYTE_GAP}{_BYTE}){{15,63}}+)"
    rf"[ \t\r\n]*+,?[ \t\r\n]*+(?:>>|/?[}}\])])"
)


def key_bytes(text: str) -> Iterator[tuple[str, int, int]]:
    """Yield the span of each literal byte array, or string of `\\x` escapes, that holds random
    bytes: key material kept as data."""
    for match in _BYTE_ARRAY.finditer(text):
        declared = _ARRAY_NAME.search(text, max(0, match.start() - 120), match.start())
        if declared is not None and _PUBLIC_KEY_NAME.search(declared["name"]):
            continue  # `static const uint8_t SIGNER_PUBKEY[32] = {...}`: a public key
        values = [_byte_value(element) for element in match["body"].split(",")]
        if not (all(-128 <= v <= 255 for v in values) and random_bytes([v & 0xFF for v in values])):
            continue
        if (
            declared is not None
            and TEST_VECTOR.search(declared["name"])
            or _test_vector(text, text.rfind("\n", 0, match.start()) + 1, match.start())
        ):
            continue  # a published test vector, marked as one (`k_kat_key`, `/* NIST SP 800-38A, known-answer */`)
        yield DEFAULT_KIND, match.start("body"), match.end("body")
    if "\\x" in text:
        for match in _ESCAPED_BYTES.finditer(text):
            if random_bytes([int(v, 16) for v in _ESCAPED_BYTE.findall(match[0])]):
                yield DEFAULT_KIND, match.start(), match.end()


def _byte_value(element: str) -> int:
    """The number an element of a byte array writes, without its cast or suffix (`(byte) 0x22`: 0x22)."""
    found = _BYTE_VALUE.search(element, element.find(")") + 1)  # (after a cast)
    assert found is not None  # (an element of _BYTE_ARRAY's body holds one)
    hexa, based, number = found.groups()
    return int(hexa or based, 16) if hexa or based else int(number)


# a string of 16 to 64 bytes as `\\x` escapes (a line continued by a backslash inside it: OCaml, C)
_ESCAPED_BYTES = re.compile(r"(?:\\x[0-9a-fA-F]{2}(?:\\\r?\n[ \t]*+)?+){16,64}+(?![0-9a-fA-F])")
_ESCAPED_BYTE = re.compile(r"\\x([0-9a-fA-F]{2})")


def random_bytes(data: list[int]) -> bool:
    """Whether bytes look random: most values distinct, over a wide range, few small steps (not a
    table, a sequence or text)."""
    steps = sum(1 for a, b in zip(data, data[1:]) if abs(a - b) <= 2)
    return len(set(data)) >= 0.75 * len(data) and max(data) - min(data) >= 128 and steps <= len(data) // 4


def _judged(value: str) -> str:
    """What of `value` is judged: its longest part between `-` and `_` when another part reads as a
    word (`PuTTY-User-Key-File-2`, `MyTestSecret-a1b2c3`, `sk_live_<random>`; not letters cased at
    random, `VL5RqFCWR-nEQKmqEcqlnc`), else all of it."""
    parts = _PART.split(value)
    if len(parts) > 1 and any(len(p) >= 3 and _WORD.fullmatch(p) and _word_case(p) for p in parts):
        return max(parts, key=len)
    return value


def _word_case(part: str) -> bool:
    """Whether letters are cased as words are: lower, upper, capitalised, or CamelCase words of 3+
    letters (`RedisModule`; not `pJYdUy`, `nEQKmqEcqlnc`)."""
    pieces = CASE_PARTS.findall(part)
    return len(pieces) == 1 or all(len(piece) >= 3 for piece in pieces)


def short_name(value: str) -> bool:
    """Whether a value is a name of parts, one a word, the others too short to be generated
    (`uint16-slice`; see _judged)."""
    judged = _judged(value)
    return judged != value and sum(map(str.isalnum, judged)) < 16


_CAMEL_WORDS = re.compile(r"(?:[A-Z][a-z]{2,}+){3,}+")  # each part a capital and 2+ lower case letters


def _words(value: str) -> bool:
    """Whether `value` is a name made of words: 40% of its letters and digits or more in parts
    (split where case or class changes) that are English words of 3+ letters (or `to`, `by`, `id`,
    ...), as `MultiplyByFiveToTheNth` or `RedisModuleKeyOptCtx` are. Of random strings of 16 to 40
    characters, none of 15,000 reached 40% (at most 38%; 1 in 100 over 17%)."""
    covered = sum(len(part) for part in CASE_PARTS.findall(value) if _a_word(part.lower()))
    return covered >= 0.4 * sum(map(str.isalnum, value))


def _coverage(value: str) -> float:
    """The share of the letters and digits of `value` in parts that are words (see _words)."""
    covered = sum(len(part) for part in CASE_PARTS.findall(value) if _a_word(part.lower()))
    return covered / max(1, sum(map(str.isalnum, value)))


def _a_word(part: str) -> bool:
    if part in _SHORT_WORDS:
        return True
    if len(part) == 1 and part.isalpha():
        return False  # (the shipped list holds single letters too: `a` in `s4KX4c8a1y...`)
    if _english(part):
        return True
    if part.endswith("s") and (part[:-1] in _SHORT_WORDS or _english(part[:-1])):
        return True  # Subdirs
    for prefix in _PREFIXES:  # Deserializer, Unmarshal, Nonblocking
        if part.startswith(prefix) and len(part) - len(prefix) >= 4 and _stem_word(part[len(prefix) :]):
            return True
    return _stem_word(part)


_PREFIXES = ("de", "un", "re", "non", "pre", "sub", "multi", "inter", "over", "under")
_SUFFIXES = (
    ("izer", "ize"),
    ("iser", "ise"),
    ("er", ""),
    ("ers", ""),
    ("ed", ""),
    ("ing", ""),
    ("able", ""),
    ("ion", ""),
    ("s", ""),
)


def _english(word: str) -> bool:
    return word in english_words()


def _stem_word(part: str) -> bool:
    """Whether `part`, or it without a common suffix (`serializer`: serialize), is a word."""
    if _english(part):
        return True
    return any(
        part.endswith(end) and len(part) - len(end) >= 4 and _english(part[: -len(end)] + add)
        for end, add in _SUFFIXES
    )


# the words of fewer than 4 letters a name is made of (the shipped list holds 4 letters and more):
# English ones, and the abbreviations code spells (ctx, cfg, std, ...)
_SHORT_WORDS = frozenset(
    [
        "to",
        "by",
        "of",
        "in",
        "on",
        "at",
        "is",
        "id",
        "io",
        "ui",
        "db",
        "ok",
        "as",
        "or",
        "if",
        "no",
        "up",
        "do",
        "go",
        "an",
        "be",
        "it",
        "my",
        "we",
        "me",
        "us",
        "ip",
        "os",
        "fs",
        "js",
        "py",
        "add",
        "age",
        "ago",
        "aid",
        "aim",
        "air",
        "all",
        "and",
        "any",
        "app",
        "arc",
        "are",
        "arg",
        "arm",
        "art",
        "ask",
        "ast",
        "asm",
        "aux",
        "bad",
        "bag",
        "bar",
        "bas",
        "bat",
        "bed",
        "big",
        "bin",
        "bit",
        "box",
        "bug",
        "bus",
        "but",
        "buy",
        "cab",
        "cap",
        "car",
        "cat",
        "cfg",
        "chr",
        "cli",
        "cmd",
        "col",
        "con",
        "cpu",
        "crc",
        "css",
        "ctl",
        "ctx",
        "cur",
        "cut",
        "day",
        "db2",
        "dbg",
        "dec",
        "def",
        "del",
        "dev",
        "did",
        "die",
        "dig",
        "dim",
        "dir",
        "div",
        "doc",
        "dog",
        "dom",
        "dot",
        "dry",
        "dst",
        "due",
        "dup",
        "ear",
        "eat",
        "egg",
        "end",
        "env",
        "eof",
        "eol",
        "err",
        "etc",
        "eval",
        "exe",
        "exp",
        "ext",
        "eye",
        "fan",
        "far",
        "fat",
        "fax",
        "fee",
        "few",
        "fig",
        "fit",
        "fix",
        "flg",
        "fmt",
        "fn",
        "fog",
        "for",
        "fun",
        "fwd",
        "gap",
        "gas",
        "gen",
        "get",
        "got",
        "gpu",
        "gui",
        "gzip",
        "has",
        "hat",
        "hex",
        "hit",
        "hot",
        "how",
        "hub",
        "ico",
        "img",
        "inc",
        "ind",
        "inf",
        "ini",
        "int",
        "inv",
        "job",
        "joy",
        "key",
        "kid",
        "kit",
        "lab",
        "lag",
        "law",
        "lay",
        "leg",
        "len",
        "let",
        "lhs",
        "lib",
        "lid",
        "lie",
        "lin",
        "lit",
        "log",
        "lot",
        "low",
        "lsb",
        "map",
        "max",
        "may",
        "mem",
        "mid",
        "min",
        "mix",
        "mod",
        "msb",
        "msg",
        "mul",
        "mux",
        "net",
        "new",
        "nil",
        "nod",
        "nor",
        "not",
        "now",
        "num",
        "obj",
        "odd",
        "off",
        "oid",
        "old",
        "one",
        "opt",
        "our",
        "out",
        "own",
        "pad",
        "pan",
        "par",
        "pay",
        "pen",
        "per",
        "pid",
        "pin",
        "pip",
        "pkg",
        "pop",
        "pos",
        "pot",
        "pre",
        "ptr",
        "pub",
        "put",
        "qty",
        "raw",
        "ray",
        "red",
        "ref",
        "reg",
        "rem",
        "rep",
        "req",
        "res",
        "ret",
        "rev",
        "rhs",
        "rid",
        "rng",
        "rom",
        "row",
        "rpc",
        "rsa",
        "run",
        "say",
        "sec",
        "see",
        "seq",
        "set",
        "sha",
        "she",
        "sig",
        "sin",
        "sip",
        "sit",
        "six",
        "ski",
        "sky",
        "sql",
        "src",
        "std",
        "str",
        "sub",
        "sum",
        "sun",
        "svc",
        "svg",
        "syn",
        "sys",
        "tab",
        "tag",
        "tap",
        "tar",
        "tax",
        "tcp",
        "tea",
        "ten",
        "the",
        "tid",
        "tie",
        "tip",
        "tls",
        "tmp",
        "too",
        "top",
        "try",
        "tty",
        "two",
        "txt",
        "udp",
        "uid",
        "uri",
        "url",
        "usb",
        "use",
        "utc",
        "utf",
        "val",
        "var",
        "vec",
        "via",
        "vm",
        "win",
        "wnd",
        "won",
        "xml",
        "yes",
        "yet",
        "zip",
    ]
)


def _encoded(value: str) -> bool:
    """Whether `value` may be text under base64 (its characters need not switch class as written)."""
    return len(value) >= 20 and value.endswith("=")


# a C++ (Itanium) or Rust (v0) mangled symbol, its underscores before the token: `_Z1fIiEvT_`,
# `_ZN2ns1fEv`, `__ZN3foo3barEv`, `_RNvYAlj1f_NtC1c1t1f`: a name that length-prefixes its parts
_MANGLED = re.compile(r"_{1,2}+[ZR](?=[A-Z0-9])[A-Za-z0-9_$.]*?[0-9][A-Za-z_][A-Za-z0-9_$.]*+")


def _mangled(text: str, start: int, end: int) -> bool:
    """Whether the token at start..end is a mangled symbol (see _MANGLED), or its end, with what
    leads it (a token starts at a letter or digit: `_Z...`, `_ZNK3$_0clI...`)."""
    lead = start
    if text[start - 1 : start] in ("_", "$"):  # (most tokens follow a blank or a quote: no lead)
        low = max(0, start - 96)
        while lead > low and (text[lead - 1].isalnum() or text[lead - 1] in "_$."):
            lead -= 1
    return _MANGLED.fullmatch(text, lead, end) is not None


def _public_by_itself(value: str) -> bool:
    """Whether a token's own shape says what public thing it is: a UUID, a digest with its
    algorithm, a vendor's public id or a ULID, a domain name's label in punycode (`xn--`)."""
    return bool(
        known_shape(value) or _PUBLIC_ID.fullmatch(value) or value.startswith("xn--") or vehicle_id(value)
    )


# a VIN's letters (no I, O or Q) and digits as the check digit counts them, and each place's weight
_VIN_VALUES = dict(
    zip("ABCDEFGHJKLMNPRSTUVWXYZ", (1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 7, 9, 2, 3, 4, 5, 6, 7, 8, 9))
)
_VIN_VALUES.update((str(d), d) for d in range(10))
_VIN_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def vehicle_id(value: str) -> bool:
    """Whether `value` is a vehicle identification number: 17 capitals (no I, O or Q) and digits
    whose ninth is the check digit of all of them (ISO 3779, as North America writes it)."""
    if len(value) != 17 or not all(c in _VIN_VALUES for c in value):
        return False
    check = sum(_VIN_VALUES[c] * w for c, w in zip(value, _VIN_WEIGHTS)) % 11
    return value[8] == ("X" if check == 10 else str(check))


def _public_shape(text: str, start: int, value: str) -> bool:
    """The tests of _public that look at the token's own shape and the word it ends: those of
    _public_by_itself, a short hex id or a git object id, a digest's algorithm before it."""
    if _public_by_itself(value) or _mangled(text, start, start + len(value)):
        return True
    if _HEX.fullmatch(value) and (len(value) < MIN_HEX or len(value) == 40):
        return True
    enclosing = _ENCLOSING.search(text[max(0, start - 80) : start])
    return enclosing is not None and bool(enclosing[0]) and known_shape(enclosing[0] + value)


def _public(text: str, start: int, end: int, value: str) -> bool:
    """Whether the token at `start` is public by its shape or the syntax right before it."""
    if _public_by_itself(value) or _mangled(text, start, end):
        return True
    if text.startswith(".onion", end):
        return True  # a Tor service's address: its name is its public key
    line_start = text.rfind("\n", 0, start) + 1
    written = text[max(line_start, start - _DIGEST_LOOKBACK) : start]
    before = written.rstrip("+/")  # (a token starts at a letter or digit: base64's leading `/` stays out)
    if value.islower() and text.startswith(".", end) and _HOST_REST.match(text, end) is not None:
        named = _NAME_BEFORE.search(before.rstrip(_HOST_CHARACTERS))  # (the labels before it too)
        if named is None or not _CREDENTIAL_WORD.search(named["name"]):
            return True  # a label of a host name, sent to every resolver on the way
    bare = value[2:] if value[:2] in ("0x", "0X") else value  # a C or C# constant: 0x83126e978d4fdf3c
    if _HEX.fullmatch(bare) and decode(bare) is None:  # (hex of text is judged as that text)
        value = bare
        url = written.rfind("://")
        if url != -1 and not any(c.isspace() for c in written[url:]):
            return True  # an id in a URL's path: a gist, a commit
        if len(value) < MIN_HEX or len(value) == 40 or value.lower() in _EMPTY_DIGESTS:
            return True  # an id or a short hash; a git object id; the digest of no bytes
        if len(value) in _DIGEST_LENGTHS and (
            _names_a_digest(text, line_start, start, before) or _CHECKSUM_LINE.match(text, end)
        ):
            return True  # named as a digest, or a checksum file's line (`<sha256>  <file>`)
        if len(value) == 68 and value.startswith("1220") and _names_a_digest(text, line_start, start, before):
            return True  # a SHA-256 multihash (Zig's package hashes)
    elif (
        _base64_digest(text[start - (len(written) - len(before)) : end]) or _base32_digest(value)
    ) and _names_a_digest(
        text,
        line_start,
        start,
        before,
        columns=False,  # (a table's header is looked for in hex's only)
    ):
        return True  # a digest in base64 under a digest's name (`"sum":`, `md5Checksum`)
    enclosing = _ENCLOSING.search(written)
    word_start = start - (len(enclosing[0]) if enclosing is not None else 0)
    if word_start < start and any(known_shape(word) for word in _suffixes(text[word_start:end])):
        return True  # a password hash (`pbkdf2_sha256$...$...`), `sha256:<hex>`, `fp=SHA256:<base64>`
    if _DATA_URI.search(before) or _PUBLIC_KEY_LEAD.search(before) or _public_name(before):
        return True
    if _ENTITY_TAG.search(before):
        return True  # an HTTP entity tag: a version of a response, sent to every client (`W/"<size>-<hash>"`)
    if _CIPHERTEXT_LEAD.search(before) and (
        before[-3:] not in ("iv:", "ag:") or "ENC[" in text[line_start:start]
    ):
        return True  # a value encrypted for the repository (sops' `ENC[..,data:..,iv:..,tag:..]`, Vault's)
    if before.endswith(("(", '"', "'", "`")) and _PUBLIC_KEY_CALL.search(before):
        return True  # given to a public key's constructor: `ed25519.PublicKey(mustHex("...`, `VerifyKey(`
    first = not before.strip(" \t\"'\ufeff") and text.find("\n", end, end + _ROW_REACH) != end
    cell = (
        (first or before.rstrip(" \t\"'")[-1:] in _CELL_SEPARATORS)
        and start - line_start <= _ROW_REACH  # (a long line is no table's row)
        and _column_header(text, line_start, start, topmost=True)
    )
    if cell and _public_name(cell.strip(" \t\"'") + "="):
        return True  # a table's column headed by an id's name (`client_id`, `tenant_id`)
    if _JWK_PUBLIC.search(before) and "kty" in text[max(0, start - 400) : start]:
        return True  # a JSON Web Key's public members (`"n"`, `"e"`, `"x"`, `"y"`); its private `"d"` is no exception
    if before.endswith(("<Modulus>", "<Exponent>")):
        return (
            True  # an RSA key's public half in .NET's XML, a private key's too (its secrets: `<D>`, `<P>`...)
        )
    opening = _list_opening(text, line_start) if before.lstrip(" \t-\"'") == "" else None
    if opening is not None and _public_name(opening.rstrip() + " "):
        return True  # an item under a public name (a recorded response's `X-Amz-Cf-Id:` then `- <id>`)
    if _VALUE_FIELD.search(before):  # a name/value pair: the name is its `name` field's value
        pair = _PAIR_NAME.search(text, max(0, start - 240), start)
        if pair is not None and _public_name(pair["name"] + "="):
            return True  # `{"name": "cf-ray", "value": ...}`, `<meta name="...-verification" content=...>`
    if before.endswith("<string>"):  # a property list's value: its name is the `<key>` before it
        key = _PLIST_KEY.search(text, max(0, start - 200), start)
        if key is not None and _public_name(key["name"] + "="):
            return True
    if (
        before.endswith(("Encrypted(", "ENC("))
        or "ENC[" in before
        and "]" not in before[before.rfind("ENC[") :]
    ):
        return True  # encrypted for the repository: sops' `ENC[AES256_GCM,data:...]`, Codemagic's, Jasypt's
    if _hashed_host(text, line_start, start):
        return True  # `|1|salt|hash`: a hashed known_hosts entry
    if _test_vector(text, line_start, start):
        return True
    if before.endswith(("bh=", "b=")) and _SIGNED_MAIL.search(text, max(0, start - 1500), start) is not None:
        return True  # a DKIM or ARC signature's body hash (`bh=`) and signature (`b=`): sent with the mail
    versioned = _VERSIONED.search(before) if before.endswith(":") else None
    if versioned is not None and _public_name(before[: versioned.start()]):
        return True  # a format's version before a value (`secure: v1:<ciphertext>`, Vault's `vault:v1:`)
    if value.startswith("nonce-") and before.endswith("'"):
        return True  # a Content-Security-Policy's 'nonce-<value>': sent with the page it protects
    if text.startswith(".apps.googleusercontent.com", end) or before.endswith("com.googleusercontent.apps."):
        return True  # an OAuth client id (reversed, an iOS app's URL scheme): a browser is shown it
    return _binary_file(value)


# the name right before a value (`PublicKey = `, `"id": "`, `trace_id=`, `nonce="`)
# (its type between: Rust's `NAME: &str = "`, TypeScript's `name: string = "`; or a header and its
# quoted value after a blank: Apache's `Header set X-Build-Id "...`)
_NAME_BEFORE = re.compile(
    r"""(?P<name>[A-Za-z0-9_.-]{1,64}+)["'`\\]*+\]?+[ \t]*+"""  # (`ENV["NAME"] ||=`)
    r"""(?:(?:[:=]|=>|\|\|=|\?\?=|\?=)|:[ \t]*+&?(?:'static[ \t]++)?[A-Za-z_][\w.<>\[\]]{0,40}+[ \t]*+=|(?<=[ \t])(?=["'`]))"""
    r"""[ \t]*+["'`\\]*+\Z"""
)
_ID_NAME = re.compile(
    r"(?:\A|[_.-])(?:u|uu|gu|k)?(?:id|Id|ID)\Z|(?:\A|[_.-])(?:UU|GU|U|K)ID\Z|[a-z0-9](?:Uu|Gu|U)?(?:Id|ID)\Z|[a-z0-9]Kid\Z"
)  # (`kid`, `activeKid`, `JWKS_KID`: a JSON Web Key's id)
# a declaration's modifiers and keywords before its name
_DECLARATION = re.compile(
    r"\b(?:private|public|protected|internal|static|const|final|readonly|val|var|let|export|def)[ \t]++"
)
_JWK_PUBLIC = re.compile(r"""(?:["'](?:n|e|x|y)["']|(?<![\w$.])(?:n|e|x|y))[ \t]*:[ \t]*["']\Z""")
_CELL_SEPARATORS = frozenset(",\t|;")  # what a table's cell starts after (maybe a blank or quote between)
_PUBLIC_KEY_NAME = re.compile(  # (and a site key, shown to browsers; an RSA key's modulus; a search-only
    # key and a storefront's token, which vendors make to ship in a browser's bundle)
    r"(?i)(?:(?:(?:pub(?:lic)?|publishable|verifying|site|search(?:[-_.]?only)?)[-_.]?(?:(?:api|sdk|client|app)[-_.]?)?key"
    r"|storefront[-_.]?(?:access[-_.]?)?token|modulus)"
    r"(?:[-_.]?(?:hex|b64|base64|bytes|pem|der|raw))?|[-_.]pub(?:lic)?)\Z"  # (`fw_signing_pub`)
)
# a credential's word in a name: its value is no public thing, whatever the name ends with
_CREDENTIAL_WORD = re.compile(
    r"(?i)pass|pwd|secret|token|auth|credential|session|private|cookie|key|csrf|otp|login|psk|pepper"
)


def _suffixes(word: str) -> list[str]:
    """A word, and what follows each `=` in it (`fp=SHA256:...` holds `SHA256:...`)."""
    return [word, *(word[i + 1 :] for i, c in enumerate(word) if c == "=" and i + 1 < len(word))]


def _public_name(before: str) -> bool:
    """Whether the syntax right before a value names a public thing: a public key, a nonce (sent
    with the page it protects) or an id (`trace_id`, `"id"`), in a key with no credential's word
    (the key's words before a blank too: `Session ID: `). A bare `name:value` (`client-id:secret`,
    a user and its password) names nothing."""
    tail = before[-96:].rstrip("<")  # `Message-ID: <...@host>`
    if tail.endswith('@"'):
        tail = tail[:-2] + '"'  # Objective-C's string literal: `kClientID = @"..."`
    bare = tail.rstrip(" \t\"'`\\")
    if not bare.endswith((":", "=")) and not (tail[-1:] in ("'", '"', "`") and tail[-2:-1] in (" ", "\t")):
        return False  # (the cheap test first: most values follow no name and operator, nor a blank)
    m = _NAME_BEFORE.search(tail, max(0, len(bare) - 80))
    if m is None:
        return False
    name = m["name"]
    if m[0].endswith(":") and not m[0].rstrip(":").endswith(("'", '"')):
        return False  # `curl -u app-id:<secret>`: a pair, not a name and its value
    if _PUBLIC_KEY_NAME.search(name):
        return True
    key = before[: len(before) - len(m[0])]
    key = key[max(key.rfind(c) for c in ",;{([|\n\t") + 1 :][-48:] + name  # the key's other words
    key = _DECLARATION.sub("", key)  # (`private const val SELLER_UID`: a modifier, not a private key's word)
    words = {w.lower() for w in _CREDENTIAL_WORD.findall(key)}
    if words and not (words == {"key"} and _ID_NAME.search(name)):
        return False  # (a key's id is public: `key_id`, `signingKeyId`, `kid`; a session's or token's is not)
    # an id, a nonce (sent with the page it protects), a value encrypted for the repository (Travis'
    # and Pulumi's `secure:`): no secret as it stands
    lowered = name.lower()
    return bool(
        _ID_NAME.search(name)
        or lowered.endswith(
            (
                "nonce",
                "secure",
                "encrypted",
                "ciphertext",
                "site-verification",
                "domain-verification",
                "trace",  # a trace's id, named by its word alone in prose and logs
                "event",  # an event's id, so named in an error tracker's reports
                "signature",  # a signature: published with what it signs (an HMAC's grants nothing alone)
                "etag",  # an entity tag: a version of a response, sent to every client
                "if-none-match",
                "if-match",
            )
        )
        or lowered in _REQUEST_ID_HEADERS
        # a JWS's or a manifest's signature as a key names it (a SAS URL's `sig=` is its credential)
        or lowered == "sig"
        and not m[0].rstrip(" \t\"'`").endswith("=")
    )


# the value of a name/value pair (a HAR header, an HTML meta tag, a Kubernetes env entry), and the
# name field before it in the same item
_VALUE_FIELD = re.compile(r"""(?i)(?<![\w-])(?:value|content)["']?[ \t]*[:=][ \t]*["']?(?:\\["'])?\Z""")
_PAIR_NAME = re.compile(
    r"""(?i)(?<![\w-])(?:name|key)["']?[ \t]*[:=][ \t]*["']?(?P<name>[A-Za-z0-9_.-]{1,64})["']?[^{}<>\[\]]{0,120}\Z"""
)  # (`key` as Postman's variables name theirs)


# response headers that carry a request's id under no `id` of their own name
_REQUEST_ID_HEADERS = frozenset({"cf-ray", "x-amz-id-2", "x-amz-cf-id"})


_ROW_REACH = 2000


def _public_header(text: str, start: int) -> bool:
    """Whether the value at `start` stands in a table column whose header names a public thing
    (`last_request_id`). Asked last, of values otherwise redacted: finding a header costs."""
    line_start = text.rfind("\n", 0, start) + 1
    if start - line_start > _ROW_REACH or not any(sep in text[line_start:start] for sep in (",", "\t", "|")):
        return False  # (a long line is no table's row: minified JSON, where each value would re-read it)
    header = _column_header(text, line_start, start)
    return header is not None and _public_name(header.strip(" \"'") + "=")


def _names_a_digest(text: str, line_start: int, start: int, before: str, columns: bool = True) -> bool:
    """Whether a word that names a digest stands before the value on its line, on the line above
    or below (a name/value pair: `- name: ETAG` then `value: ...`), or (with `columns`) heads its
    table column."""
    if DIGEST_WORD.search(before):
        return True
    own = _NAME_BEFORE.search(before)
    if own is not None and _CREDENTIAL_WORD.search(own["name"]):
        return False  # its own name says it is secret (`LOGIN_PEPPER_HEX = "..."` below `# before hashing`)
    above = text.rfind("\n", 0, max(0, line_start - 1)) + 1
    line_end = text.find("\n", start)
    below_end = -1 if line_end == -1 else text.find("\n", line_end + 1)
    near = text[above:line_start] + (
        text[line_end : below_end if below_end != -1 else len(text)] if line_end != -1 else ""
    )
    if DIGEST_WORD.search(near[:_NEAR]):
        return True
    opening = _list_opening(text, line_start)
    if opening is not None and DIGEST_WORD.search(opening):
        return True  # an item of a list whose name names digests (`pinnedKeyHashes: [String] = [`)
    if not columns or start - line_start > _ROW_REACH:
        return False  # (a long line is no table's row: each value would re-read it)
    header = _column_header(text, line_start, start)
    return header is not None and DIGEST_WORD.search(header) is not None


_NEAR = 400  # characters of the lines above and below looked at
# a line that is one item of a list: a quoted literal and its comma, or a YAML item
_LIST_ITEM = re.compile(
    r"""[ \t]*+(?:-[ \t]++)?+(?:(?P<q>["'])[^"'\n]{1,512}+(?P=q)[ \t]*+,?|(?<=- )[^\s"'#][^\s]{0,511}+"""
    r"""|<string>[^<\n]{1,512}+</string>)[ \t]*+\r?"""
)  # (a YAML item unquoted too: `- <value>`; a property list's `<string>` in an `<array>`)
_ARRAY_OPENING = re.compile(r"[ \t]*+<array>[ \t]*+\r?")
_LIST_ITEMS = 64  # items looked up through at most


def _list_opening(text: str, line_start: int) -> str | None:
    """When the line at `line_start` is an item of a list written one item a line, the line that
    opens the list (up through the items above it)."""
    end = text.find("\n", line_start)
    if _LIST_ITEM.fullmatch(text, line_start, len(text) if end == -1 else end) is None:
        return None
    for _ in range(_LIST_ITEMS):
        if line_start == 0:
            return None
        above = text.rfind("\n", 0, line_start - 1) + 1
        if _LIST_ITEM.fullmatch(text, above, line_start - 1) is None:
            if above > 0 and _ARRAY_OPENING.fullmatch(text, above, line_start - 1):
                return text[text.rfind("\n", 0, above - 1) + 1 : line_start - 1]  # with the `<key>` above
            return text[above : line_start - 1]
        line_start = above
    return None


def _column_header(text: str, line_start: int, start: int, topmost: bool = False) -> str | None:
    """The header cell of the table column the value at `start` stands in: the nearest line above
    (at most _HEADER_ROWS) that is a table's header with as many cells as the value's row (with
    `topmost`, the first of the rows above it that all read as one: rows of short values do)."""
    row, _ = table_row(text, line_start)
    for sep in (",", "\t", "|", ";"):
        if sep not in row:
            continue
        cells = table_cells(row, sep)
        column = next((i for i, (a, b) in enumerate(cells) if a <= start - line_start < b), None)
        if column is None:
            continue
        pos, cell = line_start, None
        for _ in range(_HEADER_ROWS):
            if pos == 0:
                break
            pos = text.rfind("\n", 0, pos - 1) + 1
            found = header_column(text, pos, pos)
            if found is not None and found[0] == sep and found[2] == len(cells):
                header, _ = table_row(text, pos)
                a, b = table_cells(header, sep)[column]
                cell = header[a:b]
                if not topmost:
                    return cell
            elif cell is not None:
                return cell
        if cell is not None:
            return cell
    return None


_HEADER_ROWS = 50


def public_key(value: str) -> bool:
    """Whether `value` is the base64 of a public key or a certificate by its own structure (an SSH
    public key's wire form, DER that opens a SubjectPublicKeyInfo or a certificate): public under
    any name (`PLAY_LICENSE_KEY = "MIIBIjAN..."`), since no private key is written so."""
    return ssh_public_key(value) or (len(value) >= 40 and _public_der(_decoded_head(value, 40)))


def ssh_public_key(value: str) -> bool:
    """Whether `value` is the base64 of an SSH public key (its wire form names its type): public
    under any name (`ssh_authorized_keys: - ssh-rsa AAAA...`), since no private key is written so."""
    return value.startswith("AAAA") and _decoded_head(value)[4:].startswith(_SSH_KEY_TYPES)


_SSH_KEY_TYPES = (b"ssh-", b"ecdsa-", b"sk-")  # an SSH public key's wire form: a length, then its type


def _decoded_head(value: str, chars: int = 24) -> bytes:
    """The first bytes base64 (standard or URL-safe) `value` encodes, from its first `chars`
    characters; none when it is not base64."""
    head = value[:chars]
    head = head[: len(head) - len(head) % 4]
    try:
        return base64.b64decode(head.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return b""


def _test_vector(text: str, line_start: int, start: int) -> bool:
    """Whether the value is marked as a published test vector (`RFC 8032 section 7.1, TEST 1`,
    `known-answer test`): an example marked as one, on its line or the six above it, or on a line
    that opens a block holding it (a test's name, `func TestAESKnownAnswer(t *testing.T) {`), or
    the comment above the innermost (`# RFC 4231, test case 2` over `VECTOR = {`)."""
    above = line_start
    for _ in range(_VECTOR_LINES):
        if above == 0:
            break
        above = text.rfind("\n", 0, above - 1) + 1
    line_end = text.find("\n", start, start + 160)  # (a minified file's one line is read that far)
    window = text[max(above, start - 480) : line_end if line_end != -1 else start + 160]
    if _marks_test_vector(window):
        return True
    return any(_marks_test_vector(line) for line in _openers(text, line_start))


_VECTOR_LINES = 6  # lines above a value where a comment marks the vectors below it


def encrypted_block(text: str, line_start: int) -> bool:
    """Whether the line at `line_start` stands in a block of values encrypted for the repository
    (a SealedSecret's `encryptedData:` key, alone on its line): ciphertext, which only the cluster's
    private key opens."""
    if line_start == 0 or text[line_start : line_start + 1] not in (" ", "\t"):
        return False  # (the cheap test first: such a value is indented under its block)
    return any(_ENCRYPTED_OPENER.fullmatch(line) for line in _openers(text, line_start, above=False))


_ENCRYPTED_OPENER = re.compile(r"""[ \t]*+["']?encrypted_?data["']?[ \t]*:[ \t]*\r?""", re.IGNORECASE)


def _marks_test_vector(window: str) -> bool:
    """Whether `window` names a published test vector (see TEST_VECTOR)."""
    lowered = window.lower()
    if not any(word in lowered for word in _TEST_VECTOR_WORDS):
        return False  # (the cheap test first: a regex tried at each character cost a third of all the rules)
    return TEST_VECTOR.search(window) is not None


_OPENER_LINES = 24  # lines looked up through for the blocks that hold a value
_OPENER_LEVELS = 3  # blocks, from the innermost out
_OPENER_READ = 240  # characters of each line read (its indentation and the words that open a block)


def _openers(text: str, line_start: int, above: bool = True) -> Iterator[str]:
    """The lines that open the blocks holding the line at `line_start`, by indentation (each less
    indented than the lines below it), innermost first, and (with `above`) the line above the
    innermost (its comment: `# RFC 4231, test case 2` over `VECTOR = {`). Lines longer than
    _OPENER_READ end the search (no block of code is written so)."""
    end = text.find("\n", line_start, line_start + _OPENER_READ)
    line = text[line_start : line_start + _OPENER_READ if end == -1 else end]  # (its indentation)
    indent = len(line) - len(line.lstrip(" \t"))
    levels, pos = 0, line_start
    for _ in range(_OPENER_LINES):
        if pos == 0 or indent == 0 or levels == _OPENER_LEVELS:
            return
        start = text.rfind("\n", max(0, pos - 1 - _OPENER_READ), pos - 1) + 1
        if start == 0 and pos - 1 > _OPENER_READ:
            return  # a line longer than is read
        line, pos = text[start : pos - 1], start
        stripped = line.lstrip(" \t")
        if not stripped.strip() or len(line) - len(stripped) >= indent:
            continue
        indent, levels = len(line) - len(stripped), levels + 1
        yield line
        if above and levels == 1 and pos > 0:
            start = text.rfind("\n", max(0, pos - 1 - _OPENER_READ), pos - 1) + 1
            yield text[start : pos - 1]


def digest_shaped(value: str) -> bool:
    """Whether `value` is written as a digest is: hex of a digest's length, or base64 or base32 of
    as many bytes as one has, maybe after its algorithm (`sha256:`, `sha256-`)."""
    _, sep, rest = value.partition(":") if ":" in value else value.partition("-")
    bare = rest if sep and DIGEST_WORD.match(value) else value
    if _HEX.fullmatch(bare):
        return len(bare) in _DIGEST_LENGTHS
    return _base64_digest(bare) or _base32_digest(bare)


_NIX_BASE32 = re.compile(r"[0-9abcdfghijklmnpqrsvwxyz]+")  # Nix's alphabet: no e, o, u, t
_BASE32 = re.compile(r"[A-Z2-7]+=*")


def _base32_digest(value: str) -> bool:
    """Whether `value` is base32 of as many bytes as SHA-1, SHA-256 or SHA-512 has in Nix's alphabet
    (`sha256 = "a2pl7w..."`), or SHA-256 or SHA-512 has in RFC 4648's."""
    if _NIX_BASE32.fullmatch(value) is not None:
        return len(value) in (32, 52, 103)
    # (RFC 4648's of SHA-256 or SHA-512 only: 32 characters of it is as often a TOTP seed)
    return _BASE32.fullmatch(value) is not None and len(value.rstrip("=")) in (52, 103)


def _base64_digest(value: str) -> bool:
    """Whether `value` is base64 of as many bytes as a digest has (MD5's 16 to SHA-512's 64)."""
    if _BASE64_DIGEST.fullmatch(value) is None:
        return False
    return len(value.rstrip("=")) * 3 // 4 in (16, 20, 28, 32, 48, 64)


def _hashed_host(text: str, line_start: int, start: int) -> bool:
    """Whether the token at `start` is part of a hashed known_hosts entry (`|1|salt|hash`)."""
    if "|1|" not in text[max(line_start, start - 40) : start]:
        return False  # (the cheap test first)
    m = _HASHED_HOST.search(text, max(line_start, start - 40), start + 64)
    return m is not None and m.start() <= start < m.end()


def _binary_file(value: str) -> bool:
    """Whether `value` is base64 of a file of a known binary format (an image, a font, ...), of
    a public key or certificate in DER (see _public_der), or of a minisign public key."""
    if len(value) < 16:
        return False
    raw = _decoded_head(value)
    if raw[:1] == b"\x30":
        raw = _decoded_head(value, 40)  # DER: read far enough for its second element
    if raw.startswith(b"Ed") and len(value.rstrip("=")) == 56:
        return True  # minisign's public key: `Ed`, its id and 32 bytes (its secret key is longer)
    if raw[:1] == b"\x04" and len(value.rstrip("=")) == 87:
        return True  # an uncompressed P-256 point (65 bytes from 04): a public key (Web Push's VAPID key)
    return raw.startswith(_MAGIC) or raw[4:].startswith(_SSH_KEY_TYPES) or _public_der(raw)


def _public_der(raw: bytes) -> bool:
    """Whether DER bytes open a public key (SubjectPublicKeyInfo: an algorithm, then a BIT STRING)
    or a certificate (its signed part, then its version `[0]`). A private key opens with a version
    INTEGER, an encrypted one with its algorithm and an OCTET STRING."""
    outer = _der_header(raw, 0)
    if outer is None or raw[:1] != b"\x30" or raw[outer[0] : outer[0] + 1] != b"\x30":
        return False
    inner = _der_header(raw, outer[0])
    if inner is None:
        return False
    content, length = inner
    if raw[content : content + 1] == b"\xa0":
        return True  # a certificate's tbsCertificate, opened by its version
    return raw[content + length : content + length + 1] == b"\x03"


def _der_header(raw: bytes, at: int) -> tuple[int, int] | None:
    """Where the content of the DER element at `at` starts, and its length (None past the bytes
    decoded, or a length of more than two bytes)."""
    first = raw[at + 1] if at + 1 < len(raw) else None
    if first is None:
        return None
    if first < 0x80:
        return at + 2, first
    size = first & 0x7F
    if size > 2 or at + 2 + size > len(raw):
        return None
    return at + 2 + size, int.from_bytes(raw[at + 2 : at + 2 + size], "big")


def _public_blocks(text: str) -> list[tuple[int, int]]:
    """The spans of the certificate and public key blocks of `text` (BEGIN line to END line)."""
    out = []
    for begin in _PUBLIC_BLOCK.finditer(text):
        end = text.find(f"-----END {begin['label']}-----", begin.end())
        out.append((begin.start(), len(text) if end == -1 else end))
    return out
