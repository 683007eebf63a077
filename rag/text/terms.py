"""What is indexed for a chunk: its terms and their frequencies, from its text, breadcrumb,
path and symbol.

A passage is found by what it says and by where it lives. Besides the breadcrumb and the
text, code mode indexes two fields by adding to their terms' frequencies (the index stores
integer tfs only):

* the path: directories and file name without its extension, `path_weight` per term
  (``src/flask/sessions.py`` -> src, flask, session);
* the symbol: the qualified name or heading path, `symbol_weight` per term
  (``SecureCookieSessionInterface.open_session``, ``Configuration > SESSION_COOKIE_NAME``).

Plain mode indexes the breadcrumb and the text only.
"""

from __future__ import annotations

from rag.chunking.base import Chunk
from rag.text.tokenizer import Tokenizer


def indexed_text(chunk: Chunk) -> str:
    """Return the text that is tokenized for a chunk: its breadcrumb, then its text."""
    return f"{chunk.context}\n{chunk.text}" if chunk.context else chunk.text


def path_text(path: str) -> str:
    """Return the words of a path: its folders and its file name without the extension."""
    head, _, name = path.rpartition("/")
    stem = name.split(".", 1)[0] or name  # sessions.py -> sessions; .eslintrc -> .eslintrc
    return f"{head.replace('/', ' ')} {stem}"


def chunk_counts(chunk: Chunk, tokenizer: Tokenizer) -> dict[str, int]:
    """Return term -> frequency for one chunk, as stored in the index."""
    settings = tokenizer.settings
    # the breadcrumb and the text, tokenized as indexed_text joins them, without joining them
    texts = [chunk.context, chunk.text] if chunk.context else [chunk.text]
    if settings.mode != "plain":
        # a field of weight w counts w times: its text is tokenized w times, after the rest
        for field, weight in (
            (path_text(chunk.path), settings.path_weight),
            (chunk.symbol, settings.symbol_weight),
        ):
            if weight > 0 and field:
                texts.extend([field] * weight)
    return tokenizer.counts(*texts)
