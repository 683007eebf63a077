"""Tables whose header names a credential column (CSV, TSV, Markdown): a header row's cells, and the
column a credential's name heads; rag.secrets.nature judges the values below it."""

from __future__ import annotations

import re

MAX_ROW = 2000  # characters in a header row at most
_NOT_HEADER = re.compile(r"[=(){}\[\]<>:]")  # code and prose, not a header
_CELL_NAME = re.compile(r"""[ \t]*["'`]?[\w .#/-]{1,40}["'`]?[ \t]*""")


def table_cells(line: str, sep: str) -> list[tuple[int, int]]:
    """The spans of the cells of a table row (double-quoted cells may hold the separator)."""
    spans, pos, n = [], 0, len(line)
    while pos <= n:
        if line[pos : pos + 1] == '"':
            close = line.find('"', pos + 1)
            while close != -1 and line[close + 1 : close + 2] == '"':
                close = line.find('"', close + 2)
            end = line.find(sep, close + 1) if close != -1 else -1
        else:
            end = line.find(sep, pos)
        end = n if end == -1 else end
        spans.append((pos, end))
        pos = end + 1
    return spans


def table_row(text: str, line: int) -> tuple[str, int]:
    """The row that starts at `line` (without its line break), and where it ends."""
    end = text.find("\n", line)
    end = len(text) if end == -1 else end
    return text[line:end].rstrip("\r"), end


def header_column(text: str, line: int, at: int) -> tuple[str, int, int] | None:
    """When the row at `line` is a table's header (2+ cells, each a short name) whose cell at `at`
    names the credential: the separator, the column and the number of cells."""
    row, _ = table_row(text, line)
    if len(row) > MAX_ROW or _NOT_HEADER.search(row):
        return None
    for sep in ("|", "\t", ",", ";"):
        if sep not in row:
            continue
        cells = table_cells(row, sep)
        if sum(1 for a, b in cells if row[a:b].strip()) < 2 or row.rstrip().endswith(sep) and sep != "|":
            continue  # one name, or a list of items (`A,` then `B,`): not a header
        if not all(_CELL_NAME.fullmatch(row[a:b]) or a == b for a, b in cells):
            continue
        for i, (a, b) in enumerate(cells):
            if a <= at - line < b or (a == b and a == at - line):
                return sep, i, len(cells)
    return None
