"""The notebook widgets and figures, built in a kernel-less Python process on real tables.

Every view is built on a table of each origin — ours, pypaimon's, pyiceberg's — and its
controls are driven as a user would (dropdowns, buttons). The ALTER stepper runs a scenario
live on the shared Spark session; ``back()`` must leave the warehouse byte for byte as it
was. Names reach the browser escaped. The lineage figure of the 50-version trips table
(data/scenarios/rides_history.sql, its DDL only: no JVM) has a label exactly where a field
changes. The real-browser test is tests/browser/; figure-building time is measured in
bench/explorer_scale.py, not asserted here.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_history import table_path

import schemalab as sl

pytest.importorskip("ipywidgets")

from schemalab.widgets import (  # noqa: E402
    AlterStepper,
    Explorer,
    LineageView,
    SchemaHistoryView,
    SnapshotTreeView,
    TimeTravelView,
    lineage_figure,
    schema_timeline_figure,
    snapshot_tree_figure,
)
from schemalab.widgets.common import error_html  # noqa: E402
from schemalab.widgets.stepper import statement_text  # noqa: E402

from schemalab import sql  # noqa: E402 - after the importorskip
from schemalab.render.lineage_layout import lineage_layout  # noqa: E402
from schemalab.render.palette import EVENT_COLORS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RIDES = REPO / "data" / "scenarios" / "rides_history.sql"

HOSTILE = "<script>alert('x')</script>"
HOSTILE_TABLE = "<img src=x onerror=alert(1)>"  # a table name cannot hold a path separator


# ---- tables of every origin ------------------------------------------------------------------


@pytest.fixture(scope="module")
def ours(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    wh = sl.Warehouse(tmp_path_factory.mktemp("widgets-ours"), spark=spark)
    wh.sql("""CREATE TABLE T (a STRING, b STRING, c STRING);
              INSERT INTO T VALUES ('a1', 'b1', 'c1');
              ALTER TABLE T DROP COLUMN c;
              ALTER TABLE T ADD COLUMN c STRING;
              INSERT INTO T VALUES ('a2', 'b2', 'c2')""")
    return wh.table("T")


@pytest.fixture(scope="module")
def pypaimon_table(pypaimon_warehouses: Path, spark: Any) -> Any:
    return sl.open_table(table_path(pypaimon_warehouses, "events"), spark=spark)


@pytest.fixture(scope="module")
def pyiceberg_table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A table pyiceberg wrote: an append, a rename and an added column, another append."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType

    root = tmp_path_factory.mktemp("widgets-iceberg")
    cat = SqlCatalog("w", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}/wh")
    cat.create_namespace("demo")
    t = cat.create_table("demo.orders", schema=Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()),
        NestedField(3, "qty", IntegerType())))
    t.append(pa.Table.from_pylist([{"id": 1, "name": "apple", "qty": 3}],
                                  schema=t.schema().as_arrow()))
    with t.update_schema() as u:
        u.rename_column("name", "product")
        u.update_column("qty", LongType())
        u.add_column("note", StringType())
    t.append(pa.Table.from_pylist([{"id": 2, "product": "pear", "qty": 2**40, "note": "n"}],
                                  schema=t.schema().as_arrow()))
    return sl.open_table(root / "wh" / "demo" / "orders", spark=spark)


@pytest.fixture(params=["ours", "pypaimon", "pyiceberg"])
def table(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue({"ours": "ours", "pypaimon": "pypaimon_table",
                                    "pyiceberg": "pyiceberg_table"}[request.param])


def _errors(*texts: str) -> list[str]:
    return [t for t in texts if "sl-error" in t]


# ---- the views -------------------------------------------------------------------------------


def test_schema_history_view_diffs_any_two_versions(table: Any) -> None:
    view = SchemaHistoryView(table)
    ids = [value for _, value in view.old.options]
    assert ids == [v.id for v in table.history().schemas] and len(ids) >= 2
    assert [label for label, _ in view.old.options] == [f"schema {i}" for i in ids]
    assert view.diff.value and not _errors(view.error.value)
    view.old.value, view.new.value = ids[0], ids[-1]
    # the first version against the last: what the whole history changed, by field id
    want = table.history().diff(ids[0], ids[-1])
    assert all(ev.kind.replace("_", " ") in view.diff.value for ev in want.events)
    assert f"schema {ids[0]} → {ids[-1]}" in view.diff.value
    view.axis.value = "time"
    assert view.figure.layout.xaxis2.type == "date" and not _errors(view.error.value)


def test_lineage_view_has_a_row_per_field(table: Any) -> None:
    view = LineageView(table)
    h = table.history()
    rows = list(view.figure.layout.yaxis.ticktext)
    assert len(rows) == len(h.lineage)
    assert {int(r.rsplit("#", 1)[1].split("<")[0]) for r in rows} == {
        lin.field_id for lin in h.lineage}
    # one x position per schema version, labelled with the version id
    assert list(view.figure.layout.xaxis.ticktext) == [str(v.id) for v in h.schemas]
    # focusing one name keeps only the fields that ever had it
    name = h.lineage[-1].names[0]
    view.focus.value = name
    wanted = {lin.field_id for lin in h.lineage
              if any(f.full_name == name or f.name == name for _, f in lin.states)}
    assert len(view.figure.layout.yaxis.ticktext) >= len(wanted)
    assert f"`{name}`" in view.figure.layout.title.text
    view.focus.value = ""
    assert len(view.figure.layout.yaxis.ticktext) == len(h.lineage)


def test_snapshot_tree_view_shows_how_a_file_reads_today(table: Any) -> None:
    view = SnapshotTreeView(table)
    snaps = [value for _, value in view.snapshot.options]
    assert snaps and view.snapshot.value == snaps[-1]
    assert view.files.options, "the latest snapshot lists its data files"
    view.files.value = view.files.options[0][1]
    detail = view.detail.value
    assert not _errors(view.error.value), view.error.value
    assert "written under schema" in detail and "Read today as" in detail
    assert " 1 rows" not in detail and ">None<" not in detail
    # an older snapshot has its own tree; an Iceberg one is named by its sequence number
    view.snapshot.value = snaps[0]
    assert not _errors(view.error.value)
    assert view.node.id == snaps[0]
    label = view.snapshot.label
    if table.history().format == "iceberg":
        assert label.startswith("#1 · ") and str(snaps[0]) not in label
        assert f"id {snaps[0]}" in view.snapshot_id.value
    else:
        assert label.startswith(f"{snaps[0]} · ")


def test_time_travel_view_reads_both_ways(table: Any) -> None:
    view = TimeTravelView(table)
    first = view.snapshot.options[0][1]
    view.snapshot.value = first
    view.schema.value = "snapshot"
    view.show()
    own = view.result.value
    assert not _errors(view.error.value), view.error.value
    view.schema.value = "current"
    view.show()
    today = view.result.value
    assert not _errors(view.error.value), view.error.value
    cols = [f.name for f in _current_fields(table)]
    assert all(re.search(rf"<th [^>]*>{re.escape(c)}</th>", today) for c in cols)
    assert own != today or len(table.history().schemas) == 1


def _current_fields(table: Any) -> list[Any]:
    h = table.history()
    return list(h.schemas[-1].top_level)


def test_explorer_has_every_tab_and_reads_without_a_kernel(table: Any) -> None:
    ex = Explorer(table)
    assert [ex.get_title(i) for i in range(len(ex.children))] == [
        "Schema history", "Lineage", "Snapshots", "Time travel"]
    assert not any(type(c).__name__ == "HTML" and "sl-error" in c.value for c in ex.children)
    # what GitHub or nbconvert show without widget state: a summary, not a raw repr, and
    # the same text on every run (nbval compares it)
    bundle = ex._repr_mimebundle_()
    assert bundle["text/plain"].startswith(f"Explorer of {table.history().name} (")
    assert "children=" not in bundle["text/plain"] and "<script" not in bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert Explorer(table)._repr_mimebundle_()["text/html"] == bundle["text/html"]


# ---- the stepper -----------------------------------------------------------------------------


def _tree_digest(root: str) -> dict[str, str]:
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


@pytest.fixture()
def stepper_wh(spark: Any, tmp_path: Path) -> Iterator[Any]:
    yield sl.Warehouse(tmp_path / "wh", spark=spark)


def test_stepper_steps_backs_and_resets_exactly(stepper_wh: Any) -> None:
    script = (Path(__file__).parents[1] / "data" / "scenarios" / "flip226.sql").read_text()
    s = AlterStepper(stepper_wh, script)
    n = len(s.statements)
    assert n == 6 and s.position == 0 and s.back_button.disabled
    seen: dict[int, dict[str, str]] = {0: _tree_digest(stepper_wh.path)}
    for pos in range(1, 5):
        assert s.step()
        assert s.position == pos and s.last_error is None
        seen[pos] = _tree_digest(stepper_wh.path)
    # after DROP c and ADD c: schema 2, the old row's c is NULL and the explanation says why
    assert s.schema_id == 2
    assert "NULL" in s.preview.value and "did not exist when these files were written" \
        in s.explanation.value
    assert "dropped" in s.diff.value or "added" in s.diff.value
    assert len(s.lineage.children) == 1
    assert s.back() and s.position == 3
    assert _tree_digest(stepper_wh.path) == seen[3], "back() restores the warehouse exactly"
    assert s.schema_id == 1
    s.play()
    assert s.position == n and s.step_button.disabled and not s.step()
    s.reset()
    assert s.position == 0 and _tree_digest(stepper_wh.path) == seen[0]
    assert s.table is None and s.lineage.children == ()


def test_a_click_waits_for_the_action_still_running(stepper_wh: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """JupyterLab 4.6 runs widget messages on a kernel subshell's thread as well as on the
    main one (seen in the tour's browser test: Step on the subshell, the next Reset on the
    main thread). A Reset clicked while a Step still runs waits for it: it used to delete the
    files the Step's read was collecting, and the Step's error then showed at step 0."""
    s = AlterStepper(stepper_wh, ["CREATE TABLE T (a INT)", "INSERT INTO T VALUES (1)"])
    assert s.step()
    lane = s.lanes[0]
    running, go_on = threading.Event(), threading.Event()
    run = lane.run

    def slow_run(stmt: Any, focus: str | None) -> None:
        running.set()
        go_on.wait(60)
        run(stmt, focus)

    monkeypatch.setattr(lane, "run", slow_run)
    step = threading.Thread(target=s.step)
    step.start()
    assert running.wait(60)
    reset = threading.Thread(target=s.reset)
    reset.start()
    reset.join(0.5)
    assert reset.is_alive(), "Reset ran while Step was still running"
    go_on.set()
    step.join(120)
    reset.join(120)
    assert s.position == 0 and s.table is None and not stepper_wh.has_table("T")
    assert "sl-error" not in lane.status.value and s.back_button.disabled


def test_a_jvm_error_shows_the_java_exception(spark: Any, tmp_path: Path) -> None:
    """A JVM error PySpark passes on as it is (Py4JJavaError) shows the Java exception's
    line, not only "An error occurred while calling o585.collectToPython"."""
    from py4j.protocol import Py4JJavaError

    path = tmp_path / "gone.parquet"
    spark.range(3).write.parquet(str(path))
    df = spark.read.parquet(str(path))
    for f in path.glob("*.parquet"):
        f.unlink()
    with pytest.raises(Py4JJavaError) as caught:
        df.collect()
    shown = re.sub("<[^>]+>", "", error_html(caught.value))
    assert "An error occurred" not in shown and "Exception" in shown.split(":", 1)[1], shown


def test_stepper_reads_as_a_tour(stepper_wh: Any) -> None:
    """Step 0 shows the first statement without the script's header comments; CREATE says
    there is no data yet instead of "snapshot None"; without a kernel the stepper reads as
    the list of its statements."""
    script = (REPO / "data" / "scenarios" / "flip226.sql").read_text()
    s = AlterStepper(stepper_wh, script)
    assert "-- FLIP-226" not in s.statement.value
    assert "CREATE TABLE T (a STRING, b STRING, c STRING)</pre>" in s.statement.value
    assert repr(s) == ("AlterStepper: step 0 of 6; next: CREATE TABLE T (a STRING, b STRING, "
                       "c STRING)")
    static = s._repr_mimebundle_()["text/html"]
    assert static.count("<li") == 6 and "sl-stepper" not in static
    s.step()
    for text in (s.header.value, s.statement.value, s.explanation.value):
        assert "None" not in text, text
    assert "no data yet" in s.header.value and "no data yet" in s.explanation.value
    assert s.statement.value == ("<pre class='sl-statement'>CREATE TABLE T (a STRING, "
                                 "b STRING, c STRING)</pre>")


def test_statement_text_drops_only_leading_comments() -> None:
    assert statement_text("-- head\n\n-- more\nALTER TABLE t -- why\n  ADD COLUMN c INT") == (
        "ALTER TABLE t -- why\n  ADD COLUMN c INT")
    assert statement_text("SELECT 1") == "SELECT 1"


def test_stepper_shows_a_refused_alter_as_a_message(stepper_wh: Any) -> None:
    s = AlterStepper(stepper_wh, [
        "CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p)",
        "ALTER TABLE t DROP COLUMN p",
        "ALTER TABLE t ADD COLUMN x INT NOT NULL"])
    s.play()
    assert s.position == 3
    assert "sl-error" in s.status.value
    assert "Traceback" not in s.status.value
    assert "NOT NULL" in s.status.value
    s.back()
    # at step 2 again: its own refusal (a partition column dropped), not step 3's
    assert "sl-error" in s.status.value and "NOT NULL" not in s.status.value
    s.step()
    # refused ALTERs wrote nothing: the table is still at its first schema
    assert s.schema_id == 0
    assert [f.name for f in s.table.schema.fields] == ["id", "p"]


def test_widget_html_escapes_hostile_names(stepper_wh: Any) -> None:
    col = HOSTILE.replace("'", "")
    s = AlterStepper(stepper_wh, [
        f"CREATE TABLE `{HOSTILE_TABLE}` (id INT)",
        f"ALTER TABLE `{HOSTILE_TABLE}` ADD COLUMN `{col}` STRING",
        f"INSERT INTO `{HOSTILE_TABLE}` VALUES (1, '<b>v</b>')"])
    s.play()
    assert s.last_error is None, s.status.value
    for text in (s.header.value, s.statement.value, s.diff.value, s.preview.value,
                 s.explanation.value):
        assert "<script>" not in text and "<b>v</b>" not in text and "<img" not in text
    assert "&lt;img src=x" in s.header.value
    assert "&lt;script&gt;" in s.diff.value and "&lt;b&gt;v&lt;/b&gt;" in s.preview.value
    fig = lineage_figure(s.table.history())
    assert all("<script>" not in str(t) for tr in fig.data for t in (tr.text or ()))
    view = SchemaHistoryView(s.table)
    assert "<script>" not in view.diff.value and "<img" not in view.diff.value


# ---- the lineage at real scale: 50 versions, 111 fields (DDL only, no JVM) ----------------


@pytest.fixture(scope="module")
def rides(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """data/scenarios/rides_history.sql without its INSERTs: 50 schema versions."""
    wh = sl.Warehouse(tmp_path_factory.mktemp("rides"))
    for text in sql.split_statements(RIDES.read_text()):
        if not isinstance(sql.parse_statement(text), sql.Insert):
            wh.execute_sql(text)
    return wh.table("trips").history()


def _label_cells(fig: Any) -> list[tuple[Any, Any, str]]:
    out = []
    for tr in fig.data:
        if tr.meta == "labels":
            out += [(x, y, t) for x, y, t in zip(tr.x, tr.y, tr.text, strict=True) if t.strip()]
    return out


def test_rides_lineage_labels_only_where_something_changes(rides: Any) -> None:
    assert len(rides.schemas) == 50 and len(rides.lineage) == 111
    fig = lineage_figure(rides)
    labels = _label_cells(fig)
    # a label exactly at each (field, version) where the field changed: added (92 at
    # creation and 19 later), renamed, retyped, nullability, comment, moved, dropped
    rows = {int(t.rsplit("#", 1)[1].split("<")[0]): i
            for i, t in enumerate(fig.layout.yaxis.ticktext)}
    col = {v.id: i for i, v in enumerate(rides.schemas)}
    changed = {(rows[ev.field_id], col[ev.schema_id]) for lin in rides.lineage
               for ev in lin.events}
    assert {(y, x) for x, y, _ in labels} == changed
    assert len(labels) == len(changed) == 146
    cells = sum(len(lin.states) for lin in rides.lineage)
    assert cells > 4000 and len(labels) < cells / 25
    # what a few of them say
    at = {(y, x): t.strip() for x, y, t in labels}
    assert at[(rows[6], col[10])] == "→ amount_cents"
    assert at[(rows[9], col[4])] == "INT → BIGINT"
    assert at[(rows[2], col[13])] == "nullable"
    assert at[(rows[72], col[7])] == "dropped"
    assert at[(rows[4], col[6])] == "comment" and at[(rows[5], col[14])] == "moved"


def test_rides_lineage_nests_rows_and_draws_swaps_and_reuse(rides: Any) -> None:
    layout = lineage_layout(rides)
    order = [(r.field_id, r.depth) for r in layout.rows]
    device = [fid for fid, _ in order].index(13)
    # device's fields follow it, one level deeper: os, model, app_version, carrier (dropped),
    # locale (renamed language_tag), os_version, the new carrier, battery_pct
    assert order[device + 1:device + 9] == [(14, 1), (15, 1), (16, 1), (17, 1), (18, 1),
                                            (95, 1), (97, 1), (101, 1)]
    ticks = lineage_figure(rides).layout.yaxis.ticktext
    assert "└\u00a0carrier" in ticks[device + 4] and "#17" in ticks[device + 4]
    conns = {(k.kind, k.from_field, k.to_field) for k in layout.connectors}
    assert conns == {("swap", 11, 12), ("reuse", 17, 97), ("reuse", 96, 98),
                     ("reuse", 32, 103)}
    swap = next(k for k in layout.connectors if k.kind == "swap")
    assert swap.to_col == 17 and swap.name == "end_zone ⇄ start_zone"
    fig = lineage_figure(rides)
    names = {tr.name for tr in fig.data if tr.showlegend is not False}
    assert {"added", "renamed", "retyped", "nullability", "comment", "moved", "dropped",
            "swapped names", "name used again", "unchanged"} <= names


def test_rides_lineage_focus_pages_and_time_axis(rides: Any) -> None:
    by_name = lineage_layout(rides, focus="promo_code")
    assert [r.field_id for r in by_name.rows] == [96, 98]
    assert by_name.focus_text == "fields ever named `promo_code`"
    nested = lineage_layout(rides, focus="carrier")
    assert [r.field_id for r in nested.rows] == [13, 17, 97]  # with their parent
    assert [r.field_id for r in lineage_layout(rides, focus=6).rows] == [6]
    pages = [lineage_layout(rides, page=p, page_size=40) for p in range(3)]
    assert [len(p.rows) for p in pages] == [40, 40, 31]
    assert sorted(r.field_id for p in pages for r in p.rows) == sorted(
        lin.field_id for lin in rides.lineage)
    fig = lineage_figure(rides, page=1, page_size=40)
    assert "fields 41–80 of 111" in fig.layout.title.text
    timed = lineage_figure(rides, x="time")
    assert timed.layout.xaxis.type == "date"
    # more versions than fit: the figure opens on the newest and pans to the rest
    narrow = lineage_figure(rides, max_columns=20)
    assert narrow.layout.dragmode == "pan" and narrow.layout.xaxis.range[0] == 30 - 0.6


def test_change_kinds_and_schema_ids_never_share_a_colour(rides: Any) -> None:
    kinds = {c.lower() for c in EVENT_COLORS.values()}
    timeline = schema_timeline_figure(rides)
    markers = [tr for tr in timeline.data if tr.type == "scatter"]
    schema_colors = {c.lower() for tr in markers for c in tr.marker.color}
    assert schema_colors and not schema_colors & kinds
    bars = {tr.marker.color.lower() for tr in timeline.data if tr.type == "bar"}
    assert bars <= kinds


def test_tree_figure_colours_files_by_schema_and_removed_entries_apart(ours: Any) -> None:
    node = ours.history().tree(2)
    fig = snapshot_tree_figure(node, newest_schema=2)
    files = [tr for tr in fig.data if tr.name.startswith("file, schema")]
    assert {tr.name for tr in files} == {"file, schema 0", "file, schema 2"}
    kinds = {c.lower() for c in EVENT_COLORS.values()}
    assert not {tr.marker.color.lower() for tr in files} & kinds
    assert all(t.endswith(" · 1 row") for tr in files for t in tr.text)


def test_figures_escape_hostile_names(stepper_wh: Any) -> None:
    col = HOSTILE.replace("'", "")
    wh = stepper_wh
    wh.sql(f"CREATE TABLE t (id INT, `{col}` STRING); "
           f"ALTER TABLE t RENAME COLUMN `{col}` TO `<b>x</b>`")
    h = wh.table("t").history()
    for fig in (lineage_figure(h), schema_timeline_figure(h)):
        texts = [str(t) for tr in fig.data for t in (tr.text or ())]
        texts += [str(t) for tr in fig.data for t in (tr.hovertext or ())]
        texts += list(fig.layout.yaxis.ticktext or ())
        assert texts and all("<script>" not in t and "<b>x" not in t for t in texts)


def test_tree_draws_paimon_deletion_vectors_and_index_files_apart() -> None:
    """A Paimon snapshot with an index manifest: its deletion-vector file is a delete file
    (rose, cross-hatched), its hash index an index file, and the data file the vector covers
    says how many of its rows it deletes; none takes a schema's colour."""
    from schemalab.widgets.tree_figure import snapshot_tree_figure

    from schemalab.history.snapshots import FileNode, ManifestListNode, ManifestNode, SnapshotNode
    from schemalab.render.history_text import file_text

    data = FileNode(path="bucket-0/data-1.parquet", kind="ADD", schema_id=1, row_count=10,
                    partition={}, bucket=0, deleted_rows=3, deleted_by="index-abc-0")
    dv = FileNode(path="index/index-abc-0", kind="ADD deletion vectors", schema_id=1,
                  row_count=1, partition={}, bucket=0, target="data-1.parquet")
    hash_index = FileNode(path="index/index-abc-1", kind="ADD hash index", schema_id=1,
                          row_count=10, partition={}, bucket=0)
    node = SnapshotNode(
        4, 3, 1, None, "COMPACT", 10,
        lists=(ManifestListNode("base", "manifest-list-a", (
                   ManifestNode("manifest-a", 1, 0, 1, (data,)),)),
               ManifestListNode("index", "index-manifest-a", (
                   ManifestNode("index-manifest-a", 2, 0, None, (dv, hash_index)),))),
        live_files=(data,),
        record_count_text="totalRecordCount: records in the live data files, before merges "
                          "and deletion vectors")
    fig = snapshot_tree_figure(node, reads="append table: no merge engine; deletion vectors on")
    by_name = {t.name: t for t in fig.data}
    assert list(by_name["delete file / deletion vector"].text) == [
        "ADD deletion vectors index/index-abc-0 · 1 data file"]
    assert by_name["delete file / deletion vector"].marker.pattern.shape == "x"
    assert list(by_name["index file"].text) == ["ADD hash index index/index-abc-1 · 10 rows"]
    assert list(by_name["file, schema 1"].text) == [
        "ADD bucket-0/data-1.parquet · 10 rows, 3 deleted by a deletion vector"]
    assert "index manifest" in list(by_name["manifest list"].text)
    title = " ".join(re.sub(r"<[^>]+>", " ", fig.layout.title.text).split())  # lines wrapped
    assert "before merges and deletion vectors" in title
    assert "deletion vectors on" in title
    assert file_text(data).endswith("3 deleted by a deletion vector in index-abc-0")
    assert file_text(dv).startswith("deletion vectors: index/index-abc-0")


def test_stored_notebooks_draw_plotly_figures_as_png_and_keep_widget_text(tmp_path: Path) -> None:
    """``python -m schemalab.widgets.static``: a plotly figure gains a PNG (drawn by plotly.js
    in Debian's chromium) that GitHub and nbconvert show; a widget output keeps only its
    static view. Without chromium the PNG step is skipped, and says so."""
    import base64
    import json
    import shutil

    from schemalab.widgets.static import PLOTLY, WIDGET_VIEW, main

    if not shutil.which("chromium"):
        pytest.skip("no chromium: `make test-browser` installs it")
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]), layout=dict(height=300))
    nb = {"cells": [
        {"cell_type": "code", "source": "", "metadata": {}, "outputs": [
            {"output_type": "display_data", "metadata": {},
             "data": {PLOTLY: json.loads(fig.to_json()), "text/plain": "Figure"}}]},
        {"cell_type": "code", "source": "", "metadata": {}, "outputs": [
            {"output_type": "display_data", "metadata": {},
             "data": {WIDGET_VIEW: {"model_id": "x"}, "text/plain": "Explorer: 3 views"}}]}],
        "metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    assert main([str(path)]) == 0
    out = json.loads(path.read_text())
    figure, widget = (c["outputs"][0]["data"] for c in out["cells"])
    png = base64.b64decode(figure["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    assert PLOTLY in figure  # JupyterLab still draws the interactive figure
    assert WIDGET_VIEW not in widget and widget["text/plain"] == "Explorer: 3 views"
    assert "widgets" not in out["metadata"]


# ---- the shared frame: nothing overprints (the browser test measures it; these pin the rules)


def test_every_figure_frames_title_legend_and_modebar_apart(rides: Any) -> None:
    from schemalab.widgets.frame import LEGEND_ROW_PX, MODEBAR_PX, SUB_LINE_PX, TITLE_LINE_PX

    node = rides.tree(rides.snapshots[-1].id) if rides.snapshots else None
    figs = [schema_timeline_figure(rides), lineage_figure(rides, page=0, page_size=40)]
    if node is not None:
        figs.append(snapshot_tree_figure(node, reads="append table: no merge engine"))
    for fig in figs:
        title = fig.layout.title
        # one text, anchored at the top: plotly's own subtitle is drawn over the title
        assert title.subtitle.text is None and "<br>" in title.text
        lines = title.text.count("<br>") + 1
        legend_top = (1 - fig.layout.legend.y) * fig.layout.height
        assert legend_top >= TITLE_LINE_PX + SUB_LINE_PX * (lines - 1), fig.layout.title.text
        # the plot starts below the title and at least one legend row
        assert fig.layout.margin.t >= legend_top + LEGEND_ROW_PX
        assert fig.layout.modebar.orientation == "v" and fig.layout.margin.r >= MODEBAR_PX


def test_a_figure_widget_is_drawn_at_the_width_its_cell_reports() -> None:
    """Plotly draws a figure without a width at 700 px whatever its cell; FullWidthFigure
    gives it the width the front end measures (its CellWidth), and again on a resize."""
    import plotly.graph_objects as go
    from schemalab.widgets.common import FullWidthFigure

    box = FullWidthFigure(go.Figure(go.Scatter(x=[0, 1], y=[0, 1])))
    assert box.widget.layout.width is None  # no front end has drawn it yet
    box.cell.width = 684  # a tab's width in a 900 px window
    assert box.widget.layout.width == 684
    box.cell.width = 1380
    assert box.widget.layout.width == 1380
    box.cell.width = 0  # not measurable (a hidden tab): the last width stays
    assert box.widget.layout.width == 1380
    # a view that never drew its data: the front end says so, a new FigureWidget replaces it
    first = box.widget
    box.cell.blank = True
    assert box.widget is not first and box.children == (box.cell, box.widget)
    assert box.widget.layout.width == 1380
    assert [tuple(t.y) for t in box.widget.data] == [tuple(t.y) for t in first.data]
    assert box.cell.blank is False


def test_the_changes_axis_counts_in_integers(rides: Any) -> None:
    axis = schema_timeline_figure(rides).layout.yaxis2
    assert axis.tickmode == "linear" and axis.tick0 == 0 and axis.dtick >= 1
    assert float(axis.dtick).is_integer()


def test_long_names_are_cut_in_titles_and_version_labels_thinned(rides: Any) -> None:
    import dataclasses

    from schemalab.widgets.frame import NAME_CHARS

    long = dataclasses.replace(rides, name="default." + "x" * 80)
    for fig in (schema_timeline_figure(long), lineage_figure(long, page=0, page_size=40)):
        name = fig.layout.title.text.split(">", 1)[1].split(":", 1)[0]
        assert len(name) == NAME_CHARS and name.endswith("…")
    # 50 versions: a label every few columns (each keeps its tick and grid line), the last
    # one always, so they do not run into each other in a 900 px window
    ticks = list(lineage_figure(rides).layout.xaxis.ticktext)
    shown = [t for t in ticks if t]
    assert len(ticks) == 50 and shown[0] == "0" and shown[-1] == "49" and len(shown) < 25
