"""The ``schemalab`` command.

    schemalab sql WAREHOUSE -e "STATEMENTS" | -f FILE.sql     run statements, print results
    schemalab inspect TABLE_PATH [--json]                    history: schemas, lineage, snapshots
    schemalab clean-orphans TABLE_PATH [--delete] [--older-than SECONDS]
                                                             files no snapshot references
    schemalab compact TABLE_PATH [--partitions 'p=1;p=2'] [--order-by a,b]
                                                             rewrite files into the current schema

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

    p_inspect = sub.add_parser("inspect", help="print a table's history: schema versions, "
                                               "field lineage, snapshot tree")
    p_inspect.add_argument("table_path", help="a Paimon or Iceberg table directory")
    p_inspect.add_argument("--json", action="store_true", help="machine-readable output")

    p_orphans = sub.add_parser(
        "clean-orphans", help="list (dry run) or delete files of a table that no snapshot "
                              "references: what a killed writer leaves behind")
    p_orphans.add_argument("table_path", help="a Paimon table directory")
    p_orphans.add_argument("--delete", action="store_true",
                           help="remove the orphans (default: only list them)")
    p_orphans.add_argument("--older-than", type=float, default=None, metavar="SECONDS",
                           help="only files older than this are orphans, so a writer still "
                                "in flight keeps its files (default 3600)")

    p_compact = sub.add_parser(
        "compact", help="rewrite a Paimon table's files into the current schema (Paimon's "
                        "full compaction), as one COMPACT snapshot")
    p_compact.add_argument("table_path", help="a Paimon table directory")
    p_compact.add_argument("--partitions", metavar="'p1=v1,p2=v2;p1=v3'",
                           help="only these partitions (Paimon's partitions argument)")
    p_compact.add_argument("--order-by", metavar="COLUMNS",
                           help="sort an unaware-bucket append table by these columns "
                                "(order_strategy 'order')")

    args = parser.parse_args(argv)
    try:
        if args.command == "sql":
            return _sql(args)
        if args.command == "inspect":
            return _inspect(args)
        if args.command == "clean-orphans":
            return _clean_orphans(args)
        if args.command == "compact":
            return _compact(args)
    except SchemaLabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except RecursionError:
        print("error: input nested too deeply (types, expressions or JSON)", file=sys.stderr)
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


def _inspect(args: argparse.Namespace) -> int:
    import json

    from schemalab.open import open_table

    history = open_table(args.table_path).history()
    if args.json:
        print(json.dumps(history.to_json(), indent=2, ensure_ascii=False))
    else:
        print(history_text(history))
    return 0


def _clean_orphans(args: argparse.Namespace) -> int:
    import os

    from schemalab import fileio
    from schemalab.errors import TableNotFoundError
    from schemalab.paimon.orphans import DEFAULT_OLDER_THAN_SECONDS, clean_orphans

    path = fileio.normalize(args.table_path)
    if not fileio.list_names(os.path.join(path, "schema")):
        raise TableNotFoundError(f"{path} is not a Paimon table: it has no schema/ directory",
                                 rule="table-must-exist")
    older = DEFAULT_OLDER_THAN_SECONDS if args.older_than is None else args.older_than
    if older < 0:
        raise SchemaLabError(f"--older-than must be 0 or more seconds, not {older}",
                             rule="older-than")
    print(clean_orphans(path, delete=args.delete, older_than_seconds=older).text())
    return 0


def _compact(args: argparse.Namespace) -> int:
    from schemalab.table import Table

    t = Table(args.table_path)
    t.schema  # noqa: B018 - a clear error for a directory that is not a table
    result = t.compact(partitions=args.partitions,
                       order_strategy="order" if args.order_by else None,
                       order_by=args.order_by or ())
    print(result.text())
    return 0


def history_text(h: Any) -> str:
    """A readable history: versions with their changes, lineage, and the snapshot tree."""
    out = [f"{h.name} ({h.format}) at {h.location}", "", "Schema versions:"]
    for v in h.schemas:
        changes = "; ".join(ev.describe() for ev in v.events) or "(created)"
        cols = ", ".join(f.name for f in v.top_level)
        out.append(f"  schema {v.id}: {changes}")
        out.append(f"      columns: {cols}")
    for v in h.other_versions:
        out.append(f"  {v.kind} {v.id}: {v.label}")
    out += ["", "Field lineage (by field id):"]
    for lin in h.lineage:
        flags = ""
        if lin.name_reused_from:
            flags += f"  [name reused from field {', '.join(map(str, lin.name_reused_from))}]"
        if lin.swapped_with:
            flags += f"  [swapped with field {', '.join(map(str, lin.swapped_with))}]"
        events = ", ".join(f"{ev.kind}@{ev.schema_id}" for ev in lin.events)
        out.append(f"  field {lin.field_id}: {' → '.join(lin.names)}  ({events}){flags}")
    out += ["", "Snapshots:"]
    if not h.snapshots:
        out.append("  (none)")
    for s in h.snapshots:
        node = h.tree(s.id)
        out.append(f"  snapshot {s.id} ({s.kind}, schema {s.schema_id}, "
                   f"{_rows(s.record_count)})")
        for lst in node.lists:
            out.append(f"    {lst.kind} list {lst.name}")
            for m in lst.manifests:
                out.append(f"      manifest {m.name} (+{m.added} -{m.deleted})")
                for f in m.files:
                    part = ",".join(f"{k}={v}" for k, v in f.partition.items())
                    where = f" [{part}]" if part else ""
                    bucket = "" if f.bucket is None else f" bucket {f.bucket}"
                    keys = ""
                    if f.min_key is not None:  # a primary-key file: its place in the LSM tree
                        keys = (f" level {f.level} keys {_key_text(f.min_key)}.."
                                f"{_key_text(f.max_key)} seq {f.min_sequence_number}.."
                                f"{f.max_sequence_number}")
                    out.append(f"        {f.kind} {f.path}{where}{bucket} schema {f.schema_id}"
                               f" {_rows(f.row_count)}{keys}")
    return "\n".join(out)


def _rows(n: int | None) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _key_text(key: Any) -> str:
    return "(" + ", ".join(map(str, key)) + ")"


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
