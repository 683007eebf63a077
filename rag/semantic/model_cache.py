"""The semantic model as onnxruntime optimizes it, saved once in the user cache folder
(${XDG_CACHE_HOME:-~/.cache}/rag/onnx/KEY/), its weights in a file beside the graph: a session made
from it skips parsing the 69 MB protobuf and optimizing the graph again (about 150 ms down to 40 on
2 cores), and computes the same outputs bit for bit.

One folder per key (the model's identity, onnxruntime's version, the platform, the optimization
level), written under a temporary name and renamed into place, so that no reader sees half of one. Every load runs a probe (fixed token ids) and compares the digest of its output with the one the
original model gave when the folder was built: a damaged folder is rebuilt, and a folder whose own
model did not reproduce the original when it was built is marked so that the original file is loaded
instead. A cache folder that cannot be written is no error either: the original file is loaded.

A model that is run transformed (quantized: rag.semantic.model) has its transformed file in the folder too
(BASE): that file is "the original" the probe compares with, and what is loaded when the optimized
graph is not usable; with no cache folder to be had, it is made again, in a temporary folder, by
every process that loads it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from typing import Any

GRAPH = "model.onnx"
WEIGHTS = "model.data"  # the initializers, beside the graph (ORT maps the file rather than parsing it)
MANIFEST = "manifest.json"
BASE = "base.onnx"  # the transformed model the graph was optimized from, when there is a transform
FORMAT = 1  # of the folder; part of its key
STALE_SECONDS = 3600  # a temporary folder older than this was left by a build that never finished

Session = Any  # an onnxruntime.InferenceSession (onnxruntime has no type stubs)
# (onnxruntime, the source file, the file to write, a folder for its work files) -> None
Transform = Callable[[Any, str, str, str], None]


def cache_root() -> str:
    """Return the folder that holds the optimized models."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rag", "onnx")


def folder_for(key: str) -> str:
    """Return the folder of the optimized model saved under `key`."""
    return os.path.join(cache_root(), hashlib.sha1(f"{FORMAT}/{key}".encode()).hexdigest()[:20])


def open_session(
    ort: Any,
    source: str,
    key: str,
    options: Callable[[], Any],
    probe: Callable[[Session], str],
    transform: Transform | None = None,
    check: Callable[[str], None] | None = None,
) -> tuple[Session, str]:
    """Return a session of the model at `source` and the file it was made from: the optimized model
    saved under `key` when it passes the probe, else `source` (saving its optimized form for next time).

    `options` makes the session options, `probe` runs a session on fixed input and returns a digest
    of the output, `transform` (when given) writes the model to run from `source` (see the module's
    docstring), `check` (when given) is called with `source` before anything is made from it, and
    raises when the file must not be run. Errors loading `source` itself propagate; the cache's own
    never do. A saved folder is trusted as it was built: from a file that passed `check`.
    """
    folder = folder_for(key)
    manifest = _manifest(folder, key, transform is not None)
    if manifest is not None:
        if not manifest["usable"] and transform is None:
            if check is not None:
                check(source)
            return _session(ort, source, options()), source
        # the transformed model, or the optimized graph
        path = os.path.join(folder, GRAPH if manifest["usable"] else BASE)
        try:
            session = _session(ort, path, options())
            if probe(session) == manifest["probe"]:
                return session, path
        except Exception:  # damaged in a way its sizes do not show: rebuilt below
            pass
    # a folder found whole but failing its probe is damaged: replaced by the new build
    if check is not None:
        check(source)
    return _build(ort, source, folder, key, options, probe, transform, replace=manifest is not None)


def ready(key: str, transformed: bool = False) -> bool:
    """Return whether the folder saved under `key` looks whole (open_session still probes it)."""
    return _manifest(folder_for(key), key, transformed) is not None


def _session(ort: Any, path: str, options: Any) -> Session:
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _manifest(folder: str, key: str, transformed: bool) -> dict[str, Any] | None:
    """The folder's manifest when it is whole: written for `key`, its files of the sizes it lists."""
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
        if not isinstance(manifest, dict) or manifest.get("key") != key:
            return None
        sizes = manifest["sizes"]
        if any(os.path.getsize(os.path.join(folder, name)) != sizes[name] for name in _files(transformed)):
            return None
        if not isinstance(manifest["probe"], str) or not isinstance(manifest["usable"], bool):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest


def _files(transformed: bool) -> tuple[str, ...]:
    return (GRAPH, WEIGHTS, BASE) if transformed else (GRAPH, WEIGHTS)


def _build(
    ort: Any,
    source: str,
    folder: str,
    key: str,
    options: Callable[[], Any],
    probe: Callable[[Session], str],
    transform: Transform | None,
    replace: bool,
) -> tuple[Session, str]:
    """Load `source` (transformed), save its optimized form into `folder` on the way, and return the
    session and the file it was made from. A whole folder another process installed meanwhile is
    kept, unless `replace` (the folder there was found damaged)."""
    root = os.path.dirname(folder)
    try:
        os.makedirs(root, exist_ok=True)
        _sweep(root)
        work = tempfile.mkdtemp(prefix=".build-", dir=root)
    except OSError:  # no cache folder to be had
        return _uncached(ort, source, options, transform)
    try:
        base = source
        if transform is not None:
            base = os.path.join(work, BASE)
            try:
                transform(ort, source, base, work)
            except OSError:  # no room in the cache folder: made in the system's temporary one, not kept
                return _uncached(ort, source, options, transform)
        saving = options()
        saving.optimized_model_filepath = os.path.join(work, GRAPH)
        saving.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS)
        saving.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        try:
            session = _session(ort, base, saving)
        except Exception:  # the folder could not be written (a full disk): load as before
            return _session(ort, base, options()), base  # a damaged source raises here, as it always did
        expected = probe(session)
        try:
            usable = probe(_session(ort, os.path.join(work, GRAPH), options())) == expected
        except Exception:  # as unusable as other bits: marked, so that no load tries it again
            usable = False
        try:
            sizes = {
                name: os.path.getsize(os.path.join(work, name)) for name in _files(transform is not None)
            }
            with open(os.path.join(work, MANIFEST), "w", encoding="utf-8") as f:
                json.dump({"key": key, "probe": expected, "usable": usable, "sizes": sizes}, f)
            if replace or _manifest(folder, key, transform is not None) is None:
                _install(work, folder)  # else another process's build is in place, and will do
            if transform is not None and _manifest(folder, key, True) is not None:
                base = os.path.join(folder, BASE)  # this build's, or another's: the same model
        except OSError:
            pass
        return session, base
    finally:
        shutil.rmtree(work, ignore_errors=True)  # already gone once installed


def _uncached(
    ort: Any, source: str, options: Callable[[], Any], transform: Transform | None
) -> tuple[Session, str]:
    """A session of the model at `source` (transformed in a temporary folder), nothing kept."""
    if transform is None:
        return _session(ort, source, options()), source
    with tempfile.TemporaryDirectory(prefix="rag-model-") as scratch:
        base = os.path.join(scratch, BASE)
        transform(ort, source, base, scratch)  # an OSError here (no room anywhere) is the caller's to report
        return _session(ort, base, options()), base


def writable() -> bool:
    """Return whether the cache folder can be made and written (else nothing built is kept)."""
    root = cache_root()
    try:
        os.makedirs(root, exist_ok=True)
    except OSError:
        return False
    return os.access(root, os.W_OK)


def _sweep(root: str) -> None:
    """Remove the temporary folders of builds that were killed before they finished (an hour old)."""
    now = time.time()
    for entry in os.scandir(root):
        try:
            if entry.name.startswith((".build-", ".old-")) and now - entry.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            pass


def _install(work: str, folder: str) -> bool:
    """Rename the built folder into place, moving the one there (damaged: see _build) aside first;
    False when another process's build took the place."""
    try:
        os.rename(work, folder)
        return True
    except OSError:
        pass
    aside = tempfile.mkdtemp(prefix=".old-", dir=os.path.dirname(folder))
    try:
        os.rename(folder, os.path.join(aside, "old"))
        os.rename(work, folder)
        return True
    except OSError:  # another process is rebuilding it too: its folder will do
        return False
    finally:
        shutil.rmtree(aside, ignore_errors=True)
