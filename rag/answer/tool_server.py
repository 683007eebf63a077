"""The answering model's search tool for `claude -p`: a minimal MCP server over stdio, started by
Claude Code for one answer and ended with it.

    python -m rag.answer.tool_server SPEC.json

SPEC (written by rag.answer.claude_cli) names the index, the caller's access groups and ranking
settings, how many searches the model may make, the passages it was sent already and the file
where each search is recorded (one JSON line a search: rag.answer.followups.round_record), which
the backend reads back once claude has answered.

It speaks just what a client needs of MCP for one tool (initialize, tools/list, tools/call, ping;
newline-delimited JSON-RPC 2.0), without the MCP SDK: that SDK's import alone takes over a second,
and this server starts while the answer waits (docs/benchmarks.md has the figures). The tool is the
same as the SDK backend's (rag.answer.followups.SearchTool): new passages only, as the same caller,
at most the given number of searches, errors returned to the model, never raised.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import IO, Any

PROTOCOL_VERSION = "2025-06-18"  # answered when the client asks for none
SERVER_NAME = "rag"


def load(spec_path: str) -> tuple[Any, str]:
    """The search tool a spec describes, and the file its searches are recorded in."""
    from rag.answer.followups import SearchTool, round_from_record
    from rag.retrieval.retrieve import Request

    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    request = Request("", groups=frozenset(spec["groups"]), scoring=spec["scoring"], rerank=spec["rerank"])
    sent = round_from_record({"search": "", "error": None, "hits": spec["sent"]}).hits
    index = spec["index"]
    return SearchTool(
        tuple(index) if isinstance(index, list) else index, request, sent, int(spec["limit"])
    ), spec["log"]


def serve(spec_path: str, stdin: IO[str], stdout: IO[str]) -> None:
    """Answer JSON-RPC requests from `stdin` on `stdout` until stdin closes."""
    tool: Any = None
    # what a search needs is imported while Claude Code starts and the model writes: not in the tool round
    threading.Thread(target=_import_search, daemon=True).start()
    for line in stdin:
        try:
            message = json.loads(line)
        except ValueError:
            _send(stdout, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue  # a notification, or a response to nothing we asked
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            result: Any = {
                "protocolVersion": params.get("protocolVersion") or PROTOCOL_VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": SERVER_NAME, "version": _version()},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            from rag.answer.followups import tool_definition

            # the limit only: the passages sent may be written once the prompt is known, which is
            # before any call, not before the list (Claude Code lists its tools as it starts)
            with open(spec_path, encoding="utf-8") as f:
                definition = tool_definition(int(json.load(f)["limit"]))
            result = {
                "tools": [
                    {
                        "name": definition["name"],
                        "description": definition["description"],
                        "inputSchema": definition["input_schema"],
                    }
                ]
            }
        elif method == "tools/call":
            tool = tool or load(spec_path)
            result = _call(tool, params)
        else:
            _send(
                stdout,
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": f"Unknown method {method}"},
                },
            )
            continue
        _send(stdout, {"jsonrpc": "2.0", "id": message["id"], "result": result})


def _import_search() -> None:
    import rag.answer.followups
    import rag.retrieval.retrieve  # noqa: F401


def _call(tool: tuple[Any, str], params: dict[str, Any]) -> dict[str, Any]:
    from rag.answer.followups import NO_SEARCHES_LEFT, TOOL_NAME, Round, round_record, round_text

    search, log = tool
    if params.get("name") != TOOL_NAME:
        found = Round("", error=f"There is no tool {params.get('name')!r}: the one tool is {TOOL_NAME!r}.")
    else:
        before = len(search.sent)  # the documents the model holds: the new ones are numbered on
        found = search.call(params.get("arguments"))
        if found.error != NO_SEARCHES_LEFT:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(round_record(found), ensure_ascii=False) + "\n")
        tool_first = before + 1
        return {
            "content": [{"type": "text", "text": round_text(found, tool_first)}],
            "isError": found.error is not None,
        }
    return {"content": [{"type": "text", "text": found.error}], "isError": True}


def _send(stdout: IO[str], message: dict[str, Any]) -> None:
    stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    stdout.flush()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rag-code")
    except PackageNotFoundError:
        return "0"


def main() -> None:
    """Serve the spec named on the command line over stdin and stdout."""
    if len(sys.argv) != 2:
        sys.exit("usage: python -m rag.answer.tool_server SPEC.json")
    with open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False) as stdin:
        serve(sys.argv[1], stdin, sys.stdout)


if __name__ == "__main__":
    main()
