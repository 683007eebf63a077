"""The answered question's own time: each whole `query.py` run, from its start to the first answer
byte on stdout and to its exit, against a loopback Messages API that takes as long as a model would.

    python bench/answer_latency.py                       # 12 questions, SDK backend, planned
    python bench/answer_latency.py --plan 0.6 --first 0.9 --rate 80 --follow-ups 0
    python bench/answer_latency.py --terminal            # the answer's stdout a terminal, not a pipe

The server answers the planning call (not streamed) after --plan seconds with the recorded planner
reply (bench/data/searches/), and each answer call's first token after --first seconds, then the
rest of ANSWER_TOKENS at --rate tokens a second; with --search, the answer's first turn is a search
(the tool round) and its second the answer. The model's own time, to the first answer byte, is
plan + first (+ first again for a search turn), the plan counted only when its call was made (the
answered runs are counted by their planning calls: a plan that failed shows as none); what the run
adds beyond it is the machine's.

Questions: the dev set's 6 flask and 6 requests questions, on the benchmark indexes
(${RAG_BENCH_INDEXES:-~/.cache/rag-bench-indexes}, built by bench/ranking.py). The same run times
`python -c "import click"`, `query.py --no-llm` and `--prompt-only` as references.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.common import SHARED  # noqa: E402
from bench.messages_api import TEXT_BLOCK, load_recordings, message_events, plan_message, tool_events  # noqa: E402
from bench.ranking import INDEXES, SETS, Indexes  # noqa: E402
from rag.evaluation import load_questions  # noqa: E402

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
CORPORA = ("flask-3.1.3", "requests-2.34.2")
ANSWER_TOKENS = [f"word{i} " for i in range(120)]
MARK = ANSWER_TOKENS[0].strip()
PLAN_MODEL = "plan-model"  # the search model named to the product: its calls are plans
REFERENCE_MODEL = "reference-model"  # answered at once: what remains is a program's own time


class SlowApi:
    """A Messages API that answers like a model in time: a plan (a call to PLAN_MODEL, or one not
    streamed) after `plan` seconds; an answer turn's first token after `first`, then one token every
    1/`rate` seconds, chunked; a call to REFERENCE_MODEL at once."""

    def __init__(self, plans: dict[str, str], plan: float, first: float, rate: float, search: bool) -> None:
        self.plans = sorted(plans.items(), key=lambda kv: len(kv[0]), reverse=True)
        self.planned = 0  # planning calls answered
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                model = body.get("model")
                if model == REFERENCE_MODEL:
                    self._stream(None, [("word ", 0.0)])
                elif model == PLAN_MODEL or not body.get("stream"):
                    time.sleep(plan)
                    text = json.dumps(body)
                    reply = next((s for q, s in api.plans if q in text), "")
                    api.planned += 1
                    if body.get("stream"):  # `claude -p` streams every call
                        self._stream(None, [(reply, 0.0)])
                    else:
                        self._whole(plan_message(reply))
                else:
                    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
                    time.sleep(first)
                    tools = [t["name"] for t in body.get("tools", []) if t["name"].endswith("search")]
                    tool = tools[0] if search and turn == 0 and tools else None
                    self._stream(tool, [(t, 1 / rate) for t in ANSWER_TOKENS])

            def _whole(self, message: dict[str, Any]) -> None:
                data = json.dumps(message).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, tool: str | None, tokens: list[tuple[str, float]]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for event, pause in _events(tool, tokens):
                    data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    if pause:
                        time.sleep(pause)
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def _events(tool: str | None, tokens: list[tuple[str, float]]) -> list[tuple[dict[str, Any], float]]:
    """A turn's events, each with the pause after it: a search (`tool`), or the answer's tokens."""
    if tool:
        return [(e, 0.0) for e in tool_events("request session", "slow-model", "toolu_slow", tool)]
    deltas = [{"type": "text_delta", "text": t} for t, _ in tokens]
    events = message_events(TEXT_BLOCK, deltas, "end_turn", "slow-model")
    pauses = [0.0, 0.0, *(pause for _, pause in tokens), 0.0, 0.0, 0.0]  # a pause after each token
    return list(zip(events, pauses, strict=True))


def timed(
    argv: list[str], env: dict[str, str], mark: str | None, stdin: bytes = b"", terminal: bool = False
) -> tuple[float, float, int]:
    """Seconds to the first stdout holding `mark` (to exit when None), seconds to exit, exit code;
    with `terminal`, stdout is a terminal (a pseudo-terminal read here), else a pipe."""
    if terminal:
        import pty

        reader, writer = pty.openpty()
    else:
        reader, writer = os.pipe()
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=writer, stderr=subprocess.DEVNULL, env=env, cwd=PROJECT
    )
    os.close(writer)
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    first = None
    seen = b""
    while True:
        try:
            chunk = os.read(reader, 65536)
        except OSError:  # a terminal's other end closed
            break
        if not chunk:
            break
        seen += chunk
        if first is None and mark is not None and mark.encode() in seen:
            first = time.perf_counter() - start
    os.close(reader)
    proc.wait()
    end = time.perf_counter() - start
    return (first if first is not None else end), end, proc.returncode


def questions() -> list[tuple[Path, str]]:
    indexes = Indexes()
    out = []
    for q in load_questions(SHARED / SETS["dev"][0]):
        if str(q.corpus) in CORPORA:
            indexes.get("dev", SETS["dev"][1] / str(q.corpus))
            out.append((INDEXES / f"dev-{q.corpus}.idx", q.question))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", type=float, default=0.6, help="the planning call's seconds")
    ap.add_argument("--first", type=float, default=0.9, help="seconds to an answer turn's first token")
    ap.add_argument("--rate", type=float, default=80.0, help="the answer's tokens a second")
    ap.add_argument("--follow-ups", type=int, default=2)
    ap.add_argument("--search", action="store_true", help="the answer's first turn is a search")
    ap.add_argument("--rounds", type=int, default=1, help="times through the 12 questions")
    ap.add_argument("--backend", choices=("anthropic", "claude"), default="anthropic")
    ap.add_argument("--claude", default="claude", help="the `claude` executable (Claude Code)")
    ap.add_argument(
        "--terminal",
        action="store_true",
        help="answered runs write to a terminal (a pseudo-terminal), not a pipe",
    )
    args = ap.parse_args()

    asked = questions()
    recorded = load_recordings([HERE / "data" / "searches" / "dev.passages.jsonl"])
    api = SlowApi(recorded, args.plan, args.first, args.rate, args.search)
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": api.url,
        "RAG_BACKEND": args.backend,
        "RAG_SEARCH_MODEL": PLAN_MODEL,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    env.pop("RAG_SEARCH", None)
    if args.backend == "anthropic":
        env["ANTHROPIC_API_KEY"] = "offline"
    else:  # Claude Code takes a token; rag's own choice of backend must not see a key
        claude = shutil.which(args.claude) or sys.exit(f"{args.claude} not found: pass --claude PATH")
        env["PATH"] = f"{Path(claude).parent}{os.pathsep}{env['PATH']}"
        env.pop("ANTHROPIC_API_KEY", None)
        env["ANTHROPIC_AUTH_TOKEN"] = "offline"
    py = sys.executable
    answer_time = args.first * (2 if args.search else 1)  # the answer's turns, to its first byte
    model = args.plan + answer_time
    rows: dict[str, list[tuple[float, float]]] = {}
    planned: Counter[int] = Counter()  # answered runs by their planning calls
    for _ in range(args.rounds):
        for index, question in asked:
            base = [py, "query.py", "--index", str(index)]
            runs: dict[str, tuple[list[str], str | None, bytes]] = {
                "import click": ([py, "-c", "import click"], None, b""),
                "--no-llm": ([*base, "--no-llm", question], None, b""),
                "--prompt-only": ([*base, "--prompt-only", question], None, b""),
            }
            if args.backend == "claude":
                start = ["claude", "-p", "--tools", "", "--strict-mcp-config", "--model", REFERENCE_MODEL]
                runs["one `claude -p` start"] = (start, None, b"hello")
            answered = f"answered ({'SDK' if args.backend == 'anthropic' else 'claude -p'})"
            answered += ", to a terminal" if args.terminal else ""
            runs[answered] = ([*base, "--follow-ups", str(args.follow_ups), question], MARK, b"")
            for label, (argv, mark, stdin) in runs.items():
                before = api.planned
                first, end, rc = timed(argv, env, mark, stdin, terminal=label == answered and args.terminal)
                if rc != 0:
                    sys.exit(f"{label} failed ({rc}): {' '.join(argv)}")
                if label == answered:  # a plan that failed, or was skipped, must not pass for speed
                    planned[api.planned - before] += 1
                    first -= args.plan * (api.planned - before) + answer_time
                rows.setdefault(label, []).append((first, end))
    print(
        f"model's own time to the first answer byte: {model:.2f} s (plan {args.plan}, first token "
        f"{args.first}{', a search turn first' if args.search else ''}); {len(asked) * args.rounds} runs each"
    )
    print(f"answered runs by their planning calls: {dict(sorted(planned.items()))}")
    print("| run | first answer byte, median | beyond the model's own time | exit, median |")
    print("| --- | --- | --- | --- |")
    for label, times in rows.items():
        end = statistics.median(t[1] for t in times)
        if label.startswith("answered"):  # each run against its own model time: a plan skipped has none
            beyond = statistics.median(t[0] for t in times)
            print(f"| {label} | {beyond + model:.2f} s (as planned) | {beyond:+.2f} s | {end:.2f} s |")
        else:
            print(f"| {label} | {statistics.median(t[0] for t in times):.2f} s | | {end:.2f} s |")


if __name__ == "__main__":
    main()
