"""Every ALTER that Paimon refuses is refused by ``SchemaManager.commit_changes`` on a real
table directory: a :class:`SchemaChangeError` carrying Paimon's message (``SchemaManager`` /
``Catalog.Column*Exception`` in Java, naming the table where Java's does), with ``table``,
``column`` and ``rule`` set, and nothing written: no new ``schema-N``, no temporary file.

Messages are those of Apache Paimon's ``paimon-core/.../schema/SchemaManager.java`` (listed in
``/work/shared/reference/paimon-format.md``, "Illegal changes and Paimon's messages").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from schemalab.errors import SchemaChangeError
from schemalab.paimon.schema_manager import SchemaManager
from schemalab.schema.apply import new_table_schema
from schemalab.schema.changes import (
    AddColumn,
    ColumnSpec,
    DropColumn,
    Move,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
)
from schemalab.types.model import DataType
from schemalab.types.parse import parse_type

TABLE = "db.t"


def T(text: str) -> DataType:  # noqa: N802 - reads like a type literal
    return parse_type(text)


# A partitioned primary-key table: p is the partition key, (p, k) the primary key.
KEYED = (
    ("p", "STRING"), ("k", "INT"), ("v", "INT"), ("w", "STRING"), ("big", "BIGINT"),
    ("d", "DATE"), ("addr", "ROW<city STRING, zip INT>"), ("tags", "ARRAY<INT>"),
)
PLAIN = (("a", "INT"), ("b", "STRING"))

NOT_NULL_MSG = ("Cannot update column type from nullable to non nullable for {}. You can set "
                "table configuration option 'alter-column-null-to-not-null.disabled' = 'false' "
                "to allow converting null columns to not null")


@dataclass(frozen=True)
class Case:
    changes: tuple[SchemaChange, ...]
    message: str
    column: str | None
    rule: str
    has_snapshots: bool = False
    #: table options; None = the keyed table's default ``bucket = 4``
    options: dict[str, str] | None = None
    columns: tuple[tuple[str, str], ...] = KEYED


def keyed_options(**extra: str) -> dict[str, str]:
    return {"bucket": "4", **extra}


CASES: dict[str, Case] = {
    # ---- adding a NOT NULL column ------------------------------------------------------
    "add-not-null-column": Case(
        (AddColumn(("nn",), T("INT NOT NULL")),),
        "Column nn cannot specify NOT NULL in the db.t table.", "nn",
        "added-column-must-be-nullable"),
    "add-not-null-nested-column": Case(
        (AddColumn(("addr", "nn"), T("STRING NOT NULL")),),
        "Column addr.nn cannot specify NOT NULL in the db.t table.", "addr.nn",
        "added-column-must-be-nullable"),
    # ---- type changes DataTypeCasts does not allow ---------------------------------------
    "int-to-bytes": Case(
        (UpdateColumnType(("v",), T("BYTES")),),
        "Column type v[INT] cannot be converted to BYTES without losing information.", "v",
        "type-change"),
    "date-to-int": Case(
        (UpdateColumnType(("d",), T("INT")),),
        "Column type d[DATE] cannot be converted to INT without losing information.", "d",
        "type-change"),
    "int-to-boolean-to-date": Case(
        (UpdateColumnType(("v",), T("BOOLEAN")), UpdateColumnType(("v",), T("DATE"))),
        "Column type v[BOOLEAN] cannot be converted to DATE without losing information.", "v",
        "type-change"),
    "int-to-array": Case(
        (UpdateColumnType(("v",), T("ARRAY<INT>")),),
        "Column type v[INT] cannot be converted to ARRAY<INT> without losing information.",
        "v", "type-change"),
    "nested-int-to-bytes": Case(
        (UpdateColumnType(("addr", "zip"), T("BYTES")),),
        # Java names the field (field.name()), not its path
        "Column type zip[INT] cannot be converted to BYTES without losing information.",
        "addr.zip", "type-change"),
    "cast-mode-implicit-refuses-explicit-cast": Case(
        (UpdateColumnType(("big",), T("INT")),),
        "Column type big[BIGINT] cannot be converted to INT without losing information.",
        "big", "type-change", options=keyed_options(**{"cast.mode": "implicit"})),
    "cast-mode-implicit-refuses-int-to-string": Case(
        (UpdateColumnType(("v",), T("STRING")),),
        "Column type v[INT] cannot be converted to STRING without losing information.",
        "v", "type-change", options=keyed_options(**{"cast.mode": "implicit"})),
    "disable-explicit-type-casting": Case(
        (UpdateColumnType(("big",), T("INT")),),
        "Column type big[BIGINT] cannot be converted to INT without losing information.",
        "big", "type-change",
        options=keyed_options(**{"disable-explicit-type-casting": "true"})),
    # ---- nullable -> NOT NULL ----------------------------------------------------------
    "nullable-to-not-null": Case(
        (UpdateColumnNullability(("v",), False),),
        NOT_NULL_MSG.format("v"), "v", "nullable-to-not-null"),
    "nullable-to-not-null-by-type": Case(
        (UpdateColumnType(("v",), T("INT NOT NULL"), keep_nullability=False),),
        NOT_NULL_MSG.format("v"), "v", "nullable-to-not-null"),
    "nested-nullable-to-not-null": Case(
        (UpdateColumnNullability(("addr", "zip"), False),),
        NOT_NULL_MSG.format("addr.zip"), "addr.zip", "nullable-to-not-null"),
    # ---- structure ---------------------------------------------------------------------
    "drop-all-fields": Case(
        (DropColumn(("a",)), DropColumn(("b",))),
        "Cannot drop all fields in table", "b", "table-needs-a-column", columns=PLAIN,
        options={}),
    "drop-all-nested-fields": Case(
        (DropColumn(("addr", "city")), DropColumn(("addr", "zip"))),
        "Cannot drop all fields in table", "addr.zip", "table-needs-a-column"),
    "move-after-itself": Case(
        (UpdateColumnPosition(Move("v", "AFTER", "v")),),
        "Cannot move itself for column v", "v", "move-needs-another-column"),
    "move-before-itself": Case(
        (UpdateColumnPosition(Move("w", "BEFORE", "w")),),
        "Cannot move itself for column w", "w", "move-needs-another-column"),
    "move-first-column-first": Case(
        (UpdateColumnPosition(Move("p", "FIRST")),),
        "Cannot move itself for column p", "p", "move-needs-another-column"),
    "move-last-column-last": Case(
        (UpdateColumnPosition(Move("tags", "LAST")),),
        "Cannot move itself for column tags", "tags", "move-needs-another-column"),
    # ---- keys --------------------------------------------------------------------------
    "drop-partition-key": Case(
        (DropColumn(("p",)),),
        "Cannot drop partition key or primary key: [p]", "p", "keys-cannot-be-dropped"),
    "drop-primary-key": Case(
        (DropColumn(("k",)),),
        "Cannot drop partition key or primary key: [k]", "k", "keys-cannot-be-dropped"),
    "rename-partition-column": Case(
        (RenameColumn(("p",), "p2"),),
        "Cannot rename partition column: [p]", "p", "partition-keys-immutable"),
    "update-partition-column-type": Case(
        (UpdateColumnType(("p",), T("VARCHAR(10)")),),
        "Cannot update partition column: [p]", "p", "partition-keys-immutable"),
    "update-primary-key-type": Case(
        (UpdateColumnType(("k",), T("BIGINT")),),
        "Cannot update primary key", "k", "primary-keys-immutable"),
    "primary-key-to-nullable": Case(
        (UpdateColumnNullability(("k",), True),),
        "Cannot change nullability of primary key", "k", "primary-keys-immutable"),
    # ---- options ----------------------------------------------------------------------
    "type-is-immutable-without-snapshots": Case(
        (SetOption("type", "format-table"),),
        "Change 'type' is not supported yet.", None, "immutable-option"),
    "reset-type-without-snapshots": Case(
        (RemoveOption("type"),),
        "Change 'type' is not supported yet.", None, "immutable-option"),
    "bucket-from-minus-one": Case(
        (SetOption("bucket", "4"),),
        "Cannot change bucket when it is -1.", None, "bucket-mode-fixed",
        has_snapshots=True, options={"bucket": "-1"}),
    "bucket-from-default-minus-one": Case(
        (SetOption("bucket", "4"),),
        "Cannot change bucket when it is -1.", None, "bucket-mode-fixed",
        has_snapshots=True, options={}),
    "bucket-to-minus-one": Case(
        (SetOption("bucket", "-1"),),
        "Cannot change bucket to -1.", None, "bucket-mode-fixed", has_snapshots=True),
    "reset-bucket": Case(
        (RemoveOption("bucket"),),
        "Cannot reset bucket.", None, "bucket-mode-fixed", has_snapshots=True),
    # ---- columns that must (not) exist ---------------------------------------------------
    "add-existing-column": Case(
        (AddColumn(("v",), T("INT")),),
        "Column v already exists in the db.t table.", "v", "column-must-be-new"),
    "add-existing-nested-column": Case(
        (AddColumn(("addr", "city"), T("STRING")),),
        "Column addr.city already exists in the db.t table.", "addr.city",
        "column-must-be-new"),
    "rename-to-existing-column": Case(
        (RenameColumn(("v",), "w"),),
        "Column w already exists in the db.t table.", "w", "column-must-be-new"),
    "rename-nested-to-existing": Case(
        (RenameColumn(("addr", "city"), "zip"),),
        "Column addr.zip already exists in the db.t table.", "addr.zip", "column-must-be-new"),
    "drop-missing-column": Case(
        (DropColumn(("nope",)),),
        "Column nope does not exist in the db.t table.", "nope", "column-must-exist"),
    "drop-missing-nested-column": Case(
        (DropColumn(("addr", "nope")),),
        "Column addr.nope does not exist in the db.t table.", "addr.nope", "column-must-exist"),
    "drop-under-missing-parent": Case(
        (DropColumn(("nope", "x")),),
        "Column nope does not exist in the db.t table.", "nope", "column-must-exist"),
    "rename-missing-column": Case(
        (RenameColumn(("nope",), "x"),),
        "Column nope does not exist in the db.t table.", "nope", "column-must-exist"),
    "retype-missing-column": Case(
        (UpdateColumnType(("nope",), T("BIGINT")),),
        "Column nope does not exist in the db.t table.", "nope", "column-must-exist"),
    "retype-missing-nested-column": Case(
        (UpdateColumnType(("addr", "nope"), T("BIGINT")),),
        "Column addr.nope does not exist in the db.t table.", "addr.nope", "column-must-exist"),
    "comment-missing-column": Case(
        (UpdateColumnComment(("nope",), "c"),),
        "Column nope does not exist in the db.t table.", "nope", "column-must-exist"),
    "nullability-of-missing-column": Case(
        (UpdateColumnNullability(("nope",), True),),
        "Column nope does not exist in the db.t table.", "nope", "column-must-exist"),
    "add-after-missing-column": Case(
        (AddColumn(("x",), T("INT"), None, Move("x", "AFTER", "nope")),),
        "Column nope does not exist in the db.t table.", "nope", "column-must-exist"),
    "add-before-missing-column": Case(
        (AddColumn(("x",), T("INT"), None, Move("x", "BEFORE", "nope")),),
        "Column nope does not exist in the db.t table.", "nope", "column-must-exist"),
    # SchemaManager.applyMove: IllegalArgumentException, not ColumnNotExistException
    "move-missing-column": Case(
        (UpdateColumnPosition(Move("nope", "FIRST")),),
        "Field name not found: nope", "nope", "column-must-exist"),
    "move-after-missing-reference": Case(
        (UpdateColumnPosition(Move("v", "AFTER", "nope")),),
        "Reference field name not found: nope", "nope", "column-must-exist"),
    # ---- one bad change spoils the whole commit ------------------------------------------
    "legal-changes-then-an-illegal-one": Case(
        (AddColumn(("x",), T("INT")), SetOption("k1", "v1"), RenameColumn(("w",), "w2"),
         DropColumn(("p",))),
        "Cannot drop partition key or primary key: [p]", "p", "keys-cannot-be-dropped"),
}

# Options CoreOptions marks @Immutable: refused once the table has snapshots
# (SchemaManager.checkAlterTableOption / checkResetTableOption).
IMMUTABLE_SET = {
    "primary-key": "k",
    "partition": "k",
    "merge-engine": "partial-update",
    "bucket-key": "k",
    "type": "format-table",
    "sequence.snapshot-ordering": "true",
    "rowkind.field": "w",
}
for _key, _value in IMMUTABLE_SET.items():
    CASES[f"set-immutable-{_key}-with-snapshots"] = Case(
        (SetOption(_key, _value),), f"Change '{_key}' is not supported yet.", None,
        "immutable-option", has_snapshots=True)
for _key in ("merge-engine", "bucket-key", "rowkind.field"):
    CASES[f"reset-immutable-{_key}-with-snapshots"] = Case(
        (RemoveOption(_key),), f"Change '{_key}' is not supported yet.", None,
        "immutable-option", has_snapshots=True,
        options=keyed_options(**{"merge-engine": "deduplicate", "bucket-key": "k",
                                 "rowkind.field": "w"}))

CASES["add-nested-after-missing-column"] = Case(
    (AddColumn(("addr", "x"), T("INT"), None, Move("x", "AFTER", "nope")),),
    "Column nope does not exist in the db.t table.", "addr.nope", "column-must-exist")


def _listing(root: Path) -> list[str]:
    """Every file and directory under ``root``, hidden ones included."""
    out = []
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            out.append(os.path.relpath(os.path.join(d, name), root))
    return sorted(out)


def _make_table(root: Path, case: Case) -> SchemaManager:
    manager = SchemaManager(str(root / "db.db" / "t"), table=TABLE)
    keyed = case.columns == KEYED
    options = keyed_options() if case.options is None else case.options
    manager.create(new_table_schema(
        [ColumnSpec(n, T(t)) for n, t in case.columns],
        partition_keys=("p",) if keyed else (), primary_keys=("p", "k") if keyed else (),
        options=options, table=TABLE))
    return manager


def _params() -> list[Any]:
    out = []
    for name, case in CASES.items():
        out.append(pytest.param(case, id=name))
    return out


@pytest.mark.parametrize("case", _params())
def test_illegal_change_is_refused_and_writes_nothing(case: Case, tmp_path: Path) -> None:
    manager = _make_table(tmp_path, case)
    table_dir = Path(manager.table_path)
    before = _listing(table_dir)
    assert before == ["schema", "schema/schema-0"]
    schema0 = (table_dir / "schema" / "schema-0").read_bytes()

    with pytest.raises(SchemaChangeError) as info:
        manager.commit_changes(case.changes, has_snapshots=case.has_snapshots)

    err = info.value
    assert case.message in str(err)
    assert err.message == str(err)
    assert TABLE in str(err)  # schemalab names the table even where Paimon's text does not
    assert err.table == TABLE
    assert err.column == case.column
    assert err.rule == case.rule
    # nothing written: no schema-1, no hidden temporary file, schema-0 untouched
    assert _listing(table_dir) == before
    assert (table_dir / "schema" / "schema-0").read_bytes() == schema0
    assert manager.list_ids() == [0]
    # and the next legal commit still becomes schema-1
    assert manager.commit_changes([SetOption("after", "refusal")]).id == 1


def test_the_same_changes_are_legal_without_snapshots(tmp_path: Path) -> None:
    """The snapshot-only rules really depend on ``has_snapshots``: on an empty table bucket
    and the immutable options (but 'type', 'primary-key' and 'partition') may change."""
    manager = SchemaManager(str(tmp_path / "db.db" / "t"), table=TABLE)
    manager.create(new_table_schema(
        [ColumnSpec(n, T(t)) for n, t in KEYED], partition_keys=("p",), primary_keys=("p", "k"),
        options={"bucket": "-1"}, table=TABLE))
    manager.commit_changes([SetOption("bucket", "4")])
    manager.commit_changes([SetOption("bucket", "-1")])
    manager.commit_changes([SetOption("merge-engine", "partial-update"),
                            SetOption("bucket-key", "k"), SetOption("rowkind.field", "w")])
    manager.commit_changes([RemoveOption("bucket"), RemoveOption("merge-engine")])
    latest = manager.latest()
    assert latest is not None and latest.id == 4
    assert latest.options == {"bucket-key": "k", "rowkind.field": "w"}
    # with snapshots a bucket change between fixed counts is still fine
    manager.commit_changes([SetOption("bucket", "4")])
    assert manager.commit_changes([SetOption("bucket", "8")], has_snapshots=True).id == 6
    assert manager.commit_changes([SetOption("bucket", "2")], has_snapshots=True).id == 7
