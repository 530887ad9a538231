"""The views of a table's branches and tags, on the Java-written Iceberg fixture t20 (tag
``tag1`` and branch ``br1`` at snapshot 2, a write on the branch, main evolved then rolled
back): the history view's lanes (one per branch, the fork, the tag, the rolled-back
snapshots on a lane of their own), the lineage per branch and across branches, the snapshot
tree and time travel by ref. Figure data are checked, not pixels (the browser test looks at
pixels)."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import pytest
from test_iceberg_java_fixtures import TARBALL, expected

import schemalab as sl
from schemalab.history.graph import with_refs
from schemalab.refs import Ref

pytest.importorskip("ipywidgets")

from schemalab.widgets import (  # noqa: E402
    LineageView,
    SchemaHistoryView,
    SnapshotTreeView,
    TimeTravelView,
    lineage_figure,
)
from schemalab.widgets.figures import branch_lanes_figure  # noqa: E402
from schemalab.widgets.lanes_figure import UNREACHED, lanes  # noqa: E402

T20 = "t20_branch_tag_rollback"


@pytest.fixture(scope="module")
def t20(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("widgets-refs")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(root, filter="data",
                       members=[m for m in tar.getmembers() if f"/{T20}/" in f"/{m.name}"])
    return sl.open_table(root / "db" / T20)


def _trace(fig: Any, name: str) -> Any:
    return next(t for t in fig.data if t.name == name)


def test_lanes_one_per_branch_with_fork_tag_and_rolled_back_snapshots(t20: Any) -> None:
    h = t20.history()
    labels = expected(T20)["labels"]
    fig = branch_lanes_figure(h)
    assert list(fig.layout.yaxis.ticktext) == ["main", "br1", UNREACHED]
    # framed as every figure: the subtitle a line of the title (plotly's overprints it)
    assert fig.layout.title.subtitle.text is None
    assert "<br>" in fig.layout.title.text and "2 branches, 1 tag" in fig.layout.title.text
    main = _trace(fig, "snapshots: main")
    br1 = _trace(fig, "snapshots: br1")
    off = _trace(fig, f"snapshots: {UNREACHED}")
    assert len(main.x) == 3 and len(br1.x) == 1 and len(off.x) == 2
    assert labels["s5"] in off.customdata and set(off.marker.symbol) == {"circle-open"}
    assert set(main.y) == {0} and set(br1.y) == {-1}
    # the fork: from s2 on main to br1's own snapshot
    fork = _trace(fig, "fork")
    s2_x = main.x[list(main.customdata).index(labels["s2"])]
    assert list(fork.x[:2]) == [s2_x, br1.x[0]] and list(fork.y[:2]) == [0, -1]
    assert "forked from main at snapshot" in fork.hovertext[0] and "tag1" in fork.hovertext[0]
    tags = _trace(fig, "tags")
    assert list(tags.text) == ["tag1"] and tags.x[0] == s2_x
    # main's lane carries the schema versions; Iceberg's branch shares them
    assert list(_trace(fig, "schema versions: main").text) == ["0", "1", "2", "3"]
    assert not lanes(h)[1].versions
    # the order: br1's write came after s2 and before the rolled-back writes
    assert s2_x < br1.x[0] < min(off.x)


def test_history_view_shows_lanes_and_refs(t20: Any) -> None:
    view = SchemaHistoryView(t20)
    assert view.lanes is not None and view.lanes_box.children
    assert "refs: branch main, branch br1 (forked at" in view.static_text()
    assert "tag tag1" in view.static_text()


def test_lineage_by_branch_and_across(t20: Any) -> None:
    view = LineageView(t20)
    assert [o[1] for o in view.branch.options] == [None, "main", "br1", "all"]
    assert view.branch.layout.display == ""
    view.branch.value = "br1"
    # the title names the branch's table (cut to fit, as every title) and what is drawn
    title = view.figure.layout.title.text
    assert "t20_branch_tag_rollback.branch_" in title and ": field lineage by id" in title
    view.branch.value = "all"
    titles = [a.text for a in view.figure.layout.annotations if a.text.startswith("branch ")]
    assert titles == ["branch main", "branch br1"]
    assert "every field has the same name on every branch" in view.figure.layout.title.text
    assert view.figure.layout.title.subtitle.text is None
    assert not view.error.value


class _TwoBranches:
    """Two real Paimon tables (ours), seen as the branches main and dev of one table through
    the FormatTable ref API: the same field ids, renamed apart on each. (Paimon's own
    branches are read by schemalab.paimon.refs; this checks the format-neutral drawing.)"""

    def __init__(self, main: Any, dev: Any) -> None:
        self.main, self.dev, self.name = main, dev, main.name

    @property
    def refs(self) -> list[Ref]:
        return [Ref("main", "branch", 1, 1), Ref("dev", "branch", 1, 1)]

    def branch(self, name: str) -> Any:
        return self if name == "main" else self.dev

    def history(self) -> Any:
        return self.main.history()


def test_lineage_across_branches_names_fields_renamed_apart(spark: Any,
                                                            tmp_path: Path) -> None:
    wh = sl.Warehouse(str(tmp_path / "wh"), spark=spark)
    for name, new in (("m", "b_main"), ("d", "b_dev")):
        wh.sql(f"CREATE TABLE {name} (id INT, b STRING); "
               f"ALTER TABLE {name} RENAME COLUMN b TO {new}")
    table = _TwoBranches(wh.table("m"), wh.table("d"))
    h = with_refs(table.history(), table)
    fig = lineage_figure(h, branch="all")
    sub = fig.layout.title.text  # the subtitle is a line of the title (widgets.frame)
    assert "field 1: main b_main / dev b_dev" in sub
    assert "field 0" not in sub  # id has the same name on both
    panels = [a.text for a in fig.layout.annotations if a.text.startswith("branch ")]
    assert panels == ["branch main", "branch dev"]
    assert any("b_dev" in t for t in fig.layout.yaxis2.ticktext)
    assert any("b_main" in t for t in fig.layout.yaxis.ticktext)


def test_snapshot_tree_by_ref(t20: Any) -> None:
    view = SnapshotTreeView(t20)
    assert len(view.snapshot.options) == 6  # every snapshot in the metadata
    view.ref.value = "br1"
    head = next(r.snapshot_id for r in t20.refs if r.name == "br1")
    assert len(view.snapshot.options) == 3 and view.snapshot.value == head
    assert view.node.id == head
    view.ref.value = "tag1"
    assert [v for _, v in view.snapshot.options] == [expected(T20)["labels"]["s2"]]
    assert view.node.id == expected(T20)["labels"]["s2"]
    assert not view.error.value


def test_time_travel_reads_a_ref_as_its_engine_binds_it(t20: Any, spark: Any) -> None:
    view = TimeTravelView(t20)
    view.ref.value = "tag1"
    assert view.snapshot.disabled
    view.show()
    assert not view.error.value
    assert "tag tag1: the schema of its snapshot" in view.result.value
    view.ref.value = "br1"
    view.show()
    assert "branch-a3" in view.result.value and "a_renamed" in view.result.value


def test_hostile_ref_names_are_escaped_and_never_a_path(t20: Any, tmp_path: Path) -> None:
    """Iceberg ref names are map keys, not paths: a branch named like markup or a path is
    read (no file is built from it) and drawn escaped."""
    import json

    doc = json.loads(Path(t20.metadata_file).read_text())
    hostile = "<img src=x onerror=alert(1)>/../x"
    doc["refs"][hostile] = dict(doc["refs"]["br1"])
    meta = Path(t20.metadata_file).parent / "v99.metadata.json"
    meta.write_text(json.dumps(doc))
    try:
        t = sl.open_table(meta)
        assert hostile in {r.name for r in t.refs}
        assert [s.snapshot_id for s in t.branch(hostile).snapshots] == \
            [s.snapshot_id for s in t.branch("br1").snapshots]
        fig = branch_lanes_figure(t.history())
        assert "&lt;img src=x onerror=alert(1)&gt;/../x" in fig.layout.yaxis.ticktext
        assert not any("<img" in str(x) for x in fig.layout.yaxis.ticktext)
        assert "<img" not in SchemaHistoryView(t).static_html()
    finally:
        meta.unlink()
