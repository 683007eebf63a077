"""Tell a generated value from a word, a name, a number or a hash of known shape: by its length,
its classes of characters and its entropy, as written and once decoded (base64, hex, URL and
Unicode escapes).

A generated secret (a token, a key, a password from a manager) mixes its classes all along: in a
random string of letters and digits two neighbours differ in class (digit, lower, upper) six
times in ten, where a name in camelCase or snake_case switches at its word boundaries only (2 in
10). Its characters are also spread: the Shannon entropy of a random string is close to that of
its alphabet, where a word repeats its letters. Encoded text is judged as the text it encodes:
base64 of `admin-user1` is a name, base64 of random bytes is random.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import string
import urllib.parse

from rag.secrets.values import (
    CASE_PARTS,
    PLACEHOLDER_PARTS,
    REPEATED,
    credential_value,
    not_a_credential,
    ordinary,
    stock_word,
)

MIN_LENGTH = 12  # a random value shorter than this is a password's business (values.credential_value)
UNPRONOUNCEABLE_LENGTH = 20  # letters of one case with digits that read as no word: random from this length
_MAX_LENGTH = 8192

# look-alikes of known shape: a UUID, a hash with its algorithm (integrity fields, lock files,
# PostgreSQL's md5 and SCRAM password hashes), a date, a version
_UUID = re.compile(r"\{?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\}?")
_HASH = re.compile(
    r"(?i:sha-?(?:1|224|256|384|512)|md5|blake2[bs]?|blake3|xxh(?:32|64|128)|crc32c?|murmur3|h1|zh|"
    r"scram-sha-256|pbkdf2[_:-]sha(?:1|256|512)|bcrypt|argon2(?:id|i|d)?|scrypt:[0-9]+)[-:$=/]"
    r"|md5[0-9a-f]{32}\Z|\$(?:2[abxy]|argon2(?:id|i|d)|[156])\$"
)
_FORMAT = re.compile(r"%(?:[0-9]*\.[0-9]*[fg]|[0-9]*[sd](?![A-Za-z0-9]))")  # printf's %s, %0.f
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{8}T[0-9]{6}")  # an ISO 8601 date or time
_VERSION = re.compile(r"[vV]?[0-9]+(?:\.[0-9]+){1,3}(?:[-+.~_][0-9A-Za-z.+~_-]*)?")
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2})")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_HEX = re.compile(r"(?:[0-9a-f]{2})+|(?:[0-9A-F]{2})+")
_HEX_GROUPS = re.compile(
    r"[0-9a-f]{8,}+(?:-[0-9a-f]{8,}+)++|[0-9A-F]{8,}+(?:-[0-9A-F]{8,}+)++"
)  # 8+ digits a group
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
_ALPHABETS = ((str.isdigit, 10), (str.islower, 26), (str.isupper, 26))
# a part that reads as a word: 3+ letters, a vowel, no 4 consonants in a row (Password, Crypt; not Mbptgoty)
_WORD = re.compile(r"(?i)(?=[a-z]*[aeiouy])(?![a-z]*[b-df-hj-np-tv-xz]{4})[a-z]{3,}")


def looks_random(value: str, depth: int = 0) -> bool:
    """Tell whether `value` looks generated: 12+ characters, no blank, no placeholder, not of a
    known look-alike shape (UUID, hash, version), and random as the text it encodes, or as written."""
    if not may_be_random(value):
        return False  # (the cheap tests first: most candidates are words)
    if "\\" in value and depth < 3 and _ESCAPE.search(value):
        return _random_text(_ESCAPE.sub(lambda m: chr(int(m[0][2:], 16)), value), depth + 1)
    if " " in value or _placeholder(value) or REPEATED.search(value) or ascending(value):
        return False
    if _FORMAT.search(value) or ("/" not in value and not_a_credential(value)):
        return False  # a format string, an algorithm's name (AWS4-HMAC-SHA256), credential words
    if known_shape(value):
        return False
    decoded = decode(value) if depth < 3 else None
    if decoded is not None:
        return _random_text(decoded, depth + 1)
    prefix = _TOKEN_PREFIX.match(value)  # a vendor's prefix (sk_live_, ghp_, xoxb-): judge the body
    return random_as_written(value) or (prefix is not None and random_as_written(value[prefix.end() :]))


def may_be_random(value: str) -> bool:
    """The cheap tests of looks_random, at C speed: 12 to 8,192 printable ASCII characters with
    both cases, or a digit and a letter."""
    return (
        MIN_LENGTH <= len(value) <= _MAX_LENGTH
        and _two_classes(value)
        and value.isascii()
        and value.isprintable()
    )


def roughly_random(value: str) -> bool:
    """The tests of random_as_written that run at C speed, on a value that may_be_random: its
    classes switch often, and it has as many distinct characters as an entropy of three quarters
    of its alphabet's needs. Looser than looks_random (a path or a hash of known shape passes)."""
    lead = value[:18]
    prefix = _TOKEN_PREFIX.match(value) if "_" in lead or "-" in lead else None  # a vendor's (sk_, ghp_)
    if prefix is not None:
        value = value[prefix.end() :]  # judge the body
    kinds = value.translate(CLASS_OF)
    n = len(kinds)
    if n < MIN_LENGTH - 2:
        return False
    count = kinds.count
    switches = count("01") + count("02") + count("10") + count("12") + count("20") + count("21")
    digits = "0" in kinds
    if switches < (0.2 if digits else 0.35) * (n - 1) and not unpronounceable(value):
        return False
    lower, upper = "1" in kinds, "2" in kinds
    hex_digits = not (lower and upper) and _HEX.fullmatch(value) is not None  # (one case only)
    alphabet = 16 if hex_digits else 10 * digits + 26 * lower + 26 * upper
    if not hex_digits and _HEX_GROUPS.fullmatch(value):
        value, alphabet = value.replace("-", ""), 16  # groups of hex digits joined by `-`
    elif n < len(value):
        alphabet += 20  # symbols
    return len(set(value)) >= math.pow(max(2, min(len(value), alphabet)), 0.75)


def unpronounceable(value: str) -> bool:
    """Whether a long value of one case of letters and some digits reads as no word does:
    under a quarter of its letters vowels, and five consonants in a row somewhere (`xke1lrqhnph6...`).
    Random letters of one case are a fifth vowels; names made of words, a third or more, and those
    that are not are still kept by the test for words (rag.secrets.anywhere)."""
    if len(value) < UNPRONOUNCEABLE_LENGTH or not value.isalnum() or not (value.islower() or value.isupper()):
        return False
    letters = [c for c in value.lower() if c.isalpha()]
    vowels = sum(c in "aeiou" for c in letters)
    return vowels < 0.25 * len(letters) and CONSONANT_RUN.search(value.lower()) is not None


def encodes_other_text(value: str) -> bool:
    """Whether `value` is base64, hex or URL escapes of text that is no credential (base64 of
    `replace-me-in-production`, of `admin-user1`): such a value is judged as what it encodes."""
    decoded = decode(value)
    return decoded is not None and not (credential_value(decoded) or looks_random(decoded))


def known_shape(value: str) -> bool:
    """Whether `value` has the shape of a look-alike: a UUID, a hash with its algorithm, a date, a version."""
    return bool(
        _UUID.fullmatch(value) or _HASH.match(value) or _VERSION.fullmatch(value) or _DATE.match(value)
    )


def _two_classes(value: str) -> bool:
    """Whether `value` has both cases, or a digit and a letter (as written and as every
    encoding writes text): tested at C speed."""
    upper, lower = value.lower() != value, value.upper() != value
    return (upper and lower) or ((upper or lower) and _DIGIT.search(value) is not None)


_DIGIT = re.compile(r"[0-9]")
CONSONANT_RUN = re.compile(r"[bcdfghjklmnpqrstvwxz]{5}")  # five consonants in a row: no word
_TOKEN_PREFIX = re.compile(
    r"(?:[a-z][a-z0-9]{1,7}(?:[_-][a-z0-9]{2,8}){0,2}|[A-Z][A-Z0-9]{1,7})[_-](?=[A-Za-z0-9]{16})"
)  # (`sk_live_`, `xoxb-`; in capitals, `PMAK-`, `NRAK-`)


def _placeholder(value: str) -> bool:
    """A template, a reference, a mask or an example: `${TOKEN}`, `<your-token>`, `$API_KEY`,
    `xxxx`, `***`, `changeme2024`."""
    if _TEMPLATE_MARK.search(value) or _REFERENCE.fullmatch(value):
        return True
    if value[0] in "<{[" and value[-1] in ">}]":
        return True
    lowered = value.lower()
    return _PLACEHOLDER_PART.search(lowered) is not None or stock_word(value)


_TEMPLATE_MARK = re.compile(
    "|".join(map(re.escape, ("${", "$(", "{{", "}}", "%s", "%(", "%{", "#{", "<%", "://")))
)
_PLACEHOLDER_PART = re.compile("|".join(map(re.escape, PLACEHOLDER_PARTS)))
# references, alone or joined: $API_KEY, %TOKEN%, @password2, PHP's "$value[0]:$value[1]"
_ONE_REFERENCE = r"[$%@][A-Za-z_][A-Za-z_.]*[0-9]*(?:\[[^\]\s]{1,20}\])*%?"
_REFERENCE = re.compile(f"{_ONE_REFERENCE}(?:[:@/._-]{_ONE_REFERENCE})*")


def _random_text(text: str, depth: int) -> bool:
    """Judge decoded text: random itself, or `user:password` with a random password."""
    if looks_random(text, depth):
        return True
    user, colon, password = text.partition(":")
    return bool(colon) and 0 < len(user) <= 64 and looks_random(password, depth)


def decode(value: str) -> str | None:
    """Return the text `value` encodes when it is text under URL escapes, hex or base64; None
    when it is not encoded text (random bytes, a key, are judged as written)."""
    if "%" in value and _PERCENT.search(value):
        return urllib.parse.unquote(value)
    if len(value) >= 16 and _HEX.fullmatch(value):
        return as_text(binascii.unhexlify(value))
    if len(value) >= 16 and len(value.rstrip("=")) % 4 != 1 and _BASE64.fullmatch(value):
        padded = value + "=" * (-len(value) % 4)
        try:
            return as_text(base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True))
        except ValueError:
            return None
    return None


def as_text(raw: bytes) -> str | None:
    """The bytes as text when they are printable UTF-8 (line breaks and tabs allowed), or UTF-16 as
    Windows writes it (PowerShell's `[Text.Encoding]::Unicode`, `-EncodedCommand`), else None."""
    if len(raw) >= 8 and len(raw) % 2 == 0 and not any(raw[1::2]) and all(raw[::2]):
        raw = raw[::2]  # UTF-16LE of ASCII: each character's second byte zero
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable()
    return text if text and printable else None


def random_as_written(value: str) -> bool:
    """Judge the characters themselves (ASCII, as looks_random passes them): two classes of
    letters and digits at least (or both cases with symbols), switching between classes often
    (letters only: both cases, a quarter to three quarters upper case), no run of one character
    or of the alphabet, not a path, file name or identifier, and an entropy near its alphabet's."""
    kinds = value.translate(CLASS_OF)  # each letter or digit as its class; counted at C speed
    n = len(kinds)
    if n < MIN_LENGTH - 2 or ordinary(value):
        return False
    classes = [kinds.count(kind) for kind in "012"]
    if sum(1 for k in classes if k) < 2:
        return False
    switches = _switches(kinds) / (n - 1)
    if all(classes) and _mean_part(value) >= 3:
        return False  # words and acronyms in CamelCase: a name (getUserAccountSettings2)
    if not classes[0]:  # letters only: a CamelCase name switches at each capital, twice
        upper = classes[2] / n
        short = n < 16 and n == len(value)  # symbols make up for length
        if short or not 0.25 <= upper <= 0.75 or switches < 0.35:
            return False
    elif switches < 0.2 and not unpronounceable(value):
        return False
    alphabet = sum(size for (_, size), k in zip(_ALPHABETS, classes) if k)
    if _HEX.fullmatch(value):
        alphabet = 16
    elif _HEX_GROUPS.fullmatch(value):
        return entropy(value.replace("-", "")) >= 0.75 * 4  # (Postman's `PMAK-<hex>-<hex>`)
    if n < len(value):
        alphabet += 20  # symbols
    return entropy(value) >= 0.75 * math.log2(min(len(value), alphabet))


# an ASCII letter or digit -> its class (0 a digit, 1 lower case, 2 upper case); the rest dropped
CLASS_OF = str.maketrans(
    string.digits + string.ascii_lowercase + string.ascii_uppercase,
    "0" * 10 + "1" * 26 + "2" * 26,
    "".join(chr(i) for i in range(128) if not chr(i).isalnum()),
)
_SWITCHES = ("01", "02", "10", "12", "20", "21")


def _switches(kinds: str) -> int:
    """How often two neighbours differ in class (no two of one switch overlap: counted at C speed)."""
    return sum([kinds.count(switch) for switch in _SWITCHES])


def _mean_part(value: str) -> float:
    """The mean length of the parts of `value` split where its class changes (a word in
    CamelCase, an acronym, a number): 4 in BCryptSHA256PasswordHasher, under 2 in a random string."""
    parts = CASE_PARTS.findall(value)
    if sum(1 for p in parts if len(p) > 2 and _WORD.fullmatch(p)) < 2:
        return 0.0  # fewer than two words: not a name of words
    return sum(map(len, parts)) / len(parts)


def entropy(value: str) -> float:
    """Shannon entropy of the characters of `value`, in bits per character."""
    n = len(value)  # (each character's count in the order of first sight, as Counter gives them)
    return -sum([c / n * math.log2(c / n) for c in map(value.count, dict.fromkeys(value))])


def ascending(value: str, n: int = 6) -> bool:
    """Whether `n` characters in a row follow the alphabet or count up (abcdef, 123456), or, in
    hex, all its bytes (000102030405...: a test pattern)."""
    run = 1
    for a, b in zip(value, value[1:]):
        run = run + 1 if ord(b) == ord(a) + 1 and a.isalnum() else 1
        if run >= n:
            return True
    if len(value) >= 2 * n and _HEX.fullmatch(value):
        data = bytes.fromhex(value)
        return all(b == a + 1 for a, b in zip(data, data[1:]))
    return False
