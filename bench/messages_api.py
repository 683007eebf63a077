"""A loopback server that speaks the Messages API from recorded model outputs, so that the whole
answering path (search planning, retrieval, the answer call) runs offline, with no API key.

    python bench/messages_api.py RECORDED.jsonl [--port 8765]
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=offline python query.py "..."

RECORDED.jsonl holds one JSON object a line with `question` and `search` (the model's reply to a
search-planning prompt, as in ../shared/eval/searches/). A request that is not streamed is a planning
call: it is answered with the `search` of the recorded question its prompt holds verbatim (the
longest, when several do), or, when none does, with HTTP 404 and a one-line error (a planning call
that fails: the query searches the question alone). A streamed request is an answer call: it gets
ANSWER, a fixed text, so that what is measured is the passages sent, not an answer.

Every request is kept (`requests`): which kind it was, the question matched, its JSON body.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ANSWER = "Recorded offline: this text stands for an answer."
MODEL = "recorded-model"


@dataclass
class Served:
    """One request the server answered."""

    kind: str  # "plan" or "answer"
    question: str | None  # the recorded question a planning prompt held, None when none did
    body: dict[str, Any] = field(repr=False)


def load_recordings(paths: Iterable[Path]) -> dict[str, str]:
    """question -> the recorded reply (`search`), from JSONL files of recorded outputs."""
    out: dict[str, str] = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out[row["question"]] = row["search"]
    return out


def _prompt_text(body: dict[str, Any]) -> str:
    """The text of a request's system prompt and messages."""
    parts = [body.get("system") or ""]
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(c.get("text", "") for c in content or [] if isinstance(c, dict))
    return "\n".join(p if isinstance(p, str) else json.dumps(p) for p in parts)


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def message_events(
    block: dict[str, Any], deltas: list[dict[str, Any]], stop_reason: str, model: str = MODEL
) -> list[dict[str, Any]]:
    """The events of a streamed message of one content block: `block` opened, each of `deltas`,
    closed, then the message's stop."""
    message = {
        "id": "msg_offline",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1000, "output_tokens": 1},
    }
    return [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": block},
        *({"type": "content_block_delta", "index": 0, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
        {"type": "message_stop"},
    ]


def answer_stream(text: str = ANSWER, model: str = MODEL) -> bytes:
    """The event stream of a streamed message holding `text`."""
    return _sse(message_events(TEXT_BLOCK, [{"type": "text_delta", "text": text}], "end_turn", model))


TEXT_BLOCK = {"type": "text", "text": ""}


def plan_message(text: str, model: str = MODEL) -> dict[str, Any]:
    """A whole (not streamed) message holding `text`."""
    return {
        "id": "msg_offline_plan",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 500, "output_tokens": 40},
    }


def tool_stream(query: str, model: str = MODEL, use_id: str = "toolu_offline", name: str = "search") -> bytes:
    """The event stream of a streamed message that calls the search tool (`name`) with `query`."""
    return _sse(tool_events(query, model, use_id, name))


def tool_events(
    query: str, model: str = MODEL, use_id: str = "toolu_offline", name: str = "search"
) -> list[dict[str, Any]]:
    """The events of a streamed message that calls the search tool (`name`) with `query`."""
    block = {"type": "tool_use", "id": use_id, "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": json.dumps({"query": query})}
    return message_events(block, [delta], "tool_use", model)


# answers a streamed request (an answer's turn): status, content type, body
Turns = Callable[[dict[str, Any]], tuple[int, str, bytes]]


class ReplayApi:
    """The server: start it, point ANTHROPIC_BASE_URL at `url`, stop it (or use `with`). `turns`,
    when given, answers each streamed request (else: ANSWER)."""

    def __init__(self, recordings: dict[str, str], port: int = 0, turns: Turns | None = None) -> None:
        self.recordings = recordings
        self.turns = turns
        # the longest first: a question that holds another is matched as itself
        self._questions = sorted(recordings, key=len, reverse=True)
        self.requests: list[Served] = []
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the API: a client reuses its connection

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                status, content_type, data = api.respond(body)
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def respond(self, body: dict[str, Any]) -> tuple[int, str, bytes]:
        """The status, content type and body that answer one request."""
        if body.get("stream"):
            with self._lock:
                self.requests.append(Served("answer", None, body))
            return self.turns(body) if self.turns is not None else (200, "text/event-stream", answer_stream())
        text = _prompt_text(body)
        question = next((q for q in self._questions if q in text), None)
        with self._lock:
            self.requests.append(Served("plan", question, body))
        if question is None:
            error = {"type": "error", "error": {"type": "not_found_error", "message": "no recorded reply"}}
            return 404, "application/json", json.dumps(error).encode()
        return 200, "application/json", json.dumps(plan_message(self.recordings[question])).encode()

    def start(self) -> ReplayApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ReplayApi:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recordings", nargs="+", type=Path, help="JSONL files of recorded outputs")
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args()
    api = ReplayApi(load_recordings(args.recordings), args.port)
    print(f"serving {len(api.recordings)} recorded replies at {api.url} (Ctrl-C stops)", flush=True)
    try:
        api._server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        api._server.server_close()


if __name__ == "__main__":
    main()
