"""A client of `rag mcp` for the tests: the MCP SDK's own, over stdio, against this checkout."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PROJECT = Path(__file__).resolve().parents[1]


def server(*args: str, unset: tuple[str, ...] = ()) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "rag", "mcp", *args], env={**env, "PYTHONPATH": str(PROJECT)}
    )


def session_run(
    params: StdioServerParameters,
    calls: list[tuple[str, dict[str, Any]] | Callable[[], object]],
    descriptions: dict[str, str] | None = None,
) -> tuple[list[str], list[Any]]:
    """The tools a server lists (their descriptions into `descriptions`) and the results of `calls`
    in order (a callable is run, between two calls, for what it does)."""

    async def run() -> tuple[list[str], list[Any]]:
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed = (await session.list_tools()).tools
                if descriptions is not None:
                    descriptions.update((t.name, t.description or "") for t in listed)
                tools = [t.name for t in listed]
                results = []
                for call in calls:
                    if callable(call):
                        call()
                    else:
                        results.append(await session.call_tool(*call))
        return tools, results

    return anyio.run(run)


def payload(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)
