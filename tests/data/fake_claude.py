"""A stand-in for `claude -p`, run by the tests through a `claude` wrapper placed first on PATH.

FAKE_CLAUDE_MODE picks the behaviour: ok (default), error (a JSON error object, exit 1),
text-error (text on stdout, exit 1), empty (a successful but empty result), garbage (not JSON),
hang (never answers; writes its pid to FAKE_CLAUDE_PID if set), daemon (answers, and leaves a
process behind that holds its stdout open), setsid-daemon (the same, the process in a session of
its own). With `--input-format stream-json` the prompt is the user message of stdin's JSON lines.
FAKE_CLAUDE_LOG, when set, receives a JSON record of how it was called (the last call);
FAKE_CLAUDE_CALLS, when set, one JSON line a call. FAKE_CLAUDE_STARTED, when set, one JSON line as it
starts (pid, time, whether it is an answer's) and one once its prompt has been read.
The ok answer cites the first document of the prompt, and one span that was never sent; a search
planning prompt (no documents, a request for keyword searches) is answered with FAKE_CLAUDE_PLAN
(default: a line of words).

With `--output-format stream-json` it streams events as Claude Code does (partial messages, the
assistant messages, a closing result). Given `--mcp-config`, and searches in FAKE_CLAUDE_SEARCH
(keyword lines separated by `|`), it starts the one MCP server the config names with the MCP SDK's
own stdio client, lists its tools, calls the allowed one for each search (after the text in
FAKE_CLAUDE_PREAMBLE, a turn's words before its call), and answers citing the first document the
last search returned too. FAKE_CLAUDE_TOOLS, when set, receives what it saw: the tools listed and
each call's result text.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time


def main() -> int:
    argv = sys.argv[1:]
    stdin_is_pipe = stat.S_ISFIFO(os.fstat(0).st_mode)
    started = os.environ.get("FAKE_CLAUDE_STARTED")
    if started:  # before the prompt is read: a start made ahead of its prompt shows as such
        with open(started, "a", encoding="utf-8") as f:
            answer = "--include-partial-messages" in argv
            f.write(json.dumps({"pid": os.getpid(), "at": time.time(), "answer": answer}) + "\n")
    output = argv[argv.index("--output-format") + 1] if "--output-format" in argv else "text"
    if output == "stream-json" and "--verbose" not in argv:  # as Claude Code refuses them
        print("Error: When using --print, --output-format=stream-json requires --verbose", file=sys.stderr)
        return 1
    if "--input-format" in argv and argv[argv.index("--input-format") + 1] == "stream-json" != output:
        print("Error: --input-format=stream-json requires output-format=stream-json.", file=sys.stderr)
        return 1
    prompt = read_prompt(argv)
    if started:
        with open(started, "a", encoding="utf-8") as f:
            f.write(json.dumps({"pid": os.getpid(), "prompt_at": time.time()}) + "\n")
    log = os.environ.get("FAKE_CLAUDE_LOG")
    if log:
        with open(log, "w", encoding="utf-8") as f:
            json.dump({"argv": argv, "cwd": os.getcwd(), "stdin": prompt, "stdin_is_pipe": stdin_is_pipe}, f)
    calls = os.environ.get("FAKE_CLAUDE_CALLS")
    if calls:
        with open(calls, "a", encoding="utf-8") as f:
            f.write(json.dumps({"argv": argv, "stdin": prompt}) + "\n")
    mode = os.environ.get("FAKE_CLAUDE_MODE", "ok")
    as_json = "--output-format" in argv and argv[argv.index("--output-format") + 1] == "json"
    if mode == "hang":
        pid_file = os.environ.get("FAKE_CLAUDE_PID")
        if pid_file:
            with open(pid_file, "w", encoding="utf-8") as f:
                f.write(str(os.getpid()))
        time.sleep(60)
        return 0
    if mode in ("daemon", "setsid-daemon"):  # answers, and leaves a process behind holding stdout
        import subprocess

        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                         start_new_session=mode == "setsid-daemon")
    if mode == "text-error":
        print("Error: Invalid API key · Please run /login")
        return 1
    if mode == "garbage":
        print("<html>not json</html>")
        return 0
    if mode == "error":
        print(json.dumps({"type": "result", "subtype": "error_during_execution", "is_error": True,
                          "result": "Credit balance is too low", "usage": {}}))
        return 1
    m = re.search(r'<document index="1" path="([^"]*)" lines="(\d+)-(\d+)"', prompt)
    if mode == "empty" or not prompt.strip():
        answer = ""
    elif "Write keyword searches" in prompt:
        answer = os.environ.get("FAKE_CLAUDE_PLAN", "check_password load_hash verify")
    elif m:
        answer = f"From the documents: see [{m[1]}:{m[2]}-{m[3]}]. Also [nowhere.py:1-2]."
    else:
        answer = "The documents do not say."
    if "--output-format" in argv and argv[argv.index("--output-format") + 1] == "stream-json":
        return stream(argv, answer, mode)
    if not as_json:
        print(answer)
        return 0
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": answer,
                      "duration_ms": 5, "num_turns": 1, "session_id": "fake", "total_cost_usd": 0.001,
                      "usage": {"input_tokens": 120, "output_tokens": 14, "service_tier": "standard"}}))
    return 0


def read_prompt(argv: list) -> str:
    """stdin whole; with `--input-format stream-json`, the text of the user messages its lines hold
    (a line that is not one is an error, as Claude Code's)."""
    data = sys.stdin.read()
    if "--input-format" not in argv or argv[argv.index("--input-format") + 1] != "stream-json":
        return data
    texts = []
    for line in data.splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        assert event["type"] == "user" and event["message"]["role"] == "user", event
        content = event["message"]["content"]
        texts.append(content if isinstance(content, str) else "".join(b["text"] for b in content))
    return "\n".join(texts)


def emit(event: dict) -> None:
    print(json.dumps(event), flush=True)


def turn(blocks: list, stop_reason: str) -> None:
    """One model call as Claude Code streams it: the API's events, and each whole block."""
    emit({"type": "stream_event", "event": {"type": "message_start", "message": {"id": "m", "content": []}}})
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            half = len(block["text"]) // 2
            deltas = [{"type": "text_delta", "text": t} for t in (block["text"][:half], block["text"][half:])]
        else:
            start = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        emit({"type": "stream_event", "event": {"type": "content_block_start", "index": i, "content_block": start}})
        for delta in deltas:
            emit({"type": "stream_event", "event": {"type": "content_block_delta", "index": i, "delta": delta}})
        emit({"type": "assistant", "message": {"role": "assistant", "content": [block]}})
        emit({"type": "stream_event", "event": {"type": "content_block_stop", "index": i}})
    emit({"type": "stream_event", "event": {"type": "message_delta", "delta": {"stop_reason": stop_reason}}})
    emit({"type": "stream_event", "event": {"type": "message_stop"}})


def stream(argv: list, answer: str, mode: str) -> int:
    emit({"type": "system", "subtype": "init", "tools": []})
    searches = [s for s in os.environ.get("FAKE_CLAUDE_SEARCH", "").split("|") if s]
    turns = 1
    if "--mcp-config" in argv and searches:
        for i, (use_id, text) in enumerate(call_tools(argv, searches)):
            preamble = os.environ.get("FAKE_CLAUDE_PREAMBLE", "")
            use = {"type": "tool_use", "id": use_id, "name": "mcp__rag__search", "input": {"query": searches[i]}}
            turn(([{"type": "text", "text": preamble}] if preamble else []) + [use], "tool_use")
            emit({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": use_id, "content": [{"type": "text", "text": text}]}]}})
            turns += 1
            m = re.search(r'<document index="\d+" path="([^"]*)" lines="(\d+)-(\d+)"', text)
            if m and mode == "ok":
                answer += f" And [{m[1]}:{m[2]}-{m[3]}]."
    if answer:
        turn([{"type": "text", "text": answer}], "end_turn")
    emit({"type": "result", "subtype": "success", "is_error": mode == "error", "result": answer,
          "num_turns": turns, "stop_reason": "end_turn",
          "usage": {"input_tokens": 120 * turns, "output_tokens": 14 * turns}})
    return 1 if mode == "error" else 0


def call_tools(argv: list, searches: list) -> list:
    """Start the config's one server with the MCP SDK's client; call its tool once per search."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    config = json.loads(argv[argv.index("--mcp-config") + 1])
    [(name, server)] = config["mcpServers"].items()
    allowed = argv[argv.index("--allowedTools") + 1]
    params = StdioServerParameters(command=server["command"], args=server["args"],
                                   env={**os.environ, **server.get("env", {})})
    seen: dict = {"tools": [], "results": []}

    async def run() -> list:
        out = []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = (await session.list_tools()).tools
            seen["tools"] = [{"name": t.name, "description": t.description, "schema": getattr(t, "input_schema", None) or getattr(t, "inputSchema", None)}
                             for t in listed]
            for i, words in enumerate(searches):
                result = await session.call_tool(allowed.removeprefix(f"mcp__{name}__"), {"query": words})
                text = result.content[0].text
                is_error = getattr(result, "is_error", getattr(result, "isError", None))
                seen["results"].append({"text": text, "is_error": is_error})
                out.append((f"toolu_{i}", text))
        return out

    results = anyio.run(run)
    log = os.environ.get("FAKE_CLAUDE_TOOLS")
    if log:
        with open(log, "w", encoding="utf-8") as f:
            json.dump(seen, f)
    return results


if __name__ == "__main__":
    sys.exit(main())
