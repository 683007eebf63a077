"""Tables whose header names a credential column (CSV, TSV, Markdown), and SQL's rows (INSERT
statements, COPY dumps) under their column lists: a header row's cells, the column a credential's
name heads, the rows' values; rag.secrets.nature judges the values of that column."""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_ROW = 2000  # characters in a header row at most
_NOT_HEADER = re.compile(r"[=(){}\[\]<>:]")  # code and prose, not a header
# a header's cell: a short name, maybe its unit in brackets last (`Amount (EUR)`), and a byte-order
# mark before the first (a spreadsheet's export)
_CELL_NAME = re.compile(r"""\ufeff?[ \t]*["'`]?[\w .#/-]{1,40}(?:\([\w %./-]{1,12}\))?["'`]?[ \t]*""")
_UNIT = re.compile(r"[ \t]\([\w %./-]{1,12}\)(?=[ \t]*[\"'`]?[ \t]*(?:[,;|\t]|\Z))")


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
    if len(row) > MAX_ROW or _NOT_HEADER.search(_UNIT.sub("", row) if "(" in row else row):
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


# ---- SQL: the rows of INSERT statements and of PostgreSQL's COPY dumps ---------------------------

# `INSERT [IGNORE] INTO table (col, ...) VALUES` and `COPY table (col, ...) FROM stdin;`, in the
# lowered text at an occurrence of their first word
SQL_COLUMNS = re.compile(
    r"(?:insert[ \t]+(?:ignore[ \t]+)?into|(?P<copy>copy))[ \t]+(?P<table>[\w.\"`\[\]]{1,128}+)[ \t]*+"
    r"(?:\((?P<columns>[^()\n;]{1,2000}+)\))?"
    r"(?(copy)[ \t]+from[ \t]+stdin[^\n]{0,80}+\n|\s*+values\s*+)"
)
# a column's definition in a CREATE TABLE, one a line as dumps write them: its name, then its type
_COLUMN_DEFINITION = re.compile(r"""[ \t]*+[`"\[]?(?P<name>\w{1,64}+)[`"\]]?[ \t]++[A-Za-z]""")
_NOT_A_COLUMN = ("primary", "key", "unique", "constraint", "index", "foreign", "check", "fulltext")
_MAX_TABLE = 20_000  # characters of a CREATE TABLE read for its columns
MAX_SQL_ROWS = 1_000_000  # characters of rows read after one statement's columns
_BLANKS = " \t\r\n"


def sql_columns(columns: str) -> list[str]:
    """The names of a column list (`"id", `password`, [api_key]`), unquoted."""
    return [c.strip(' \t"`[]') for c in columns.split(",")]


class CreatedTables:
    """The columns of each table as the last CREATE TABLE of it before a position defines them (an
    INSERT of mysqldump's names no columns: `INSERT INTO `t` VALUES (...)`), for one text. Asked at
    increasing positions, as a dump's statements are read, each lookup reads only the text since the
    last one of the same table: a dump of a million INSERTs is read once, not once per INSERT."""

    def __init__(self, text: str, lowered: str) -> None:
        self.text, self.lowered = text, lowered
        # a table's name -> (the position last asked for, where its last CREATE TABLE before it starts)
        self._last: dict[str, tuple[int, int]] = {}
        # where a CREATE TABLE starts -> its columns, when read to their end (not cut at a position)
        self._columns: dict[int, list[str]] = {}

    def named(self, statement: re.Match[str], at: int) -> list[str]:
        """The columns an INSERT's or COPY's `statement` (see SQL_COLUMNS, matched at `at`) names, or
        its table's last CREATE TABLE defines when it names none."""
        if statement["columns"] is not None:
            return sql_columns(self.text[statement.start("columns") : statement.end("columns")])
        return self.columns(statement["table"], at)

    def columns(self, table: str, before: int) -> list[str]:
        """The columns the last CREATE TABLE of `table` before `before` defines; none if there is none."""
        name = table.strip('`"[]').lower()
        asked, at = self._last.get(name, (0, -1))
        if before < asked:  # asked out of order: read from the start again
            asked, at = 0, -1
        for quoted in (f"`{name}`", f'"{name}"', f"[{name}]", name):
            for needle in (f"table {quoted} (", f"exists {quoted} ("):
                at = max(at, self.lowered.rfind(needle, max(0, asked - len(needle)), before))
        self._last[name] = (before, at)
        if at == -1:
            return []
        if at in self._columns:
            return self._columns[at]
        columns: list[str] = []
        line = self.lowered.find("\n", at, at + 300) + 1
        while 0 < line < min(before, at + _MAX_TABLE):
            end = self.lowered.find("\n", line)
            end = len(self.lowered) if end == -1 else end
            m = _COLUMN_DEFINITION.match(self.text, line, end)
            if m is None or m["name"].lower() in _NOT_A_COLUMN:
                self._columns[at] = columns
                break
            columns.append(m["name"])
            line = end + 1
        return columns


def insert_rows(text: str, pos: int) -> Iterator[list[tuple[int, int]]]:
    """The rows of an INSERT's VALUES at `pos`, each the spans of its values (a quoted value's
    without its quotes; SQL's doubled quote inside kept), up to the statement's end or a row of
    another shape."""
    end = min(len(text), pos + MAX_SQL_ROWS)
    while True:
        pos = _skip_blanks(text, pos, end)
        if text[pos : pos + 1] != "(":
            return
        row, pos = _insert_row(text, pos + 1, end)
        if row is None:
            return
        yield row
        pos = _skip_blanks(text, pos, end)
        if text[pos : pos + 1] != ",":
            return
        pos += 1


def _insert_row(text: str, pos: int, end: int) -> tuple[list[tuple[int, int]] | None, int]:
    """One row's values from `pos` (after its `(`) and where the row ends; None when it is no row."""
    row: list[tuple[int, int]] = []
    while pos < end:
        pos = _skip_blanks(text, pos, end)
        if text[pos : pos + 1] == "'":
            close = text.find("'", pos + 1, end)
            while close != -1:
                if _escaped(text, close):  # MySQL's `\'`
                    close = text.find("'", close + 1, end)
                elif text[close + 1 : close + 2] == "'":  # SQL's `''`
                    close = text.find("'", close + 2, end)
                else:
                    break
            if close == -1:
                return None, pos
            row.append((pos + 1, close))
            pos = close + 1
        else:  # a number, NULL, a call (`NOW()`): up to the next `,` or `)` at its depth
            start, depth = pos, 0
            while pos < end and (depth or text[pos] not in ",)"):
                depth += (text[pos] == "(") - (text[pos] == ")")
                pos += 1
            row.append((start, pos))
        pos = _skip_blanks(text, pos, end)
        if text[pos : pos + 1] == ")":
            return row, pos + 1
        if text[pos : pos + 1] != ",":
            return None, pos
        pos += 1
    return None, pos


def copy_rows(text: str, pos: int, columns: int) -> Iterator[list[tuple[int, int]]]:
    """The rows of a COPY dump at `pos`: lines of `columns` tab-separated values, up to `\\.`."""
    end = min(len(text), pos + MAX_SQL_ROWS)
    while pos < end:
        stop = text.find("\n", pos, end)
        stop = end if stop == -1 else stop
        line = text[pos:stop].rstrip("\r")
        if line == "\\." or line.count("\t") != columns - 1:
            return
        row, at = [], pos
        for cell in line.split("\t"):
            row.append((at, at + len(cell)))
            at += len(cell) + 1
        yield row
        pos = stop + 1


def _escaped(text: str, at: int) -> bool:
    """Whether the character at `at` is escaped by a backslash (MySQL's `\\'`; `\\\\'` ends the string)."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _skip_blanks(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos] in _BLANKS:
        pos += 1
    return pos
