"""Tables by catalog name (issue 26 item 2), against real catalogs: Iceberg's own REST catalog
server (Java, on 127.0.0.1) and pyiceberg's SQL catalog on SQLite, with tables made through
them by pyiceberg; and Paimon's filesystem catalog. `make test-catalogs`."""

from __future__ import annotations

import contextlib
import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from catalogs_support import (
    RestServer,
    java_iceberg_table,
    make_paimon_tables,
    make_tables,
    paimon_rest_props,
    sql_catalog,
    start_paimon_rest_server,
    start_rest_server,
)

import schemalab as sl
from schemalab import catalogs, cli
from schemalab.catalog_warehouse import CatalogWarehouse
from schemalab.errors import SchemaLabError, TableNotFoundError

pytest_plugins = ["infra.fixtures"]

#: what the REST server puts in every loadTable's config (RESTServerCatalogAdapter's
#: include-credentials): the client must read the table with them
CREDENTIALS = {"CATALOG_INCLUDE__CREDENTIALS": "true",
               "CATALOG_S3_ACCESS__KEY__ID": "AKIDCATALOG",
               "CATALOG_S3_SECRET__ACCESS__KEY": "catalog-secret",
               "CATALOG_S3_SESSION__TOKEN": "catalog-token"}


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestServer]:
    server = start_rest_server(tmp_path_factory.mktemp("rest"), CREDENTIALS)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def rest_props(rest: RestServer) -> dict[str, str]:
    from pyiceberg.catalog import load_catalog

    props = {"type": "rest", "uri": rest.uri}
    make_tables(load_catalog("maker", **props))
    return props


@pytest.fixture(scope="module")
def sql_props(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("sql")
    cat = sql_catalog(root)
    make_tables(cat)
    # the SQL catalog keys its tables by catalog name: every client must use the same one
    return {"type": "sql", "name": "local", "uri": cat.properties["uri"],
            "warehouse": cat.properties["warehouse"]}


@pytest.fixture(params=["rest", "sql"])
def props(request: pytest.FixtureRequest) -> dict[str, str]:
    return dict(request.getfixturevalue(f"{request.param}_props"))


def _pyiceberg(props: dict[str, str], ident: str) -> Any:
    from pyiceberg.catalog import load_catalog

    props = dict(props)
    return load_catalog(props.pop("name", "oracle"), **props).load_table(ident)


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def _arrow_rows(tbl: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in tbl.to_pylist())


# ---- reading through the catalog ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["plain", "evolved", "refs"])
def test_read_through_the_catalog_equals_pyicebergs_scan(props: dict[str, str], kind: str,
                                                         spark: Any) -> None:
    t = sl.open_table(f"db.{kind}", catalog=props, spark=spark)
    assert isinstance(t, catalogs.CatalogIcebergTable)
    oracle = _pyiceberg(props, f"db.{kind}")
    assert t.metadata_file.endswith(oracle.metadata_location.rsplit("/", 1)[-1])
    df = t.read()
    assert list(df.columns) == [f.name for f in oracle.schema().fields]
    assert _rows(df) == _arrow_rows(oracle.scan().to_arrow())
    # every snapshot in its own schema, as pyiceberg reads it
    for snap in oracle.metadata.snapshots:
        theirs = oracle.scan(snapshot_id=snap.snapshot_id).to_arrow()
        ours = t.read(snapshot_id=snap.snapshot_id)
        assert _rows(ours) == _arrow_rows(theirs), snap.snapshot_id


def test_java_iceberg_table_through_the_rest_catalog(rest: RestServer,
                                                     rest_props: dict[str, str],
                                                     spark: Any) -> None:
    """A table Java Iceberg 1.12.0 wrote through the REST catalog (its own Parquet writer,
    a column added, a tag and a branch) reads as pyiceberg reads it, at every snapshot."""
    ident = java_iceberg_table(rest, "jt")
    t = sl.open_table(ident, catalog=rest_props, spark=spark)
    oracle = _pyiceberg(rest_props, ident)
    assert len(oracle.metadata.snapshots) == 3
    for snap in oracle.metadata.snapshots:
        assert _rows(t.read(snapshot_id=snap.snapshot_id)) == _arrow_rows(
            oracle.scan(snapshot_id=snap.snapshot_id).to_arrow()), snap.snapshot_id
    assert _rows(t.read()) == [(1, "a", None), (2, "b", None), (3, "c", None), (4, "d", 9)]
    refs = {n: (r["type"], r["snapshot-id"]) for n, r in t.metadata.refs.items()}
    ids = [s.snapshot_id for s in oracle.metadata.snapshots]
    assert refs == {"main": ("branch", ids[2]), "v1": ("tag", ids[0]), "dev": ("branch", ids[1])}
    h = t.history()
    assert [v.id for v in h.schemas] == [0, 1] and h.partial is None


def test_history_through_the_catalog(props: dict[str, str]) -> None:
    t = sl.open_table("db.evolved", catalog=props)
    oracle = _pyiceberg(props, "db.evolved")
    h = t.history()
    assert h.partial is None and "partial" not in h.to_json()
    assert h.name == "db.evolved"
    assert [s.id for s in h.snapshots] == [s.snapshot_id for s in oracle.metadata.snapshots]
    assert [v.id for v in h.schemas] == [s.schema_id for s in oracle.metadata.schemas]
    lin = h.lineage_of(2)
    assert lin.names == ("name", "label") or list(lin.names) == ["name", "label"]
    assert "score" in [f.name for f in h.schemas[-1].top_level]


def test_branch_and_tag_through_the_catalog(props: dict[str, str], spark: Any) -> None:
    t = sl.open_table("db.refs", catalog=props, spark=spark)
    oracle = _pyiceberg(props, "db.refs")
    theirs = {name: ref.snapshot_id for name, ref in oracle.metadata.refs.items()}
    assert set(theirs) == {"main", "dev", "v1"}
    ours = {name: r["snapshot-id"] for name, r in t.metadata.refs.items()}
    assert ours == theirs
    kinds = {name: r["type"] for name, r in t.metadata.refs.items()}
    assert kinds == {"main": "branch", "dev": "branch", "v1": "tag"}
    for name in ("v1", "dev"):
        snap = theirs[name]
        assert _rows(t.read(snapshot_id=snap)) == _arrow_rows(
            oracle.scan(snapshot_id=snap).to_arrow())
    # the history marks which snapshot each ref points at
    by_id = {s.id: s for s in t.history().snapshots}
    assert "v1" in str(by_id[theirs["v1"]].summary.get("refs"))
    assert "dev" in str(by_id[theirs["dev"]].summary.get("refs"))


def test_explorer_on_a_catalog_table(props: dict[str, str]) -> None:
    from schemalab.widgets import Explorer

    t = sl.open_table("db.refs", catalog=props)
    ex = Explorer(t)
    assert [ex.get_title(i) for i in range(len(ex.children))] == [
        "Schema history", "Lineage", "Snapshots", "Time travel"]
    assert not any(type(c).__name__ == "HTML" and "sl-error" in c.value for c in ex.children)
    assert ex._repr_mimebundle_()["text/plain"].startswith("Explorer of db.refs (")


# ---- the catalog's config and credentials ---------------------------------------------------


def test_rest_table_config_and_credentials_reach_the_reader(rest_props: dict[str, str]) -> None:
    ref = catalogs.IcebergCatalog(rest_props).load("db.plain")
    assert ref.io_properties["s3.access-key-id"] == "AKIDCATALOG"
    assert ref.io_properties["s3.session-token"] == "catalog-token"
    opts = catalogs.store_options(ref.io_properties)
    assert opts["s3.access-key"] == "AKIDCATALOG"
    assert opts["s3.secret-key"] == "catalog-secret"
    assert opts["s3.session-token"] == "catalog-token"
    assert "AKIDCATALOG" not in repr(ref)


def test_catalog_credentials_read_a_table_on_s3(s3: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A SQL catalog whose warehouse is on S3 (moto on loopback): only the catalog's
    properties say how to reach the store (no AWS_* in the environment), and schemalab's
    own reader reads the table's metadata, manifests and history there."""
    for k in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID",
              "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    from infra.s3 import ACCESS_KEY, REGION, SECRET_KEY
    from pyiceberg.catalog.sql import SqlCatalog

    bucket_dir = s3.uri("catalogs", tmp_path.name)
    props = {"type": "sql", "name": "s3cat", "uri": f"sqlite:///{tmp_path / 'c.db'}",
             "warehouse": bucket_dir, "s3.endpoint": s3.endpoint,
             "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY,
             "s3.region": REGION}
    maker = SqlCatalog("s3cat", **{k: v for k, v in props.items() if k not in ("type", "name")})
    make_tables(maker)
    oracle = maker.load_table("db.evolved")
    t = sl.open_table("db.evolved", catalog=props)
    assert t.metadata_file.startswith("s3://") and t.path.startswith(bucket_dir)
    h = t.history()
    assert [s.id for s in h.snapshots] == [s.snapshot_id for s in oracle.metadata.snapshots]
    live = {f.path for f in h.tree(h.snapshots[-1].id).live_files}
    assert len(live) == 3
    assert [v.id for v in h.schemas] == [0, 1, 2]


def test_store_options_follow_icebergs_property_names() -> None:
    assert catalogs.store_options({
        "s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu-west-1",
        "s3.path-style-access": "true", "uri": "http://x", "py-io-impl": "y",
    }) == {"s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu-west-1",
           "s3.path.style.access": "true"}


# ---- partial answers (snapshots=refs) -------------------------------------------------------


def test_refs_only_answer_is_detected_and_the_history_says_partial(
        rest_props: dict[str, str], spark: Any) -> None:
    oracle = _pyiceberg(rest_props, "db.plain")
    first, last = (s.snapshot_id for s in oracle.metadata.snapshots)
    t = sl.open_table("db.plain", catalog={**rest_props, "snapshot-loading-mode": "refs"},
                      spark=spark)
    ref = t.catalog_table
    assert ref.returned_snapshot_ids == (last,)
    assert ref.missing_snapshot_ids == (first,)
    h = t.history()
    assert h.missing_snapshot_ids == (first,)
    assert h.partial and "snapshots=refs" in h.partial and str(first) in h.partial
    assert [s.id for s in h.snapshots] == [last]
    assert h.to_json()["partial"]["missing_snapshot_ids"] == [first]
    assert str(h).splitlines()[1].startswith("PARTIAL HISTORY")
    # the current snapshot still reads in full
    assert _rows(t.read()) == _arrow_rows(oracle.scan().to_arrow())
    # all snapshots referenced: nothing is missing
    full = sl.open_table("db.refs", catalog={**rest_props, "snapshot-loading-mode": "refs"})
    assert not full.catalog_table.partial and full.history().partial is None


# ---- names: ~/.schemalab.yaml, pyiceberg's configuration, the CLI ---------------------------


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cats: dict[str, Any]) -> None:
    import yaml

    path = tmp_path / "schemalab.yaml"
    path.write_text(yaml.safe_dump({"catalogs": cats}))
    monkeypatch.setenv(catalogs.CONFIG_ENV, str(path))


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_cli_inspect_by_catalog_name(rest_props: dict[str, str], sql_props: dict[str, str],
                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, {"lake": rest_props,
                                    "local": {k: v for k, v in sql_props.items() if k != "name"}})
    assert catalogs.catalog_names() == ["lake", "local"]
    for name in ("lake", "local"):
        code, out, err = _cli("inspect", "--catalog", name, "db.evolved")
        assert code == 0, err
        assert out.startswith("db.evolved (iceberg) at ")
        assert "field 2: name → label" in out
        code, out, err = _cli("inspect", "--catalog", name, "db.refs", "--json")
        assert code == 0, err
        assert len(json.loads(out)["snapshots"]) == 3
    code, out, err = _cli("explain", "--catalog", "lake", "db.evolved")
    assert code == 0, err
    assert "score" in out and "label" in out


def test_cli_says_a_catalogs_history_is_partial(rest_props: dict[str, str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, {"refs": {**rest_props, "snapshot-loading-mode": "refs"}})
    code, out, err = _cli("inspect", "--catalog", "refs", "db.plain")
    assert code == 0, err
    assert out.splitlines()[1].startswith("PARTIAL HISTORY: catalog refs returned 1 of")
    code, out, err = _cli("inspect", "--catalog", "refs", "db.plain", "--json")
    assert code == 0, err
    assert len(json.loads(out)["partial"]["missing_snapshot_ids"]) == 1


def test_pyiceberg_configuration_names_catalogs(rest_props: dict[str, str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(catalogs.CONFIG_ENV, str(tmp_path / "none.yaml"))
    monkeypatch.setenv("PYICEBERG_CATALOG__ENVLAKE__TYPE", "rest")
    monkeypatch.setenv("PYICEBERG_CATALOG__ENVLAKE__URI", rest_props["uri"])
    t = sl.open_table("db.plain", catalog="envlake")
    assert t.history().name == "db.plain"
    # and pyiceberg's own .pyiceberg.yaml
    home = tmp_path / "pyiceberg-home"
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text(
        f"catalog:\n  yamllake:\n    type: rest\n    uri: {rest_props['uri']}\n")
    monkeypatch.setenv("PYICEBERG_HOME", str(home))
    assert sl.open_table("db.refs", catalog="yamllake").name == "db.refs"


def test_warehouse_on_an_iceberg_catalog(props: dict[str, str], spark: Any) -> None:
    wh = sl.Warehouse(catalog=props, spark=spark)
    assert isinstance(wh, CatalogWarehouse) and isinstance(wh, sl.Warehouse)
    assert "db" in wh.list_databases()
    assert wh.list_tables("db") == ["db.evolved", "db.plain", "db.refs"]
    assert set(wh.list_tables()) >= {"db.evolved", "db.plain", "db.refs"}
    assert wh.has_table("db.plain") and not wh.has_table("db.nope")
    oracle = _pyiceberg(props, "db.plain")
    assert _rows(wh.table("db.plain").read()) == _arrow_rows(oracle.scan().to_arrow())
    with pytest.raises(SchemaLabError) as e:
        wh.checkpoint()
    assert e.value.rule == "catalog-no-checkpoint"


# ---- Paimon's filesystem catalog ------------------------------------------------------------


def test_paimon_filesystem_catalog_is_a_warehouse(tmp_path: Path) -> None:
    props = {"type": "filesystem", "warehouse": str(tmp_path / "wh")}
    wh = sl.Warehouse(catalog=props)
    assert type(wh) is sl.Warehouse and wh.path == str(tmp_path / "wh")
    wh.sql("CREATE TABLE db.t (a INT, b STRING); ALTER TABLE db.t RENAME COLUMN b TO c")
    t = sl.open_table("db.t", catalog=props)
    assert isinstance(t, sl.Table) and [f.name for f in t.schema.fields] == ["a", "c"]
    assert sl.Warehouse(catalog={"metastore": "filesystem",
                                 "warehouse": str(tmp_path / "wh")}).list_tables() == ["db.t"]


@pytest.fixture(scope="module")
def paimon_rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    server = start_paimon_rest_server(tmp_path_factory.mktemp("paimon-rest"))
    try:
        props = paimon_rest_props(server)
        make_paimon_tables(props)
        yield props
    finally:
        server.stop()


def _pypaimon_rows(props: dict[str, str], ident: str) -> list[tuple[Any, ...]]:
    from pypaimon import CatalogFactory

    opts = {k: v for k, v in props.items() if k != "type"}
    t = CatalogFactory.create({**opts, "metastore": "rest"}).get_table(ident)
    rb = t.new_read_builder()
    return _arrow_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def test_paimon_rest_catalog_tables(paimon_rest: dict[str, str], spark: Any) -> None:
    t = sl.open_table("db.events", catalog=paimon_rest, spark=spark)
    assert isinstance(t, sl.Table) and t.name == "db.events"
    assert [f.name for f in t.schema.fields] == ["id", "name", "score"]
    assert _rows(t.read()) == _pypaimon_rows(paimon_rest, "db.events")
    h = t.history()
    assert [s.id for s in h.snapshots] == [1, 2, 3] and [v.id for v in h.schemas] == [0, 1]
    wh = sl.Warehouse(catalog=paimon_rest, spark=spark)
    assert wh.list_databases() == ["db"] and wh.list_tables() == ["db.events"]
    assert _rows(wh.table("db.events").read()) == _rows(t.read())
    with pytest.raises(TableNotFoundError) as e:
        wh.table("db.event")
    assert "db.events" in str(e.value) and e.value.rule == "table-must-exist"
    # writes commit through the catalog (tests/test_catalog_paimon_writes.py); what has no
    # call in its REST API is refused, naming it
    with pytest.raises(SchemaLabError) as e2:
        wh.sql("CALL sys.create_tag(table => 'db.events', tag => 'v1')")
    assert e2.value.rule == "catalog-read-only"
    assert "Paimon's REST catalog" in str(e2.value) and "sys.create_tag" in str(e2.value)
    assert _rows(wh.sql("SELECT id FROM db.events WHERE score = 9")) == [(4,)]


def test_paimon_rest_catalog_by_name_in_the_cli(paimon_rest: dict[str, str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, {"team": paimon_rest})
    code, out, err = _cli("inspect", "--catalog", "team", "db.events")
    assert code == 0, err
    assert out.startswith("db.events (paimon) at ") and "score" in out
    code, out, err = _cli("inspect", "--catalog", "team", "db.events", "--json")
    assert code == 0, err
    assert [s["id"] for s in json.loads(out)["snapshots"]] == [1, 2, 3]


def test_paimon_catalog_errors(tmp_path: Path) -> None:
    with pytest.raises(SchemaLabError) as e:
        sl.Warehouse(catalog={"type": "filesystem"})
    assert e.value.rule == "catalog-config" and "warehouse" in str(e.value)
    with pytest.raises(SchemaLabError) as e:
        sl.Warehouse(catalog={"metastore": "hive", "warehouse": str(tmp_path)})
    assert e.value.rule == "catalog-config" and "hive" in str(e.value)


# ---- errors ---------------------------------------------------------------------------------


def test_unknown_names_are_clear(rest_props: dict[str, str], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, {"lake": rest_props})
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    with pytest.raises(SchemaLabError) as e:
        sl.open_table("db.plain", catalog="nowhere")
    assert e.value.rule == "catalog-config"
    assert "nowhere" in str(e.value) and "lake" in str(e.value)
    with pytest.raises(TableNotFoundError) as e2:
        sl.open_table("db.plane", catalog="lake")
    assert e2.value.rule == "table-must-exist"
    assert "db.plane" in str(e2.value) and "db.plain" in str(e2.value)
    code, _, err = _cli("inspect", "--catalog", "lake", "db.nope")
    assert code == 1 and "db.nope" in err and "rule: table-must-exist" in err


def test_unreachable_catalog_is_clear() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SchemaLabError) as e:
        sl.open_table("db.t", catalog={"type": "rest", "uri": f"http://127.0.0.1:{port}"})
    assert e.value.rule == "catalog-unavailable" and str(port) in str(e.value)


def test_bad_config_file_is_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("catalogs: [1, 2]\n")
    monkeypatch.setenv(catalogs.CONFIG_ENV, str(path))
    with pytest.raises(SchemaLabError) as e:
        sl.open_table("db.t", catalog="x")
    assert e.value.rule == "catalog-config" and str(path) in str(e.value)
