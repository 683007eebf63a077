"""The names of a credential context (rag.secrets.nature): the words that make one, in any case and
with any separator, and the names that hold such a word without naming a credential (a hash, a
public key, a path, a pagination token; author, bypass, keyboard, tokenizer)."""

from __future__ import annotations

import functools
import re

from rag.secrets.values import NOT_AUTH_TOKEN

# the words of a credential context (lowered), and whether a chosen value counts too
WORDS: dict[str, bool] = {
    "pass": True,
    "pwd": True,
    "secret": True,
    "token": False,
    "key": False,
    "auth": False,
    "credential": False,
    "session": False,
    "psk": True,  # a pre-shared key (TLS-PSK's, a device's; Wi-Fi's, a passphrase: a chosen value counts)
    "cookie": False,  # a session's cookie, an Erlang node's distribution cookie
}
# the words whose values a chosen password counts for (pass, pwd, secret)
PASSWORD_WORDS = tuple(word for word, chosen in WORDS.items() if chosen)
# `private` is a word of names too (`private_key`, `privateToken`), found through the word beside it;
# and `signature` names a value derived from a secret (an HMAC), which grants nothing alone

# name segments that say the value is something else than a credential
NOT_CREDENTIAL = frozenset(
    [
        "public",
        "pub",
        "verifying",  # a signature's verifying key is its public half
        "hash",
        "hashed",
        "digest",
        "checksum",
        "fingerprint",
        "integrity",
        "hint",
        "policy",
        "prompt",
        "label",
        "placeholder",
        "example",
        "examples",
        "pattern",
        "regex",
        "length",
        "len",
        "min",
        "max",
        "format",
        "type",
        "kind",
        "field",
        "name",
        "names",
        "path",
        "file",
        "dir",
        "url",
        "uri",
        "endpoint",
        "arn",
        "alias",
        "version",
        "prefix",
        "suffix",
        "count",
        "size",
        "expiry",
        "expires",
        "expiration",
        "ttl",
        "timeout",
        "reset",
        "rule",
        "rules",
        "strength",
        "uuid",
        "index",
        "cache",
        "sort",
        "partition",
        "primary",
        "foreign",
        "lookup",
        "next",
        "page",
        "continuation",
        "cursor",
        "marker",
        "idempotency",
        "request",
        "sync",
        "change",
        "lock",
        "env",
        "var",
        "template",
        "id",
        "ids",
        "sha",
        "sha1",
        "sha256",
        "sha512",
        "md5",
        "result",
        "output",
        "input",
        "cls",
        "class",
        "handler",
        "factory",
        "callback",
        "starting",
        "publishable",
        "modulus",  # an RSA key's modulus, public even in a private key
    ]
)
# words that hold a context word without meaning it
NOT_THE_WORD = frozenset(
    [
        "author",
        "authors",
        "authored",
        "authority",
        "authorities",
        "authoring",
        "bypass",
        "compass",
        "passenger",
        "passengers",
        "passage",
        "passive",
        "passthrough",
        "surpass",
        "keyboard",
        "keyword",
        "keywords",
        "keyframe",
        "keyframes",
        "keystroke",
        "keystrokes",
        "keypress",
        "keydown",
        "keyup",
        "keypad",
        "keychain",
        "monkey",
        "donkey",
        "turkey",
        "hockey",
        "whiskey",
        "jockey",
        "tokenize",
        "tokenizer",
        "tokenizers",
        "tokenized",
        "tokenizing",
        "tokenization",
        "passport",
        "sessionstorage",
    ]
)
AFTER_KEY = frozenset(
    [
        "id",
        "ids",
        "sid",  # Twilio's API key SID: the key's id, its secret apart
        "sids",
        "kid",
        "name",
        "names",
        "type",
        "path",
        "file",
        "url",
        "uri",
        "arn",
        "alias",
        "ring",
        "store",
        "map",
        "s",
    ]
)
SEGMENTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


@functools.lru_cache(maxsize=4096)  # names repeat: a file says `password` many times
def credential_name(name: str, word: str) -> bool:
    """Tell whether a name that holds `word` names a credential: the word is not part of another
    (author, bypass, keyboard, tokenizer) and no segment says the value is something else (a
    hash, a public key, a path, a length, a pagination token: public_key, password_hint,
    key_id, NextToken)."""
    segments = [part for s in SEGMENTS.findall(name) for part in _unglued(s.lower(), word)]
    if word == "secret" and name[-9:].lower() == "secret_id":
        segments.pop()  # Vault's `secret_id` is what an AppRole logs in with (AWS's `SecretId` names a secret)
    if not segments or any(s in NOT_CREDENTIAL or s in NOT_THE_WORD for s in segments):
        return False
    at = next((i for i, s in enumerate(segments) if word in s), None)
    if at is None:
        return False
    before, after = "".join(segments[:at]), segments[at + 1 :]
    if word == "token" and NOT_AUTH_TOKEN.search(before):
        return False  # a pagination, idempotency or verification token: NextToken, VerificationToken
    if word == "key" and _NOT_SECRET_KEY.search(before):
        return False  # an object's or a row's key: S3Key, cache_key, primary_key
    return not (word == "key" and after and after[0] in AFTER_KEY)


_NOT_SECRET_KEY = re.compile(  # (a site key and a search-only key ship to browsers)
    r"(?:s3|object|bucket|cache|primary|foreign|partition|sort|row|hash|result|lookup|site|search(?:only)?(?:api)?)\Z"
)


def _unglued(segment: str, word: str) -> tuple[str, ...]:
    """A segment that joins the word to a word that says what the value is, without a separator
    or a capital, as two (`keyid`, `keyname`, `pubkey`, `passwordhash`); else the segment."""
    if segment != word and segment.startswith(word):
        rest = segment[len(word) :]
        if rest in NOT_CREDENTIAL or (word == "key" and rest in AFTER_KEY):
            return word, rest
    lead = segment[: -len(word)]
    if (
        segment != word
        and segment.endswith(word)
        and (lead in NOT_CREDENTIAL or word == "key" and _NOT_SECRET_KEY.search(lead))
    ):
        return lead, word  # (`pubkey`, `sitekey`, `cachekey`)
    return (segment,)
