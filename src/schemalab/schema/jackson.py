"""JSON as Paimon's Java writers lay it out (Jackson's ``DefaultPrettyPrinter``), and telling
that layout apart from pypaimon's ``json.dumps(indent=2)``.

    >>> print(jackson_pretty({"id": 0, "keys": ["a", "b"], "options": {}}))
    {
      "id" : 0,
      "keys" : [ "a", "b" ],
      "options" : { }
    }
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from schemalab.errors import CorruptFileError

Layout = Literal["java", "python"]

_JAVA_KEY = re.compile(r'^\s*"(?:[^"\\]|\\.)*" : ', re.M)


def detect_layout(text: str) -> Layout:
    """"java" for Jackson's ``"key" : value`` layout, else "python" (``json.dumps``)."""
    return "java" if _JAVA_KEY.search(text) else "python"


def jackson_pretty(value: Any) -> str:
    """Serialize like Jackson's ``writerWithDefaultPrettyPrinter()``: objects one entry per
    line with two-space indentation by object depth, ``"key" : value``, arrays inline
    (``[ 1, 2 ]``, ``[ ]``), empty objects ``{ }``, non-ASCII characters as they are."""
    parts: list[str] = []
    _jackson(value, 0, parts)
    return "".join(parts)


def _jackson(value: Any, depth: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{ }")
            return
        out.append("{")
        first = True
        for k, v in value.items():
            out.append("\n" if first else ",\n")
            first = False
            out.append("  " * (depth + 1))
            out.append(jackson_string(str(k)))
            out.append(" : ")
            _jackson(v, depth + 1, out)
        out.append("\n" + "  " * depth + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[ ]")
            return
        out.append("[ ")
        for i, v in enumerate(value):
            if i:
                out.append(", ")
            _jackson(v, depth, out)
        out.append(" ]")
    elif isinstance(value, str):
        out.append(jackson_string(value))
    elif value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(repr(value))
    else:
        raise TypeError(f"cannot serialize {type(value).__name__}")


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n",
                  "\r": "\\r", "\t": "\\t"}


def jackson_string(s: str) -> str:
    """A JSON string as Jackson writes it: short escapes where JSON has them, ``\\u00XX``
    (upper-case hex) for other control characters, everything else verbatim."""
    buf = ['"']
    for ch in s:
        esc = _SHORT_ESCAPES.get(ch)
        if esc is not None:
            buf.append(esc)
        elif ord(ch) < 0x20:
            buf.append(f"\\u{ord(ch):04X}")
        else:
            buf.append(ch)
    buf.append('"')
    return "".join(buf)


def load_object(text: str | bytes, *, path: str, what: str) -> tuple[dict[str, Any], Layout]:
    """The JSON object of a metadata file (``what``: "a schema file", "a snapshot file") and
    the layout it was written in. :class:`CorruptFileError` naming ``path`` for anything
    else."""
    try:
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptFileError(path, f"not valid JSON ({e})") from None
    except RecursionError:
        raise CorruptFileError(path, "JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise CorruptFileError(path, f"{what} must hold a JSON object")
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return data, detect_layout(raw)
