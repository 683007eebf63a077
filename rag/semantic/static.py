"""The code-static model: one vector per index term, trained on code (bench/train_static.py), a
text's vector the normalised weighted sum of its terms' vectors. Its terms are rag's own
(rag.text.tokenizer in code mode with the default settings: identifiers split, lowercased, stemmed),
so a passage costs one tokenization and a few numpy operations: thousands of passages a second,
against MiniLM's tens, and every passage's vector can be computed at ingest. numpy only; the weights
ship inside rag (rag/data/code-static.npz.gz: int8 rows, a float32 scale each)."""

from __future__ import annotations

import functools
import gzip
import io
import math
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from rag.semantic.vectors import DIMENSIONS
from rag.text.tokenizer import Tokenizer, TokenizerSettings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

NAME = "code-static"
RESOURCE = "data/code-static.npz.gz"  # inside the rag package
WEIGHTS = Path(__file__).resolve().parent.parent / RESOURCE  # where training writes it
# the tokenizer the vocabulary was built with, whatever the index's own settings: the model's terms
CODE_TOKENIZER = TokenizerSettings()
DIMENSIONS_TRAINED = DIMENSIONS  # the width of the vector cache's rows (rag.semantic.vectors)
# a passage's characters read, as in training: beyond a few thousand, a long passage's vector is
# the mean of everything it holds and says little of any one part
PASSAGE_CHARS = 3000
_BATCH = 64  # texts pooled in one numpy call
FORMAT = 1  # the layout of the weights file and of the pooling: part of the identity


def term_weights(counts: Sequence[int]) -> list[float]:
    """The weight of each term of a text by its count there (sublinear: a term said ten times is not
    ten times the text's subject)."""
    return [1.0 + math.log(n) for n in counts]


class StaticEmbedder:
    """The loaded term vectors (see load())."""

    def __init__(self) -> None:
        from rag.semantic.model import _import_numpy

        np = self.numpy = _import_numpy()
        data = np.load(io.BytesIO(gzip.decompress(_weights_bytes())))
        terms = bytes(data["terms"]).decode("utf-8").split("\n")
        self.terms = {t: i for i, t in enumerate(terms)}
        # the rows scaled back to float32 once: 4 bytes a value in memory, 1 on disk
        self.rows = (data["rows"].astype(np.float32) * data["scale"][:, None]).astype(np.float32)
        self.identity = identity()
        self._tokenizer = Tokenizer(CODE_TOKENIZER)

    def embed(self, texts: Sequence[str], batch: int = 0) -> Vectors:
        """Return one unit vector per text (rows in the order given), float32; a text with none of
        the model's terms gets the zero vector (cosine 0 with any other)."""
        np = self.numpy
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        terms = self.terms
        for start in range(0, len(texts), _BATCH):
            ids: list[int] = []
            weights: list[float] = []
            rows: list[int] = []  # the output row of each text with a known term
            offsets: list[int] = []  # where its terms start in ids
            for row in range(start, min(start + _BATCH, len(texts))):
                counts = self._tokenizer.counts(texts[row][:PASSAGE_CHARS])
                known = [(terms[t], n) for t, n in counts.items() if t in terms]
                if known:
                    rows.append(row)
                    offsets.append(len(ids))
                    ids.extend(i for i, _ in known)
                    weights.extend(term_weights([n for _, n in known]))
            if not rows:
                continue
            # one gather and one sum a batch, not a few numpy calls a text: a text's sum is its own,
            # whatever else is in the batch (reduceat adds each text's rows in order)
            weighted = self.rows[ids] * np.asarray(weights, dtype=np.float32)[:, None]
            summed = np.add.reduceat(weighted, offsets, axis=0)
            norms = np.linalg.norm(summed, axis=1, keepdims=True)
            out[rows] = summed / np.maximum(norms, 1e-12)
        vectors: Vectors = out
        return vectors


def _weights_bytes() -> bytes:
    from rag.semantic.model import ModelError

    try:
        return files("rag").joinpath(RESOURCE).read_bytes()
    except OSError:
        raise ModelError("The code-static weights are missing from rag — reinstall rag-code") from None


def _weights_stamp() -> str:
    """The weights file's size and the CRC-32 of its content (a gzip file's last 8 bytes hold both)."""
    try:
        with files("rag").joinpath(RESOURCE).open("rb") as f:
            f.seek(-8, 2)
            return f.read(8).hex()
    except OSError:
        return "missing"


def identity() -> str:
    """Return the identity code-static's vectors are cached under: other weights, other vectors."""
    return f"{NAME}/{FORMAT}/{_weights_stamp()}/{PASSAGE_CHARS}"


@functools.cache
def load() -> StaticEmbedder:
    """Return the model, loaded once per process."""
    return StaticEmbedder()
