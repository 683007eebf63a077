from __future__ import annotations

from collections import Counter

import pytest

from rag.tokens import Tokenizer, TokenizerSettings, idf_weight, stem, tf_weight

PLAIN = Tokenizer(TokenizerSettings(mode="plain"))
CODE = Tokenizer(TokenizerSettings(mode="code"))
CODE_PARTS_ONLY = Tokenizer(TokenizerSettings(mode="code", identifiers=False))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("For billing, ask billing support or the billing team.",
         ["billing", "ask", "billing", "support", "billing", "team"]),
        ("The Refunds go back", ["refunds", "go", "back"]),
        ("user_id parseHTTPResponse", ["user", "id", "parsehttpresponse"]),
        ("naïve café Größe 東京 42", ["naïve", "café", "größe", "東京", "42"]),
        ("a an and or of to in is for on with the", []),
        ("", []),
    ],
    ids=["worked-example", "lowercase", "no-splitting", "any-script", "stopwords-only", "empty"],
)
def test_plain_mode(text: str, expected: list[str]) -> None:
    assert PLAIN.tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("parseHTTPResponse", ["pars", "http", "respons"]),
        ("user_id", ["user", "id"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("getHTTP2Client", ["get", "http", "2", "client"]),
        ("__init__", ["init"]),
        ("MAX_RETRIES", ["max", "retry"]),
        ("calculating the totals", ["calculat", "total"]),
        ("Naïve_Café", ["naïv", "café"]),
    ],
    ids=["camel-acronym", "snake", "leading-acronym", "digits", "dunder", "screaming-snake", "stem+stopword",
         "non-ascii-snake"],
)
def test_code_mode_splits_and_stems(text: str, expected: list[str]) -> None:
    assert CODE_PARTS_ONLY.tokenize(text) == expected


def test_code_mode_keeps_whole_identifier_too() -> None:
    assert CODE.tokenize("validateToken") == ["validat", "token", "validatetoken"]
    assert CODE.tokenize("token") == ["token"]  # a plain word is not doubled


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("queries", "query"), ("classes", "class"), ("tokens", "token"), ("status", "status"),
        ("class", "class"), ("axis", "axis"), ("running", "run"), ("calling", "call"),
        ("created", "creat"), ("create", "creat"), ("creates", "creat"), ("creating", "creat"),
        ("calculating", "calculat"), ("handler", "handler"), ("use", "use"), ("uses", "use"),
        ("matches", "match"), ("copied", "copy"), ("free", "free"), ("ping", "ping"), ("bed", "bed"),
    ],
)
def test_stemmer_is_conservative(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize("tokenizer", [PLAIN, CODE], ids=["plain", "code"])
def test_counts_equal_counter_of_tokens(tokenizer: Tokenizer) -> None:
    text = "def parse_user(userId): return parseUser(user_id) + users['the_user'] # parse users"
    assert tokenizer.counts(text) == Counter(tokenizer.tokenize(text))


def test_weights_follow_the_formulas() -> None:
    assert tf_weight(1) == 1.0
    assert tf_weight(3) == pytest.approx(2.0986122886681098, abs=1e-15)
    assert idf_weight(4, 4) == 1.0  # a term in every document keeps weight 1
    assert idf_weight(4, 1) == pytest.approx(1.916290731874155, abs=1e-15)


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown tokenizer mode"):
        TokenizerSettings.from_dict({"mode": "fancy", "stem": True, "identifiers": True})
