"""Values as a person reads them: NULL for None, nested rows as ``{name: value, ...}``, lists
as ``[...]``, maps as ``{key: value}``, times without a ``T``.

    >>> value_text(None), value_text(True), value_text([1, None]), value_text({"k": 2.5})
    ('NULL', 'true', '[1, NULL]', '{k: 2.5}')
    >>> import datetime as dt
    >>> value_text(dt.datetime(2024, 5, 1, 12, 0)), value_text(b"\\x00\\xff")
    ('2024-05-01 12:00:00', "X'00FF'")
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

NULL = "NULL"
#: longest text of one value before it is cut (the full value is in the data itself)
MAX_CHARS = 120


def value_text(value: Any, limit: int = MAX_CHARS) -> str:
    """One value as text (see the module docstring), cut to ``limit`` characters."""
    text = _text(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _text(v: Any) -> str:
    if v is None:
        return NULL
    if isinstance(v, bool):
        return "true" if v else "false"
    if hasattr(v, "asDict") and callable(v.asDict):  # a Spark Row: a nested ROW value
        return "{" + ", ".join(f"{k}: {_text(x)}" for k, x in v.asDict().items()) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_text(k)}: {_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    if isinstance(v, bytes | bytearray):
        return "X'" + bytes(v).hex().upper() + "'"
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return repr(v)
    return str(v).replace("\n", "\\n")
