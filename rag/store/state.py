"""The user's state file ($XDG_STATE_HOME/rag/indexes.json): the index an ingest run from a folder
(not one of its repositories) wrote, so that a query from there finds it."""

from __future__ import annotations

import json
import os


def _state_file() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "rag", "indexes.json")


def remembered() -> dict[str, str]:
    """The state file's folder -> index entries ({} when there is none, or it cannot be read)."""
    try:
        with open(_state_file(), encoding="utf-8") as fh:
            known = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, str)}


def remember(known: dict[str, str]) -> None:
    """Replace the state file's entries with `known`, atomically; a failure is ignored (remembering is a
    convenience: --index and the upward search still work)."""
    state = _state_file()
    try:
        os.makedirs(os.path.dirname(state), exist_ok=True)
        tmp = f"{state}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(known, indent=1))
        os.replace(tmp, state)
    except OSError:
        pass


def remember_index(cwd: str | os.PathLike[str], index_path: str | os.PathLike[str]) -> None:
    """Record that an ingest run from `cwd` wrote `index_path`, so a query from there finds it; forget
    the entries whose folder or index is gone."""
    known = {
        folder: index
        for folder, index in remembered().items()
        if os.path.isdir(folder) and os.path.isfile(index)
    }
    known[os.path.realpath(cwd)] = os.path.realpath(index_path)
    remember(known)
