"""The progress line of an ingest on a terminal."""

from __future__ import annotations

from typing import Any


class ProgressLine:
    """One line on a terminal, rewritten in place: files done / total, MB read, seconds."""

    def __init__(self, stream: Any, every: float = 0.1) -> None:
        import time

        self._stream, self._every, self._clock = stream, every, time.monotonic
        self._began = self._shown = self._clock()
        self.total = self.done = self.total_bytes = self.done_bytes = 0

    def start(self, total: int, total_bytes: int) -> None:
        """Begin counting (again, when an ingest restarts as a full build)."""
        self.total, self.total_bytes, self.done, self.done_bytes = total, total_bytes, 0, 0
        self._show()

    def advance(self, files: int, n_bytes: int) -> None:
        """Count files and bytes done; redraw at most every `every` seconds, and at the end."""
        self.done += files
        self.done_bytes += n_bytes
        if self.done >= self.total or self._clock() - self._shown >= self._every:
            self._show()

    def text(self) -> str:
        """The line as it is shown now."""
        return (
            f"Indexing: {self.done:,}/{self.total:,} files, {self.done_bytes / 1e6:.1f}/"
            f"{self.total_bytes / 1e6:.1f} MB, {self._clock() - self._began:.1f} s"
        )

    def _show(self) -> None:
        self._shown = self._clock()
        self._stream.write("\r\x1b[K" + self.text())
        self._stream.flush()

    def clear(self) -> None:
        """Erase the line, so that the summary (or an error) starts on a clean one."""
        if self.total:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
