"""The ``schemalab`` command.

    schemalab sql WAREHOUSE -e "STATEMENTS" | -f FILE.sql     run statements, print results

Errors print as one clear message (exit status 1), never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from schemalab.errors import SchemaLabError

MAX_ROWS = 1000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="schemalab",
        description="Explore and teach table schema evolution on Paimon-format tables.")
    sub = parser.add_subparsers(dest="command", required=True)

    p_sql = sub.add_parser("sql", help="run SQL statements against a warehouse")
    p_sql.add_argument("warehouse", help="warehouse directory (created if missing)")
    src = p_sql.add_mutually_exclusive_group(required=True)
    src.add_argument("-e", "--execute", metavar="STATEMENTS", help="';'-separated statements")
    src.add_argument("-f", "--file", metavar="FILE.sql", help="a file of statements")
    p_sql.add_argument("--max-rows", type=int, default=MAX_ROWS,
                       help=f"rows to print per result (default {MAX_ROWS})")

    args = parser.parse_args(argv)
    try:
        if args.command == "sql":
            return _sql(args)
    except SchemaLabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # Spark's own errors: show the message, not a JVM stack
        if type(e).__module__.startswith(("pyspark", "py4j")):
            print(f"error: {_spark_message(e)}", file=sys.stderr)
            return 1
        raise
    parser.error(f"unknown command {args.command}")
    return 2


def _sql(args: argparse.Namespace) -> int:
    from schemalab.warehouse import Warehouse

    if args.file:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read()
    else:
        text = args.execute
    wh = Warehouse(args.warehouse)
    for result in wh.execute_sql(text):
        if result.dataframe is not None:
            df = result.dataframe
            rows = [tuple(r) for r in df.limit(args.max_rows + 1).collect()]
            print(format_table(list(df.columns), rows[: args.max_rows]))
            if len(rows) > args.max_rows:
                print(f"(showing the first {args.max_rows} rows)")
        elif result.rows is not None:
            print(format_table(result.columns, result.rows))
        elif result.message:
            print(result.message)
    return 0


def _spark_message(e: Exception) -> str:
    text = str(e)
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return type(e).__name__


def format_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table in the style of Spark's ``show()``; NULL for None."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in cells:
        for i, v in enumerate(row):
            widths[i] = max(widths[i], len(v))
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [line, "| " + " | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
           + " |", line]
    for row in cells:
        out.append("| " + " | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True))
                   + " |")
    out.append(line)
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).replace("\n", "\\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
