"""The optimized-model cache (rag.semantic.model_cache) with the real model: built once and then used, one
folder per model identity, and a damaged, unwritable or unfaithful one never changes a vector; a
transformed (quantized) model is made once and kept beside its graph."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from rag.semantic import model as semantic
from rag.semantic import model_cache

# the package's model as it is, with no transform (the default model is its quantized run: below)
PLAIN = "minilm-l6-int8"
TEXTS = ["how do I remove a user's account?", "def delete_member(member):\n    db.members.drop(member.id)\n"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder of this test's own (the suite's shared one keeps its model)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "rag" / "onnx"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    """The vectors of TEXTS from the package's own file, as they were computed before the cache."""
    nowhere = tmp_path_factory.mktemp("no-cache") / "a file"
    nowhere.write_text("not a folder: no cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(nowhere))
        embedder = semantic.Embedder(PLAIN)
    assert embedder.model_file == _source()
    return embedder.embed(TEXTS)


def _source() -> str:
    return semantic.locate(semantic.MODELS[PLAIN])[0]


def _folder(cache: Path) -> Path:
    (folder,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    return folder


def test_the_optimized_model_is_saved_once_then_used(cache: Path, reference: np.ndarray) -> None:
    first = semantic.Embedder(PLAIN)
    assert first.model_file == _source()  # built from the package's file
    folder = _folder(cache)
    manifest = json.loads((folder / model_cache.MANIFEST).read_text())
    assert manifest["usable"] and onnxruntime_version() in manifest["key"]
    assert sorted(p.name for p in folder.iterdir()) == [
        model_cache.MANIFEST,
        model_cache.WEIGHTS,
        model_cache.GRAPH,
    ]
    second = semantic.Embedder(PLAIN)
    assert second.model_file == str(folder / model_cache.GRAPH)
    assert np.array_equal(first.embed(TEXTS), reference) and np.array_equal(second.embed(TEXTS), reference)
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # no temporary folder left


def onnxruntime_version() -> str:
    import onnxruntime  # type: ignore[import-untyped]

    return f"onnxruntime=={onnxruntime.__version__}"


def test_another_model_identity_gets_its_own_folder(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    semantic.Embedder(PLAIN)
    monkeypatch.setattr(semantic, "PASSAGE_TOKENS", 64)  # part of the identity
    other = semantic.Embedder(PLAIN)
    assert other.model_file == _source()  # nothing reused: built again, beside the first
    assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == 2
    assert model_cache.folder_for("a") != model_cache.folder_for("b")


def _truncate(folder: Path) -> None:
    with open(folder / model_cache.WEIGHTS, "r+b") as f:
        f.truncate(1000)


def _zero_weights(folder: Path) -> None:  # the same size: only the probe can tell
    size = (folder / model_cache.WEIGHTS).stat().st_size
    (folder / model_cache.WEIGHTS).write_bytes(bytes(size))


def _garbage_graph(folder: Path) -> None:
    size = (folder / model_cache.GRAPH).stat().st_size
    (folder / model_cache.GRAPH).write_bytes(b"\x07" * size)


def _garbage_manifest(folder: Path) -> None:
    (folder / model_cache.MANIFEST).write_text("{not json")


@pytest.mark.parametrize(
    "damage",
    [_truncate, _zero_weights, _garbage_graph, _garbage_manifest],
    ids=["truncated weights", "zeroed weights", "garbage graph", "garbage manifest"],
)
def test_a_damaged_cache_is_rebuilt_with_the_same_vectors(
    cache: Path, reference: np.ndarray, damage: Callable[[Path], None]
) -> None:
    semantic.Embedder(PLAIN)
    damage(_folder(cache))
    rebuilt = semantic.Embedder(PLAIN)
    assert rebuilt.model_file == _source() and np.array_equal(rebuilt.embed(TEXTS), reference)
    again = semantic.Embedder(PLAIN)
    assert again.model_file == str(_folder(cache) / model_cache.GRAPH)
    assert np.array_equal(again.embed(TEXTS), reference)


def test_an_unwritable_cache_folder_loads_the_package_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: np.ndarray
) -> None:
    (tmp_path / "a file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a file"))
    embedder = semantic.Embedder(PLAIN)
    assert embedder.model_file == _source() and np.array_equal(embedder.embed(TEXTS), reference)


def test_a_saved_model_that_differs_from_the_original_is_never_used(cache: Path) -> None:
    import onnxruntime

    digests = iter(["the original's", "the saved model's"])
    key = "a model whose optimized form computes other bits"

    session, where = model_cache.open_session(onnxruntime, _source(), key, _options, lambda s: next(digests))
    assert where == _source() and session is not None
    manifest = json.loads((Path(model_cache.folder_for(key)) / model_cache.MANIFEST).read_text())
    assert manifest["usable"] is False
    _, where = model_cache.open_session(
        onnxruntime, _source(), key, _options, lambda s: pytest.fail("the saved model was run")
    )
    assert where == _source()  # straight to the package's file, no rebuild


def test_a_build_that_never_finished_is_swept_by_the_next(cache: Path) -> None:
    cache.mkdir(parents=True)
    (cache / ".build-killed").mkdir()
    (cache / ".build-killed" / model_cache.WEIGHTS).write_bytes(b"half")
    os.utime(cache / ".build-killed", (0, 0))
    (cache / ".build-running").mkdir()  # another process's, still under way
    semantic.Embedder(PLAIN)
    assert sorted(p.name for p in cache.iterdir() if p.name.startswith(".")) == [".build-running"]


def test_the_cache_root_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert model_cache.cache_root() == os.path.join(str(tmp_path), "rag", "onnx")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert model_cache.cache_root() == os.path.join(os.path.expanduser("~"), ".cache", "rag", "onnx")


def _copy(ort: object, source: str, dest: str, work: str) -> None:
    """A transform that makes the same model (as quantizing makes another): its output is known."""
    assert os.path.isdir(work)
    shutil.copyfile(source, dest)


def test_a_transformed_model_is_made_once_and_kept_beside_its_graph(cache: Path) -> None:
    import onnxruntime

    made: list[str] = []

    def transform(ort: object, source: str, dest: str, work: str) -> None:
        made.append(source)
        _copy(ort, source, dest, work)

    key = "a transformed model"
    session, where = model_cache.open_session(
        onnxruntime, _source(), key, _options, semantic._probe, transform
    )
    folder = Path(model_cache.folder_for(key))
    assert made == [_source()] and where == str(folder / model_cache.BASE)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [model_cache.BASE, model_cache.GRAPH, model_cache.MANIFEST, model_cache.WEIGHTS]
    )
    _, where = model_cache.open_session(onnxruntime, _source(), key, _options, semantic._probe, transform)
    assert where == str(folder / model_cache.GRAPH) and made == [_source()]  # not made again


def test_a_damaged_transformed_model_is_made_again(cache: Path) -> None:
    import onnxruntime

    key = "a transformed model whose optimized graph is not usable"
    model_cache.open_session(onnxruntime, _source(), key, _options, semantic._probe, _copy)
    folder = Path(model_cache.folder_for(key))
    manifest = json.loads((folder / model_cache.MANIFEST).read_text())
    (folder / model_cache.MANIFEST).write_text(json.dumps({**manifest, "usable": False}))
    _, where = model_cache.open_session(onnxruntime, _source(), key, _options, semantic._probe, _copy)
    assert where == str(folder / model_cache.BASE)  # the transformed file, not the package's
    size = (folder / model_cache.BASE).stat().st_size
    (folder / model_cache.BASE).write_bytes(b"\x07" * size)  # sizes agree: only loading it tells
    session, where = model_cache.open_session(onnxruntime, _source(), key, _options, semantic._probe, _copy)
    assert where == str(folder / model_cache.BASE) and semantic._probe(session) == manifest["probe"]
    assert json.loads((folder / model_cache.MANIFEST).read_text())["usable"]  # rebuilt whole


def test_without_a_cache_folder_a_transformed_model_is_made_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime

    (tmp_path / "a file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a file"))
    made: list[str] = []

    def transform(ort: object, source: str, dest: str, work: str) -> None:
        made.append(dest)
        _copy(ort, source, dest, work)

    for _ in range(2):
        session, where = model_cache.open_session(
            onnxruntime, _source(), "k", _options, semantic._probe, transform
        )
        assert session is not None and where == made[-1] and not os.path.exists(where)  # its scratch is gone
    assert len(made) == 2


def _options() -> object:
    import onnxruntime

    return onnxruntime.SessionOptions()


def test_the_quantized_model_is_built_once_quietly_and_ranks_as_the_original(
    cache: Path, reference: np.ndarray, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging

    assert semantic.DEFAULT_EMBEDDING_MODEL == "minilm-l6-q8"
    # a process that set up no logging: the quantizer's logging.warning would print its advice
    # and leave a handler on the root logger (logging.basicConfig)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    key = semantic._session_key(semantic.identity("minilm-l6-q8"))
    assert not model_cache.ready(key, transformed=True)
    first = semantic.Embedder("minilm-l6-q8")
    folder = Path(first.model_file).parent
    assert first.model_file == str(folder / model_cache.BASE) and model_cache.ready(key, transformed=True)
    assert capfd.readouterr().err == "" and logging.getLogger().handlers == []
    second = semantic.Embedder("minilm-l6-q8")
    assert second.model_file == str(folder / model_cache.GRAPH)
    vectors = first.embed(TEXTS)
    assert np.array_equal(second.embed(TEXTS), vectors)
    assert not np.array_equal(vectors, reference)  # another model: its vectors are its own
    assert (vectors * reference).sum(axis=1).min() > 0.98  # ... and close to the original's
    assert semantic.prepare("minilm-l6-q8") is None  # built: nothing to prepare


def test_a_quantized_model_has_an_identity_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnx
    import onnxruntime

    first, plain = semantic.identity("minilm-l6-q8"), semantic.identity(PLAIN)
    assert first != plain
    assert f"onnxruntime=={onnxruntime.__version__}" in first and f"onnx=={onnx.__version__}" in first
    monkeypatch.setattr(semantic, "QUANTIZATION", semantic.QUANTIZATION + 1)  # another recipe
    second = semantic.identity("minilm-l6-q8")
    # another kind of int8 products than this CPU's (x86 without VNNI saturates)
    other = "vnni" if semantic.int8_kernels() == "x86" else "x86"
    monkeypatch.setattr(semantic, "int8_kernels", lambda: other)
    third = semantic.identity("minilm-l6-q8")
    assert len({first, second, third}) == 3
    assert semantic.identity(PLAIN) == plain  # the unquantized one depends on neither


def test_a_quantizer_that_fails_names_its_fix(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from onnxruntime import quantization

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("unsupported opset\nmore detail")

    monkeypatch.setattr(quantization, "quantize_dynamic", broken)
    with pytest.raises(semantic.ModelError) as caught:
        semantic.Embedder("minilm-l6-q8")
    assert str(caught.value) == (
        "The semantic model cannot be quantized (ValueError: unsupported opset) — pip install -U onnx "
        "onnxruntime, or RAG_SEMANTIC_MODEL=minilm-l6-int8 to run it unquantized"
    )
    assert not [p for p in cache.iterdir() if not p.name.startswith(".")]  # nothing half-built kept


def test_a_transform_without_room_in_the_cache_is_made_in_the_temporary_folder(cache: Path) -> None:
    import onnxruntime

    made: list[str] = []

    def transform(ort: object, source: str, dest: str, work: str) -> None:
        if Path(work).is_relative_to(cache):
            raise OSError(28, "No space left on device")
        made.append(dest)
        _copy(ort, source, dest, work)

    session, where = model_cache.open_session(
        onnxruntime, _source(), "k", _options, semantic._probe, transform
    )
    assert session is not None and where == made[0] and not os.path.exists(where)
    assert not model_cache.ready("k", transformed=True)


def test_prepare_keeps_nothing_it_could_not_keep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a file"))
    assert not model_cache.writable()
    assert semantic.prepare(PLAIN) is None  # each query would build it again anyway: no time spent now


@pytest.mark.parametrize("module", ["onnxruntime", "onnx", "numpy"])
def test_a_module_version_is_told_without_importing_it(module: str) -> None:
    import importlib

    assert semantic.module_version(module) == importlib.import_module(module).__version__
    assert semantic.module_version("no_such_module_here") == "?"
