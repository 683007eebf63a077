"""The tokenizer (rag.text.tokenizer): plain and code modes, identifiers split, stemming, stopwords."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from rag.text.tokenizer import QUERY_STOPWORDS, Tokenizer, TokenizerSettings, porter2, stem
from rag.weights import idf_weight, tf_weight

PLAIN = Tokenizer(TokenizerSettings(mode="plain"))
CODE = Tokenizer(TokenizerSettings(mode="code"))
CODE_PARTS_ONLY = Tokenizer(TokenizerSettings(mode="code", identifiers=False))
# the code tokenizer as it was before the levers of docs/levers.md: suffix stemmer, every length
SUFFIX_PARTS_ONLY = Tokenizer(
    TokenizerSettings(mode="code", stem="suffix", identifiers=False, min_length=1, query_stopwords=False)
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "For billing, ask billing support or the billing team.",
            ["billing", "ask", "billing", "support", "billing", "team"],
        ),
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
    ids=[
        "camel-acronym",
        "snake",
        "leading-acronym",
        "digits",
        "dunder",
        "screaming-snake",
        "stem+stopword",
        "non-ascii-snake",
    ],
)
def test_code_mode_splits_and_stems(text: str, expected: list[str]) -> None:
    assert SUFFIX_PARTS_ONLY.tokenize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("parseHTTPResponse", ["pars", "http", "respons"]),
        ("getHTTP2Client", ["get", "http", "client"]),  # the 1-letter part 2 is dropped
        ("isn't I x", ["isn"]),
        ("MAX_RETRIES", ["max", "retri"]),
        ("calculating the totals", ["calcul", "total"]),
        ("generously organized", ["generous", "organiz"]),
        ("naïve café 東京 42 v2", ["naïve", "café", "東京", "42"]),
    ],
    ids=[
        "camel-acronym",
        "digits",
        "one-letter",
        "screaming-snake",
        "stem+stopword",
        "derivational",
        "non-ascii-unstemmed",
    ],
)
def test_default_code_mode(text: str, expected: list[str]) -> None:
    assert CODE_PARTS_ONLY.tokenize(text) == expected


def test_underscores_at_the_ends_of_a_name_add_nothing() -> None:
    assert CODE.tokenize("__init__ _private_cache __ x__y__") == [
        "init",
        "privat",
        "cach",
        "privatecache",
        "xy",
    ]
    assert CODE.tokenize("__init__ _private_cache") == CODE.tokenize("init private_cache")


def test_code_mode_keeps_whole_identifier_too() -> None:
    assert CODE.tokenize("validateToken") == ["valid", "token", "validatetoken"]
    assert CODE.tokenize("token") == ["token"]  # a plain word is not doubled
    assert CODE.tokenize("getX") == ["get", "getx"]  # the whole keeps its 1-letter part


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How does the session cookie work?", {"session": 1, "cooki": 1}),
        ("What happens when I use get_or_create?", {"get": 1, "creat": 1, "getorcreate": 1}),
        ("Why isn't it saved", {"isn": 1, "save": 1}),
        ("how what which", {}),
    ],
    ids=["question-words", "kept-inside-identifier", "one-letter-and-pronoun", "only-question-words"],
)
def test_query_drops_question_words(question: str, expected: dict[str, int]) -> None:
    assert CODE.query_counts(question) == expected


def test_query_stopwords_off_and_plain_mode_keep_every_word() -> None:
    keep = Tokenizer(TokenizerSettings(query_stopwords=False))
    assert (
        keep.query_counts("How does it work")
        == keep.counts("How does it work")
        == {"how": 1, "doe": 1, "it": 1, "work": 1}
    )
    assert PLAIN.query_counts("How does billing work") == {"how": 1, "does": 1, "billing": 1, "work": 1}
    assert {"how", "does", "what", "when", "which", "happens", "work", "use", "get"} <= QUERY_STOPWORDS


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("queries", "query"),
        ("classes", "class"),
        ("tokens", "token"),
        ("status", "status"),
        ("class", "class"),
        ("axis", "axis"),
        ("running", "run"),
        ("calling", "call"),
        ("created", "creat"),
        ("create", "creat"),
        ("creates", "creat"),
        ("creating", "creat"),
        ("calculating", "calculat"),
        ("handler", "handler"),
        ("use", "use"),
        ("uses", "use"),
        ("matches", "match"),
        ("copied", "copy"),
        ("free", "free"),
        ("ping", "ping"),
        ("bed", "bed"),
    ],
)
def test_stemmer_is_conservative(word: str, expected: str) -> None:
    assert stem(word) == expected


# Porter2 pairs from the published Snowball English vocabulary and the algorithm's own
# special cases (https://snowballstem.org/algorithms/english/stemmer.html).
PORTER2_PAIRS = [
    ("consign", "consign"),
    ("consigned", "consign"),
    ("consigning", "consign"),
    ("consignment", "consign"),
    ("consist", "consist"),
    ("consisted", "consist"),
    ("consistency", "consist"),
    ("consistent", "consist"),
    ("knack", "knack"),
    ("knackeries", "knackeri"),
    ("knaves", "knave"),
    ("generously", "generous"),
    ("skies", "sky"),
    ("dying", "die"),
    ("cries", "cri"),
    ("ties", "tie"),
    ("gaps", "gap"),
    ("kiwis", "kiwi"),
    ("gas", "gas"),
    ("this", "this"),
    ("inning", "inning"),
    ("outing", "outing"),
    ("proceed", "proceed"),
    ("succeeded", "succeed"),
    ("hoped", "hope"),
    ("hopping", "hop"),
    ("agreed", "agre"),
    ("caresses", "caress"),
    ("universal", "universal"),
    ("university", "universiti"),
    ("generate", "generat"),
    ("news", "news"),
    ("running", "run"),
    ("sized", "size"),
    ("queries", "queri"),
    ("validate", "valid"),
    ("yes", "yes"),
    ("by", "by"),
    ("cry", "cri"),
    ("say", "say"),
    ("ability", "abil"),
    ("rational", "ration"),
]


@pytest.mark.parametrize(("word", "expected"), PORTER2_PAIRS, ids=[w for w, _ in PORTER2_PAIRS])
def test_porter2_known_pairs(word: str, expected: str) -> None:
    assert porter2(word) == expected


def test_porter2_matches_snowball() -> None:
    snowballstemmer = pytest.importorskip("snowballstemmer")
    oracle = snowballstemmer.stemmer("english")
    root = Path(__file__).resolve().parent.parent
    words = {
        w
        for p in [*root.glob("rag/**/*.py"), *root.glob("*.md"), *root.glob("tests/*.py")]
        for w in re.findall(r"[a-z]+", p.read_text(encoding="utf-8").lower())
    }
    words |= {w for w, _ in PORTER2_PAIRS}
    assert len(words) > 1000
    wrong = {w: (porter2(w), oracle.stemWord(w)) for w in sorted(words) if porter2(w) != oracle.stemWord(w)}
    assert wrong == {}


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
    with pytest.raises(ValueError, match="unknown stemmer"):
        TokenizerSettings.from_dict({"mode": "code", "stem": "lancaster"})


def test_settings_round_trip_and_old_manifests_read_as_before() -> None:
    assert TokenizerSettings.from_dict(TokenizerSettings().to_dict()) == TokenizerSettings()
    old = TokenizerSettings.from_dict({"mode": "code", "stem": True, "identifiers": True})
    assert old == TokenizerSettings(
        stem="suffix", min_length=1, query_stopwords=False, path_weight=0, symbol_weight=0
    )
    assert TokenizerSettings.from_dict({"mode": "code", "stem": False, "identifiers": True}).stem == "none"


@pytest.mark.parametrize("tokenizer", [PLAIN, CODE, SUFFIX_PARTS_ONLY], ids=["plain", "code", "suffix"])
def test_ascii_text_has_the_terms_of_any_text(tokenizer: Tokenizer) -> None:
    # every ASCII character between words; a no-break space (not a word character, not ASCII)
    # sends the same text down the path that any script takes
    text = "".join(f"getHTTPValue{chr(c)}user_ids{c}{chr(c)}__x__{chr(c)}" for c in range(128))
    anyscript = text + "\u00a0"
    assert tokenizer.tokenize(text) == tokenizer.tokenize(anyscript)
    assert list(tokenizer.counts(text).items()) == list(tokenizer.counts(anyscript).items())
