"""Model backends behind one small interface (rag.answer.generation): the Anthropic SDK
(rag.answer.anthropic_api) and `claude -p` (rag.answer.claude_cli), and the choice between them.

The `anthropic` SDK is imported only when a call is made: it is slow to import, and the
retrieval-only path never needs it. For the same reason subprocess and tempfile load only when used.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from rag.answer.anthropic_api import AnthropicBackend
from rag.answer.claude_cli import ClaudeCliBackend, parse_claude_result
from rag.answer.defaults import BACKENDS, DEFAULT_MODEL
from rag.answer.generation import (
    ApiCitation,
    Backend,
    Generation,
    OnSearch,
    OnText,
    add_usage,
    render_text_prompt,
)
from rag.errors import BackendError

__all__ = [
    "DEFAULT_MODEL",
    "AnthropicBackend",
    "ApiCitation",
    "Backend",
    "ClaudeCliBackend",
    "Generation",
    "OnSearch",
    "OnText",
    "add_usage",
    "parse_claude_result",
    "render_text_prompt",
    "resolve_backend",
]


def resolve_backend(
    name: str,
    model: str = DEFAULT_MODEL,
    env: Mapping[str, str] | None = None,
) -> Backend | None:
    """Return the backend `name` stands for; None for `none`.

    `auto` is the SDK when ANTHROPIC_API_KEY is set, else `claude` when it is on PATH, else none.
    """
    import shutil

    env = os.environ if env is None else env
    key = (env.get("ANTHROPIC_API_KEY") or "").strip() or None  # a pasted key's newline is not part of it
    if name == "none":
        return None
    if key is not None and (" " in key or not key.isprintable()):
        # an HTTP header cannot hold it: the SDK would fail as if the network were down
        raise BackendError("ANTHROPIC_API_KEY holds a space or a line break — set it to the key alone")
    if name == "anthropic":
        if key is None:
            raise BackendError(
                "ANTHROPIC_API_KEY is not set — export it, or use --backend claude or --backend none"
            )
        return AnthropicBackend(model=model, api_key=key)
    claude = shutil.which("claude", path=env.get("PATH"))
    if name == "claude":
        if claude is None:
            raise BackendError(
                "`claude` is not on PATH — install Claude Code, or use --backend anthropic or --backend none"
            )
        return ClaudeCliBackend(executable=claude, model=model)
    if name == "auto":
        if key is not None:
            return AnthropicBackend(model=model, api_key=key)
        return ClaudeCliBackend(executable=claude, model=model) if claude else None
    raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")
