"""Shared fixtures: a clean environment for every test, and small repositories on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

FAKE_CLAUDE = Path(__file__).parent / "data" / "fake_claude.py"  # a stand-in for `claude -p`
WORKED_EXAMPLE = {
    "refunds.txt": "Refunds go back to the original card after billing approves them.\n",
    "team.txt": "For billing, ask billing support or the billing team.\n",
    "invoices.txt": "Billing sends invoices monthly.\n",
    "plans.txt": "Billing plans renew each year.\n",
}


@pytest.fixture(scope="session")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the whole run: the semantic model's optimized form is built once."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def clean_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, user_cache: Path
) -> None:
    """Remove user settings and keys, and point user state and caches at temporary folders."""
    for name in (
        "ANTHROPIC_API_KEY",
        "RAG_BACKEND",
        "RAG_MODEL",
        "RAG_INDEX",
        "RAG_GROUPS",
        "RAG_SCORING",
        "RAG_DEBUG",
        "RAG_SEMANTIC_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    # the suite pins the lexical order; tests/test_semantic.py runs the semantic stage itself
    monkeypatch.setenv("RAG_RERANK", "none")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))


@pytest.fixture(autouse=True)
def run_as_rag(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hints name `rag ingest`, as the installed command's do, whatever a test ran before."""
    import rag.errors

    monkeypatch.setattr(rag.errors, "_program", ["rag"])


@pytest.fixture(autouse=True)
def small_array_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Store per-chunk arrays in blocks of 16 chunk ids in every index a test builds in process
    (1,024 by default), so that reading them block by block is exercised everywhere. Indexes
    built by a subprocess keep the default; the block size is recorded in each index."""
    import rag.store.format

    monkeypatch.setattr(rag.store.format, "ARRAY_BLOCK", 16)


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create files (text or bytes) below root and return root."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


@pytest.fixture
def worked_repo(tmp_path: Path) -> Path:
    """The four-file worked example: the plain tokenizer, scored by cosine TF-IDF."""
    return write_tree(tmp_path / "billing", WORKED_EXAMPLE)


# --- model backends (tests of prompts, backends, answer and the query command) -------------------------

import contextlib  # noqa: E402
from collections.abc import Callable  # noqa: E402
from contextlib import AbstractContextManager  # noqa: E402
from dataclasses import dataclass, field, replace  # noqa: E402

from rag.answer.backends import ApiCitation, Generation  # noqa: E402
from rag.answer.followups import SearchTool  # noqa: E402
from rag.answer.prompts import Prompt  # noqa: E402


@pytest.fixture(autouse=True)
def no_sdk_settings(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the SDK from finding a token, profile or endpoint of the user's."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path_factory.mktemp("anthropic-config")))


@dataclass(frozen=True)
class Search:
    """A search the fake model makes before it answers: the arguments of its tool call."""

    arguments: object


@dataclass
class FakeBackend:
    """A backend that answers from a queue and records every prompt it was sent (and the tool
    offered with it); a queued Search is a tool call made before the next answer."""

    answers: list[Generation | str | BaseException | Search] = field(default_factory=list)
    prompts: list[Prompt] = field(default_factory=list)
    tools: list[SearchTool | None] = field(default_factory=list)
    name: str = "fake"
    model: str = "fake-model"
    plans: list[Generation | str | BaseException] = field(default_factory=list)  # replies to complete()
    plan_prompts: list[tuple[Prompt, str]] = field(default_factory=list)  # each prompt, and the model asked
    prepared: int = 0  # times told an answer would be asked for

    def queue(
        self,
        text: str,
        api_citations: tuple[ApiCitation, ...] = (),
        stop_reason: str = "end_turn",
        usage: dict[str, int] | None = None,
    ) -> FakeBackend:
        """Queue one answer; return self so calls chain."""
        usage = {"input_tokens": 10, "output_tokens": 5} if usage is None else usage
        self.answers.append(Generation(text, api_citations, stop_reason, usage))
        return self

    def search(self, arguments: object) -> FakeBackend:
        """Queue one search the model makes before its next answer (the tool's arguments)."""
        self.answers.append(Search(arguments))
        return self

    def generate(
        self,
        prompt: Prompt,
        on_text: Callable[[str], None] | None = None,
        tool: SearchTool | None = None,
        on_search: Callable[[str], None] | None = None,
        on_retract: Callable[[str], None] | None = None,
    ) -> Generation:
        self.prompts.append(prompt)
        self.tools.append(tool)
        calls = 1
        while self.answers and isinstance(self.answers[0], Search):
            queued_search = self.answers.pop(0)
            assert isinstance(queued_search, Search)
            if tool is None:
                raise AssertionError("the model searched, but no tool was offered")
            found = tool.call(queued_search.arguments)
            if on_search is not None:
                on_search(found.search)
            calls += 1
        if not self.answers:
            raise AssertionError("FakeBackend was called more often than answers were queued")
        queued = self.answers.pop(0)
        if isinstance(queued, BaseException):
            raise queued
        assert not isinstance(queued, Search)
        gen = queued if isinstance(queued, Generation) else Generation(queued, stop_reason="end_turn")
        if tool is not None:
            gen = replace(gen, rounds=tuple(tool.rounds), calls=calls)
        if on_text is not None:
            half = len(gen.text) // 2  # in two pieces, like a stream
            on_text(gen.text[:half])
            on_text(gen.text[half:])
        return gen

    def prepare(self, follow_ups: int, tool: SearchTool | None) -> AbstractContextManager[None]:
        self.prepared += 1
        return contextlib.nullcontext()

    def prepare_completion(self, system: str, model: str) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def render(self, prompt: Prompt) -> str:
        return f"--- system ---\n{prompt.system}\n--- user ---\n{prompt.user}"

    def complete(self, prompt: Prompt, *, model: str, max_tokens: int, timeout: float) -> Generation:
        self.plan_prompts.append((prompt, model))
        if not self.plans:
            raise AssertionError("FakeBackend.complete was called more often than plans were queued")
        queued = self.plans.pop(0)
        if isinstance(queued, BaseException):
            raise queued
        if isinstance(queued, Generation):
            return queued
        return Generation(queued, stop_reason="end_turn", usage={"input_tokens": 7, "output_tokens": 3})

    def render_completion(self, prompt: Prompt, *, model: str, max_tokens: int) -> str:
        return f"--- plan for {model} ---\n{prompt.system}\n{prompt.user}"


@pytest.fixture
def fake_backend() -> FakeBackend:
    """A FakeBackend with nothing queued."""
    return FakeBackend()


# --- a local Messages API (tests/local_api.py) ------------------------------------------------------------

from collections.abc import Iterator  # noqa: E402

from local_api import FakeApi, serving  # noqa: E402


@pytest.fixture
def api() -> Iterator[FakeApi]:
    """A local server speaking the Messages API, answering from the responses a test queues."""
    with serving() as fake:
        yield fake


class _Importing:
    """A background import of the SDK that never ends (rag.answer.anthropic_api._importing)."""

    def is_alive(self) -> bool:
        return True


@pytest.fixture(params=["sdk", "standard-library"])
def via(request: pytest.FixtureRequest, api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make an AnthropicBackend that calls `api` through the SDK's client, or as a query does while
    the SDK is still importing: through the standard library, the SDK's client (with the given
    retries and timeout) taking over a call that fails before its stream begins."""
    from rag.answer import anthropic_api

    def make(max_retries: int = 1, timeout: float = 10.0) -> anthropic_api.AnthropicBackend:
        if request.param == "sdk":
            return anthropic_api.AnthropicBackend(client=api.client(max_retries, timeout))
        monkeypatch.setattr(anthropic_api, "_importing", [_Importing()])
        monkeypatch.setattr(anthropic_api, "API_READ_TIMEOUT", timeout)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        backend = anthropic_api.AnthropicBackend(api_key="test")
        monkeypatch.setattr(backend, "_client", lambda: api.client(max_retries, timeout))
        return backend

    make.path = request.param  # type: ignore[attr-defined]
    return make
