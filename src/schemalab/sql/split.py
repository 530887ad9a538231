"""A script → its statements, split on ``;`` where Spark's lexer would split it.

    >>> split_statements("SELECT ';' AS a; -- done; really\\nSELECT 2;;")
    ["SELECT ';' AS a", '-- done; really\\nSELECT 2']
    >>> unclosed_region("SELECT `open")
    "the quoted name that starts at line 1, column 8 is never closed ('`open'...)"

This runs before any tokenizer does: a tokenizer fails on the first unterminated quote, and
the statements before it should still be reported one by one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["split_statements", "unclosed_region"]


def split_statements(text: str) -> list[str]:
    """The statements of a script: split on ``;`` outside quotes and comments, stripped,
    without the pieces that hold nothing but whitespace and comments.

    Quotes and comments follow Spark's lexer: backslash escapes in ``'..'`` and ``".."``
    (not in raw ``r'..'``), doubled backticks in ```..```, ``--`` to the end of the line and
    nested ``/* .. */``. An unterminated quote or comment runs to the end of the text, so
    its statement fails to parse rather than being cut in two.

    >>> split_statements("SELECT 'it\\\\'s; ok'; /* a; /* b; */ c; */ SELECT 2")
    ["SELECT 'it\\\\'s; ok'", '/* a; /* b; */ c; */ SELECT 2']
    """
    pieces: list[str] = []
    start = 0
    has_code = False
    for kind, begin, end in _regions(text):
        if kind == "code":
            for offset, char in enumerate(text[begin:end]):
                if char == ";":
                    if has_code:
                        pieces.append(text[start:begin + offset].strip())
                    start, has_code = begin + offset + 1, False
                elif not char.isspace():
                    has_code = True
        elif kind in ("quoted", "open-quoted"):
            has_code = True
    if has_code:
        pieces.append(text[start:].strip())
    return pieces


def unclosed_region(text: str) -> str | None:
    """Why ``text`` cannot be tokenized when a quote or comment in it is never closed: what
    it is and where it starts, for an error message; None when everything is closed."""
    for kind, start, _ in _regions(text):
        if kind.startswith("open-"):
            line = text.count("\n", 0, start) + 1
            column = start - (text.rfind("\n", 0, start) + 1) + 1
            what = {"'": "string", '"': "string", "`": "quoted name"}.get(text[start], "comment")
            return (f"the {what} that starts at line {line}, column {column} is never closed "
                    f"({text[start:start + 20]!r}...)")
    return None


def _regions(text: str) -> Iterator[tuple[str, int, int]]:
    """``(kind, start, end)`` regions that cover ``text``; kind is ``code``, ``quoted``,
    ``comment``, or ``open-quoted``/``open-comment`` for one that runs off the end."""
    i, n, code_start = 0, len(text), 0
    while i < n:
        char = text[i]
        if char in "'\"`" or text.startswith(("--", "/*"), i):
            if code_start < i:
                yield "code", code_start, i
            if char == "`":
                end, kind = _end_of_backticks(text, i), "quoted"
            elif char in "'\"":
                raw = i > 0 and text[i - 1] in "rR" and (i < 2 or not _is_word_char(text[i - 2]))
                end, kind = _end_of_string(text, i, raw), "quoted"
            elif char == "-":
                newline = text.find("\n", i)
                end, kind = (n if newline < 0 else newline + 1), "comment"
            else:
                end, kind = _end_of_block_comment(text, i), "comment"
            if end < 0:
                yield f"open-{kind}", i, n
                return
            yield kind, i, end
            i = code_start = end
        else:
            i += 1
    if code_start < n:
        yield "code", code_start, n


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


# Each _end_of_* returns the index after the closing delimiter, or -1 when it never closes.


def _end_of_string(text: str, start: int, raw: bool) -> int:
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\" and not raw:
            i += 2
        elif text[i] == quote:
            return i + 1
        else:
            i += 1
    return -1


def _end_of_backticks(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "`":
            if text.startswith("``", i):
                i += 2
                continue
            return i + 1
        i += 1
    return -1


def _end_of_block_comment(text: str, start: int) -> int:
    depth, i = 0, start
    while i < len(text):
        if text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return -1


def statement_head(stmt: Any) -> str:
    """A statement's text on one line, cut at 60 characters."""
    text = " ".join(stmt.text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def partly_applied(message: str, number: int, statements: Sequence[Any]) -> str:
    """``message`` of statement ``number``'s error, saying which statements ran before it."""
    where = f"Statement {number} of {len(statements)} ({statement_head(statements[number - 1])})"
    if number == 1:
        return f"{where} failed, nothing was applied: {message}"
    done = ", ".join(str(i) for i in range(1, number))
    applied = (f"statement {done} was applied and stays" if number == 2
               else f"statements {done} were applied and stay")
    return f"{where} failed; {applied}: {message}"
