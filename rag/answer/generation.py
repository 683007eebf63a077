"""What every backend shares: the interface a model answers through, what an answer comes back as,
and the gate that keeps what a model writes before a search out of the answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from rag.answer.followups import Round, SearchTool
    from rag.answer.prompts import Prompt

USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")

OnText = Callable[[str], None]
OnSearch = Callable[[str], None]  # told the words of each search the answering model makes
OnRetract = Callable[[str], None]  # takes back text just passed to OnText, the last written


@dataclass(frozen=True, slots=True)
class ApiCitation:
    """A citation the Messages API attached to the answer: a span of one of the documents sent."""

    document_index: int  # 0-based, in the order the documents were sent (tool results' included)
    cited_text: str
    start_char: int | None = None  # into the document's text, when the API gives a char location
    end_char: int | None = None
    document_title: str | None = None  # the title the document was sent with, when the API names it


@dataclass(frozen=True, slots=True)
class Generation:
    """What a backend returns: the answer text and what is known about how it was produced."""

    text: str
    api_citations: tuple[ApiCitation, ...] = ()
    stop_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    model: str | None = None  # the model that answered, when the backend reports it
    rounds: tuple[Round, ...] = ()  # the searches the model made before it answered, in order
    calls: int = 1  # model calls (turns) the answer took


class Backend(Protocol):
    """A model that answers a prompt."""

    name: str
    model: str

    def prepare(self, follow_ups: int, tool: SearchTool | None) -> AbstractContextManager[None]:
        """An answer will be asked for, with up to `follow_ups` searches through `tool` (its passages
        sent are filled in once retrieved): start now, in the background, what generate() will need,
        and end what it did not use when the block ends."""
        ...

    def generate(
        self,
        prompt: Prompt,
        on_text: OnText | None = None,
        tool: SearchTool | None = None,
        on_search: OnSearch | None = None,
        on_retract: OnRetract | None = None,
    ) -> Generation:
        """Answer `prompt`, passing text to `on_text` as it arrives; with `tool` (and
        prompt.follow_ups), the model may search before it answers, each search told to `on_search`.
        With `on_retract`, text that may precede a search is passed on at once and taken back through
        it if one follows (TextGate)."""
        ...

    def render(self, prompt: Prompt) -> str:
        """Return exactly what would be sent for `prompt`, readably (for --show-prompt)."""
        ...

    def prepare_completion(self, system: str, model: str) -> AbstractContextManager[None]:
        """A complete() with `system` and `model` will be asked for: start now, in the background,
        what it will need, and end what it did not use when the block ends."""
        ...

    def complete(self, prompt: Prompt, *, model: str, max_tokens: int, timeout: float) -> Generation:
        """Answer a short prompt of plain text (no documents) with `model`, in one call, not streamed."""
        ...

    def render_completion(self, prompt: Prompt, *, model: str, max_tokens: int) -> str:
        """Return exactly what complete() would send for `prompt`, readably (for --show-prompt)."""
        ...


def render_text_prompt(prompt: Prompt) -> str:
    """Show a prompt as its system part and its user part."""
    return f"--- system ---\n{prompt.system}\n--- user ---\n{prompt.user}"


def add_usage(*usages: dict[str, int]) -> dict[str, int]:
    """Sum token counts field by field."""
    out: dict[str, int] = {}
    for usage in usages:
        for key, n in usage.items():
            out[key] = out.get(key, 0) + n
    return out


def one_line(text: str, limit: int = 200) -> str:
    """`text` on one line, cut to `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class CallerError(Exception):
    """Carries an exception raised by the on_text callback past the handlers for the API's."""


class TextGate:
    """Passes an answer's streamed text on as it comes, except what the model writes just before a
    search ("Let me look for the default."): that is no part of the answer.

    While the model may still search, a turn's first text block is held until what follows it shows
    what it was: a search (dropped), more text or the turn's end (passed on, and the rest of the
    turn with it). A held text longer than HOLD characters is an answer already: the model is told
    to search without writing first, and what it writes anyway is a sentence or two ("Let me look
    for the default."). Text that follows an earlier turn's printed text is set off by a blank line.

    Each held character waits for the model; with `retract`, the first text of an answer that
    nothing was passed on for yet is written at once, and taken back with `retract` if a search
    follows (the command line erases it from a terminal, and sets the answer apart from it in a
    pipe). The answer (`text`) is the same either way."""

    HOLD = 200

    def __init__(self, write: OnText | None, retract: OnRetract | None = None) -> None:
        self._write = write
        self._retract = retract if write is not None else None
        self._shown = 0  # of the held text, the parts written at once (the last ones of `parts`)
        self.parts: list[str] = []  # what was passed on: the answer
        self._held: list[str] = []
        self._holding = False
        self._closed = False  # the held text's block has ended
        self._fresh = False  # nothing of this turn was passed on yet

    @property
    def text(self) -> str:
        """The answer: all that was passed on."""
        return "".join(self.parts)

    def start_turn(self, hold: bool) -> None:
        """A model call begins; `hold` when the model may search in it."""
        self._held, self._holding, self._closed, self._fresh = [], hold, False, True
        self._shown = 0

    def block_start(self, kind: str) -> None:
        """A content block of `kind` (text, tool_use, ...) begins."""
        if kind == "tool_use":
            self._drop()
        elif kind == "text" and self._closed:
            self._release()

    def block_stop(self) -> None:
        """The current text block ended."""
        self._closed = True

    def add(self, text: str) -> None:
        """Text of the turn, as it streams."""
        if not text:
            return
        if not self._holding:
            self._emit(text)
            return
        self._held.append(text)
        if self._retract is not None and not (self.parts and not self._shown):
            self._emit(text)  # at once: what a search would make it is taken back
            self._shown += 1
        if sum(map(len, self._held)) > self.HOLD:
            self._release()

    def end_turn(self, searched: bool) -> None:
        """The model call ended; `searched`: in a search."""
        if searched:
            self._drop()
        else:
            self._release()
        self._holding = False

    def _release(self) -> None:
        held, self._held, self._holding = self._held[self._shown :], [], False
        self._shown = 0
        for text in held:
            self._emit(text)

    def _drop(self) -> None:
        """The held text preceded a search: forget it, and take back what of it was written."""
        if self._shown:
            shown = self.parts[-self._shown :]
            del self.parts[-self._shown :]
            self._fresh = True
            assert self._retract is not None
            try:
                self._retract("".join(shown))
            except Exception as exc:  # an error of the caller's writer is not the model's
                raise CallerError from exc
        self._held, self._holding, self._shown = [], False, 0

    def _emit(self, text: str) -> None:
        if self._fresh and self.parts:
            text = "\n\n" + text.lstrip("\n")
        self._fresh = False
        self.parts.append(text)
        if self._write is not None:
            try:
                self._write(text)
            except Exception as exc:  # an error of the caller's writer is not the model's
                raise CallerError from exc
