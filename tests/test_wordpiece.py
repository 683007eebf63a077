"""rag.semantic.wordpiece gives the ids the tokenizers library gives (the semantic model's own tokenizer):
on every question and search of the shipped sets that is ASCII, on made-up edge cases and on random ASCII;
it declines what only the library can encode; its vocabulary is the one in the tokenizer file."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest

from rag.semantic import model as semantic
from rag.semantic import wordpiece

PROJECT = Path(__file__).resolve().parent.parent
MAX_TOKENS = 128


@pytest.fixture(scope="module")
def library() -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(semantic._tokenizer_json())
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer


def _same(library: Any, text: str, max_tokens: int = MAX_TOKENS) -> None:
    if max_tokens != MAX_TOKENS:
        library.enable_truncation(max_tokens)
    try:
        assert wordpiece.encode(text, max_tokens) == library.encode(text).ids, repr(text)
    finally:
        library.enable_truncation(MAX_TOKENS)


@pytest.mark.parametrize(
    "text",
    [
        "how are passages scored?",
        "",
        "   ",
        "Where is QuerySet.get_or_create() defined?",
        "UNAFFABLE unaffable",  # pieces: un ##aff ##able
        "snake_case_name and camelCaseName and kebab-case-name",
        "x" * 101,  # past max_input_chars_per_word: [UNK]
        "x" * 100,
        "qzxqzxqzx 12345678901234567890",
        "tab\there\nnewline\rreturn \x0bvertical\x0cform\x1cfile\x00nul\x7fdel",
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        "[cls] lower-case spellings of special tokens [sep",  # not special: only the exact ones are
        "a " * 200,  # truncated to 128 ids
        "def f(x):\n    return x ** 2  # squares\n",
    ],
    ids=lambda t: repr(t[:30]),
)
def test_the_same_ids_as_the_library(library: Any, text: str) -> None:
    _same(library, text)


@pytest.mark.parametrize("max_tokens", [2, 3, 16, 256])
def test_truncation_keeps_cls_and_sep(library: Any, max_tokens: int) -> None:
    _same(library, "the quick brown fox jumps over the lazy dog " * 30, max_tokens)


def test_every_ascii_question_and_search_of_the_shipped_sets(library: Any) -> None:
    # bench/data/searches: the questions of the dev and natural sets and the searches a model wrote for them
    files = sorted((PROJECT / "bench" / "data" / "searches").glob("*.jsonl"))
    assert files
    texts = [
        text
        for f in files
        for row in map(json.loads, f.read_text(encoding="utf-8").splitlines())
        for text in (row["question"], row["search"])
    ]
    checked = [t for t in texts if wordpiece.encode(t, MAX_TOKENS) is not None]
    assert len(checked) > 0.9 * len(texts)
    for t in checked:
        _same(library, t)


def test_random_ascii(library: Any) -> None:
    rng = random.Random(21)
    alphabet = string.printable + "\x00\x01\x0b\x0c\x1b\x1f\x7f"
    words = [w for w in list(wordpiece.vocabulary())[1000:6000] if w.isascii()]
    for _ in range(2000):
        parts = [
            rng.choice(words) if rng.random() < 0.5 else rng.choice(alphabet)
            for _ in range(rng.randint(0, 40))
        ]
        _same(library, "".join(parts) if rng.random() < 0.5 else " ".join(parts))


@pytest.mark.parametrize(
    "text", ["café au lait", "naïve", "日本語", "[CLS] inside", "a [MASK] here", "ends with [SEP]", "\ufffd"]
)
def test_what_only_the_library_encodes_is_declined(text: str) -> None:
    assert wordpiece.encode(text, MAX_TOKENS) is None


def test_the_vocabulary_is_the_tokenizer_files(library: Any) -> None:
    assert wordpiece.vocabulary() == library.get_vocab(with_added_tokens=True)


def test_a_question_is_embedded_the_same_either_way() -> None:
    embedder = semantic.Embedder(semantic.DEFAULT_EMBEDDING_MODEL)
    question = "how does the session cookie get signed?"
    alone = embedder.embed([question])  # by rag.semantic.wordpiece: the library is not loaded yet
    assert embedder._tokenizer is None
    embedder.embed(["a passage", "another one"])  # loads the library
    assert embedder._tokenizer is not None
    import numpy as np

    assert np.array_equal(alone, embedder.embed([question]))
