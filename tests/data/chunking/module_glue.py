#!/usr/bin/env python
"""Command-line helpers for the sync tool."""

from __future__ import annotations

import asyncio
import functools
from typing import overload

RETRIES = 3


def retry(times: int = RETRIES):
    """Retry the wrapped coroutine up to `times` times."""

    def decorate(fn):
        @functools.wraps(fn)
        async def wrapper(*args, **kwargs):
            for attempt in range(times):
                try:
                    return await fn(*args, **kwargs)
                except OSError:
                    if attempt == times - 1:
                        raise

        return wrapper

    return decorate


# Fetching is retried because the mirror drops connections under load.
@retry(times=5)
async def fetch(url: str) -> bytes:
    """Fetch one URL and return its body."""
    reader, writer = await asyncio.open_connection(url, 80)
    writer.write(b"GET / HTTP/1.0\r\n\r\n")
    return await reader.read()


@overload
def parse_size(value: str) -> int: ...
@overload
def parse_size(value: None) -> None: ...
def parse_size(value):
    """Parse a size such as '10k' or '3M' into bytes."""
    if value is None:
        return None
    units = {"k": 1024, "M": 1024**2}
    return int(value[:-1]) * units[value[-1]] if value[-1] in units else int(value)


class Config:
    def __init__(self, root):
        self.root = root


def main() -> int:
    print(asyncio.run(fetch("example.org")))
    return 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Fetch a URL through the retrying client.")
    parser.add_argument("url", help="the URL to fetch, e.g. example.org")
    parser.add_argument("--retries", type=int, default=RETRIES, help="attempts before giving up")
    raise SystemExit(main())
