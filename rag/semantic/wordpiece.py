"""The ids the semantic model's tokenizer gives a question that is plain ASCII, computed without the
tokenizers library: BERT's uncased normalization, its split on whitespace and punctuation, then
greedy longest-match WordPiece over the vocabulary of rag/data/minilm-vocab.txt.gz (the one in
minilm-tokenizer.json.gz, one token a line, by id). Loading the library and its tokenizer took a
query that embeds only its question about 35 ms, this vocabulary about 8; the ids are the same
(tests/test_wordpiece.py compares them). Any other text (beyond ASCII, or holding the spelling of a
special token such as [CLS], which the library matches before normalizing) is left to the library."""

from __future__ import annotations

import os
import string
import zlib

CLS, SEP, UNK = 101, 102, 100
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # the tokenizer's added tokens
MAX_WORD = 100  # characters: a longer word is [UNK] (the tokenizer's max_input_chars_per_word)
PREFIX = "##"  # of a piece that continues a word
# ASCII control characters are dropped, tab, newline and carriage return are spaces, and every
# punctuation character (Rust's is_ascii_punctuation: string.punctuation) is a word of its own
_CLEAN: dict[int, str | None] = {c: None for c in (*range(32), 127)}
_CLEAN |= {ord(c): " " for c in "\t\n\r"} | {ord(c): f" {c} " for c in string.punctuation}

_vocab: dict[str, int] | None = None


def vocabulary() -> dict[str, int]:
    """Return the vocabulary, token -> id (loaded once per process)."""
    global _vocab
    if _vocab is None:
        path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "minilm-vocab.txt.gz")
        with open(path, "rb") as f:
            tokens = zlib.decompress(f.read(), 16 + zlib.MAX_WBITS).decode().split("\n")
        _vocab = dict(zip(tokens, range(len(tokens) - 1)))  # the text ends with a newline
    return _vocab


def encode(text: str, max_tokens: int) -> list[int] | None:
    """Return [CLS], the WordPiece ids of `text` and [SEP], at most `max_tokens` ids in all (the
    pieces truncated first), or None when the tokenizers library must encode `text`."""
    if not text.isascii() or any(s in text for s in SPECIAL):
        return None
    vocab = vocabulary()
    ids = [CLS]
    room = max_tokens - 1  # [SEP] goes last
    for word in text.translate(_CLEAN).lower().split():
        for piece in _pieces(word, vocab):
            if len(ids) == room:
                return [*ids, SEP]
            ids.append(piece)
    return [*ids, SEP]


def _pieces(word: str, vocab: dict[str, int]) -> list[int]:
    """The word's longest-match-first pieces; one [UNK] when any part of it has no piece."""
    if len(word) > MAX_WORD:
        return [UNK]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = vocab.get(word[start:end] if start == 0 else PREFIX + word[start:end])
            if piece is not None:
                break
        else:
            return [UNK]
        pieces.append(piece)
        start = end
    return pieces
