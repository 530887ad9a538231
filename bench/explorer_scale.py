"""The explorer at real scale: how long its figures take to build, and how ``schemalab
inspect``'s output grows with snapshots.

1. Figures (the target: under 1 s for 50 schema versions × 100 fields). The 50-version trips
   table of ``data/scenarios/rides_history.sql`` (111 fields over its life, DDL only) and a
   synthetic 200-version × 300-field table for headroom; for each, the median of 5 builds
   of ``lineage_figure`` (all rows, and one 40-row page as the Explorer shows it),
   ``schema_timeline_figure``, ``snapshot_tree_figure`` of a 60-file snapshot, and the
   ``LineageView`` widget (the figure plus plotly's ``FigureWidget``).
2. ``inspect``: tables of 100, 200 and 400 snapshots (one data file each, committed with
   schemalab's own commit), the lines ``schemalab inspect`` prints and how long it takes,
   next to the lines the old format printed (every manifest list, manifest and file of every
   snapshot again).

    .venv/bin/python bench/explorer_scale.py
    .venv/bin/python bench/explorer_scale.py --quick     # 2 runs, 100/200 snapshots
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from schemalab.widgets import (
    LineageView,
    lineage_figure,
    schema_timeline_figure,
    snapshot_tree_figure,
)

import schemalab as sl
from schemalab import sql
from schemalab.history.model import TableHistory
from schemalab.paimon.binaryrow import EMPTY_ROW
from schemalab.paimon.commit import commit
from schemalab.paimon.manifest import DataFileMeta, FileKind, ManifestEntry
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.render.history_text import history_text
from schemalab.schema.apply import new_table_schema
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    RenameColumn,
    SchemaChange,
    UpdateColumnType,
)
from schemalab.types.model import BIGINT, INT, STRING

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``runs`` calls (after one warm-up call)."""
    fn()
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def rides_history(root: str) -> TableHistory:
    wh = sl.Warehouse(os.path.join(root, "rides"))
    text = open(os.path.join(REPO, "data", "scenarios", "rides_history.sql")).read()
    for piece in sql.split_statements(text):
        if not isinstance(sql.parse_statement(piece), sql.Insert):
            wh.execute_sql(piece)
    return wh.table("trips").history()


def synthetic_history(root: str, versions: int, fields: int, seed: int = 3) -> TableHistory:
    """``fields`` columns at first, then one random ADD / RENAME / DROP / retype per
    version."""
    rng = random.Random(seed)
    path = os.path.join(root, f"syn{versions}x{fields}")
    sm = SchemaManager(path, "bench.syn")
    sm.create(new_table_schema([ColumnSpec(f"c{i}", INT() if i % 2 else STRING())
                                for i in range(fields)], time_millis=1_700_000_000_000))
    n = 0
    while len(sm.list_ids()) < versions:
        s = sm.latest()
        assert s is not None
        f = rng.choice(s.fields)
        roll = rng.random()
        change: SchemaChange
        if roll < 0.35:
            change = AddColumn((f"n{n}",), STRING())
        elif roll < 0.65:
            change = RenameColumn((f.name,), f"r{n}")
        elif roll < 0.85 and len(s.fields) > 2:
            change = DropColumn((f.name,))
        elif f.type == INT():
            change = UpdateColumnType((f.name,), BIGINT())
        else:
            change = AddColumn((f"m{n}",), INT())
        n += 1
        sm.commit_changes([change])
    return sl.open_table(path).history()


def many_files_tree(h: TableHistory, files: int) -> Any:
    """A snapshot node of the history's table with ``files`` data files in one manifest."""
    from schemalab.history.snapshots import FileNode, ManifestListNode, ManifestNode, SnapshotNode

    nodes = tuple(FileNode(f"bucket-0/data-{i:04d}-0.parquet", "ADD", i % 7, 10)
                  for i in range(files))
    return SnapshotNode(1, None, 6, None, "APPEND", 10 * files,
                        (ManifestListNode("base", "manifest-list-0",
                                          (ManifestNode("manifest-0", files, 0, 6, nodes),)),),
                        nodes)


def figures(name: str, h: TableHistory, runs: int) -> None:
    tree = many_files_tree(h, 60)
    fields = len(h.lineage)
    print(f"\n{name}: {len(h.schemas)} schema versions, {fields} fields, "
          f"{sum(len(lin.states) for lin in h.lineage):,} field states")
    print(f"  {'figure':<42} {'wall (median)':>14} {'CPU (median)':>13}")
    for label, fn in [
        ("lineage_figure, all rows", lambda: lineage_figure(h)),
        ("lineage_figure, a 40-row page", lambda: lineage_figure(h, page_size=40)),
        ("lineage_figure, time axis", lambda: lineage_figure(h, x="time")),
        ("schema_timeline_figure", lambda: schema_timeline_figure(h)),
        ("snapshot_tree_figure, 60 files", lambda: snapshot_tree_figure(tree)),
        ("LineageView widget (40-row pages)", lambda: LineageView(None, h)),  # type: ignore[arg-type]
    ]:
        wall, cpu = timed(fn, runs)
        print(f"  {label:<42} {wall * 1000:>11.0f} ms {cpu * 1000:>10.0f} ms")


def snapshot_table(root: str, snapshots: int) -> str:
    """A one-column table with ``snapshots`` appends of one (absent) data file each:
    ``inspect`` reads metadata only."""
    path = os.path.join(root, f"snaps{snapshots}")
    schema = new_table_schema([ColumnSpec("id", INT())], time_millis=1_700_000_000_000)
    SchemaManager(path, "bench.snaps").create(schema)
    for i in range(snapshots):
        entry = ManifestEntry(FileKind.ADD, EMPTY_ROW, 0, 1, DataFileMeta(
            f"data-{i:05d}-0.parquet", 1000, 10, schema_id=0))
        commit(path, "bench.snaps", schema, [entry])
    return path


def old_lines(h: TableHistory) -> int:
    """What the old ``inspect`` printed for the snapshots: every list, manifest and file of
    every snapshot's tree."""
    n = 0
    for s in h.snapshots:
        node = h.tree(s.id)
        n += 1 + sum(1 + sum(1 + len(m.files) for m in lst.manifests) for lst in node.lists)
    return n


def inspect_growth(root: str, sizes: list[int], runs: int) -> None:
    print("\nschemalab inspect (text) by snapshots:")
    print(f"  {'snapshots':>9} {'lines':>7} {'snapshot lines':>15} {'old format':>11} "
          f"{'time (median)':>14}")
    for n in sizes:
        path = snapshot_table(root, n)

        def run(path: str = path) -> str:
            return history_text(sl.open_table(path).history())

        text = run()
        lines = text.splitlines()
        snap_lines = len(lines) - lines.index("Snapshots:") - 1
        wall, _ = timed(run, runs)
        old = old_lines(sl.open_table(path).history())
        print(f"  {n:>9} {len(lines):>7} {snap_lines:>15} {old:>11,} {wall * 1000:>11.0f} ms")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args(argv)
    runs = 2 if args.quick else args.runs
    root = tempfile.mkdtemp(prefix="schemalab-explorer-bench-")
    print(f"load average at start: {_load()} ({os.cpu_count()} cores; wall time stretches "
          "with it, CPU time much less)")
    figures("rides_history.sql (the trips table)", rides_history(root), runs)
    if not args.quick:
        figures("synthetic", synthetic_history(root, 200, 300), runs)
    inspect_growth(root, [100, 200] if args.quick else [100, 200, 400], runs)
    print(f"\nload average at end: {_load()}")
    return 0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
