"""The ``schemalab`` command.

    schemalab sql WAREHOUSE -e "STATEMENTS" | -f FILE.sql     run statements, print results
    schemalab sql --catalog NAME -e "STATEMENTS"             ... on a catalog's tables
    schemalab inspect TABLE_PATH [--json] [--field NAME|ID] [--snapshot N] [--since TIME]
                     [--ref NAME]                            history: schemas, lineage, snapshots,
                                                             refs (a branch's own, or a tag's)
    schemalab inspect --catalog NAME db.t                    a table found through a catalog
    schemalab explain TABLE_PATH [--column C] [--where EXPR] [--snapshot N]
                                                             why a column reads as it does
    schemalab clean-orphans TABLE_PATH [--delete] [--older-than SECONDS]
                                                             files no snapshot references
    schemalab compact TABLE_PATH [--partitions 'p=1;p=2'] [--order-by a,b]
                                                             rewrite files into the current schema
    schemalab serve TABLE_OR_WAREHOUSE [--port N] [--host H] [--allow-reads]
                                                             the Explorer as a read-only web page

sql, inspect, explain, clean-orphans and compact take ``--progress`` (files and manifests
done of total on stderr, even when it is no terminal) or ``--no-progress``.

Errors print as one clear message, then ``rule: <id>`` (an id of ``schemalab.rules``), exit
status 1, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from schemalab.errors import SchemaLabError

MAX_ROWS = 1000


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schemalab",
        description="Explore and teach table schema evolution on Paimon-format tables.")
    sub = parser.add_subparsers(dest="command", required=True)

    p_sql = sub.add_parser("sql", help="run SQL statements against a warehouse")
    p_sql.add_argument("warehouse", nargs="?",
                       help="warehouse directory (created if missing); none with --catalog")
    _catalog_option(p_sql)
    src = p_sql.add_mutually_exclusive_group(required=True)
    src.add_argument("-e", "--execute", metavar="STATEMENTS", help="';'-separated statements")
    src.add_argument("-f", "--file", metavar="FILE.sql", help="a file of statements")
    p_sql.add_argument("--max-rows", type=int, default=MAX_ROWS,
                       help=f"rows to print per result (default {MAX_ROWS})")

    p_inspect = sub.add_parser("inspect", help="print a table's history: schema versions, "
                                               "field lineage, snapshot tree")
    p_inspect.add_argument("table_path", help="a Paimon or Iceberg table directory (with "
                                              "--catalog: the table's name, db.t)")
    _catalog_option(p_inspect)
    p_inspect.add_argument("--json", action="store_true", help="machine-readable output")
    p_inspect.add_argument("--field", metavar="NAME|ID",
                           help="only this field: its lineage and the versions that changed it "
                                "(a name matches every field that ever had it)")
    p_inspect.add_argument("--snapshot", type=int, metavar="N",
                           help="only this snapshot, with its live files")
    p_inspect.add_argument("--since", metavar="TIME",
                           help="only versions and snapshots written since TIME (2024-05-01, "
                                "'2024-05-01 12:30' in UTC, or epoch milliseconds)")
    p_inspect.add_argument("--ref", metavar="NAME",
                           help="only this branch (its own history) or tag (its snapshot)")

    p_explain = sub.add_parser(
        "explain", help="why a column reads as it does: NULL, cast, or from a renamed column "
                        "(runs the read on Spark)")
    p_explain.add_argument("table_path", help="a Paimon or Iceberg table directory (with "
                                              "--catalog: the table's name, db.t)")
    _catalog_option(p_explain)
    p_explain.add_argument("--column", metavar="C",
                           help="the column (a.b for a nested field); without it, how every "
                                "column of every group of files is read")
    p_explain.add_argument("--where", metavar="EXPR",
                           help="only the rows this Spark SQL condition selects")
    p_explain.add_argument("--snapshot", type=int, metavar="N",
                           help="read this snapshot (in its own schema) instead of the latest")

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
    _serve_parser(sub)
    for p in (p_sql, p_inspect, p_explain, p_orphans, p_compact):
        _progress_options(p)
    return parser


def _catalog_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--catalog", metavar="NAME",
                   help="find the table through this catalog (configured in "
                        "~/.schemalab.yaml or pyiceberg's .pyiceberg.yaml)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    commands = {"sql": _sql, "inspect": _inspect, "explain": _explain,
                "clean-orphans": _clean_orphans, "compact": _compact, "serve": _serve}
    try:
        if args.command in commands:
            return _with_progress(args, commands[args.command])
    except SchemaLabError as e:
        print(f"error: {e}", file=sys.stderr)
        if e.rule is not None:
            print(f"rule: {e.rule}", file=sys.stderr)
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


def _progress_options(p: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress``: the progress line on stderr always (a log, a
    pipe) or never; without either, on a terminal only (``SCHEMALAB_PROGRESS`` likewise)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_const", const="always",
                   help="show progress on stderr (files and manifests done of total) even "
                        "when stderr is no terminal")
    g.add_argument("--no-progress", dest="progress", action="store_const", const="never",
                   help="show no progress")


def _with_progress(args: argparse.Namespace, command: Any) -> int:
    from schemalab import progress

    if getattr(args, "progress", None) is None:
        return int(command(args))
    previous = progress.configure(args.progress)
    try:
        return int(command(args))
    finally:
        progress.configure(previous)


def _serve_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve a table's (or a warehouse's) Explorer as a "
                                     "read-only web page through Voila")
    p.add_argument("target", metavar="TABLE_OR_WAREHOUSE",
                   help="a Paimon or Iceberg table directory, or a warehouse directory")
    p.add_argument("--port", type=int, default=8866, help="port (default 8866)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--allow-reads", action="store_true",
                   help="let viewers read rows (Time travel on Spark); default: metadata only")


def _serve(args: argparse.Namespace) -> int:
    from schemalab.serve import serve

    return serve(args.target, port=args.port, host=args.host, allow_reads=args.allow_reads)


def _sql(args: argparse.Namespace) -> int:
    import schemalab as sl

    if (args.warehouse is None) == (args.catalog is None):
        raise SchemaLabError("schemalab sql takes a warehouse directory or --catalog NAME "
                             "(one of the two)", rule="catalog-config")
    if args.file:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read()
    else:
        text = args.execute
    wh = sl.Warehouse(args.warehouse, catalog=args.catalog)
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

    from schemalab.history.graph import table_history
    from schemalab.open import open_table
    from schemalab.render.history_text import HistoryFilter, history_text, parse_since

    table = open_table(args.table_path, catalog=args.catalog)
    snapshot = args.snapshot
    if args.ref is not None:
        table, snapshot = _at_ref(table, args.ref, snapshot)
    flt = HistoryFilter(field=args.field, snapshot=snapshot,
                        since=None if args.since is None else parse_since(args.since))
    history = table_history(table)
    if args.json:
        print(json.dumps(filtered_json(history, flt), indent=2, ensure_ascii=False))
    else:
        print(history_text(history, flt))
    return 0


def _at_ref(table: Any, ref: str, snapshot: int | None) -> tuple[Any, int | None]:
    """``inspect --ref``: a branch's own table, or a tag's snapshot (with ``--snapshot``
    refused: one or the other)."""
    target = table.ref_target(ref)
    kind = next(r.kind for r in table.refs if r.name == ref)
    if kind == "branch":
        return table.branch(ref), snapshot
    if snapshot is not None:
        raise SchemaLabError(f"Table {table.name}: give --snapshot or a tag's --ref, not both",
                             table=table.name, rule="one-read-target")
    snap = target.snapshot
    return target.table, None if snap is None else target.table.snapshot_id_of(snap)


def filtered_json(h: Any, flt: Any) -> dict[str, Any]:
    """``inspect --json`` narrowed as the text is: the same shape as the whole, fewer
    schemas, lineages and snapshots."""
    doc: dict[str, Any] = h.to_json(snapshot_ids=_json_snapshots(h, flt))
    if flt.field is not None:
        ids = {lin.field_id for lin in flt.fields(h)}
        doc["lineage"] = [x for x in doc["lineage"] if x["field_id"] in ids]
        changed = {ev.schema_id for lin in flt.fields(h) for ev in lin.events}
        doc["schemas"] = [s for s in doc["schemas"] if s["id"] in changed]
    if flt.since is not None:
        doc["schemas"] = [s for s in doc["schemas"] if (s["time_millis"] or 0) >= flt.since]
    return doc


def _json_snapshots(h: Any, flt: Any) -> list[int]:
    ids = [s.id for s in h.snapshots if flt.since is None or (s.time_millis or 0) >= flt.since]
    if flt.snapshot is not None:
        if flt.snapshot not in {s.id for s in h.snapshots}:
            raise SchemaLabError(f"Table {h.name} has no snapshot {flt.snapshot}",
                                 table=h.name, rule="snapshot-must-exist")
        ids = [i for i in ids if i == flt.snapshot]
    return ids


def _explain(args: argparse.Namespace) -> int:
    from schemalab.open import open_table

    t = open_table(args.table_path, catalog=args.catalog)
    if args.column is None:
        if args.where:
            raise SchemaLabError("--where needs --column: the condition picks the rows whose "
                                 "column is explained", rule="explain-arguments")
        print(t.explain_read(args.snapshot))
        return 0
    print(t.why(args.column, where=args.where, snapshot_id=args.snapshot))
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
    from schemalab.explain.values import value_text

    return value_text(value, limit=10**6)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
