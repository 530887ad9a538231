"""Schema changes applied by the pure function apply_changes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemalab.errors import SchemaChangeError
from schemalab.schema.apply import apply_changes, new_table_schema
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
    UpdateComment,
)
from schemalab.schema.table_schema import TableSchema
from schemalab.types.casts import (
    CastMode,
    cast_kind,
    cast_mode,
    supports_cast,
)
from schemalab.types.parse import parse_type
from schemalab.types.visitor import iter_fields

T = parse_type


def base() -> TableSchema:
    return new_table_schema(
        [ColumnSpec("id", T("BIGINT")), ColumnSpec("name", T("STRING")),
         ColumnSpec("addr", T("ROW<city STRING, zip INT>")), ColumnSpec("tags", T("ARRAY<INT>")),
         ColumnSpec("m", T("MAP<STRING, ARRAY<INT>>")), ColumnSpec("dt", T("STRING"))],
        partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "2"},
        table="db.t", time_millis=1)


def ids(s: TableSchema) -> list[tuple[int, str, str]]:
    return [(f.id, f.name, f.type.sql()) for f in s.fields]


def test_create_assigns_ids_depth_first_and_keys_not_null() -> None:
    s = base()
    assert ids(s)[:3] == [(0, "id", "BIGINT NOT NULL"), (1, "name", "STRING"),
                          (2, "addr", "ROW<`city` STRING, `zip` INT>")]
    assert [f.id for f in s.fields["addr" == "addr" and 2].type.fields] == [3, 4]  # type: ignore[union-attr]
    assert s.field("tags").id == 5 and s.field("m").id == 6 and s.field("dt").id == 7  # type: ignore[union-attr]
    assert s.field("dt").type.sql() == "STRING NOT NULL"  # type: ignore[union-attr]
    assert s.highest_field_id == 7


def test_primary_key_and_partition_from_options_are_folded_into_the_schema() -> None:
    s = new_table_schema([ColumnSpec("k", T("INT")), ColumnSpec("p", T("STRING"))],
                         options={"primary-key": "k", "partition": "p", "bucket": "1"})
    assert s.primary_keys == ("k",) and s.partition_keys == ("p",)
    assert s.options == {"bucket": "1"}


def test_add_positions() -> None:
    s = base()
    s1 = apply_changes(s, [AddColumn(("a",), T("INT"), move=Move("a", "FIRST"))])
    s2 = apply_changes(s1, [AddColumn(("b",), T("INT"), "why", Move("b", "AFTER", "name"))])
    s3 = apply_changes(s2, [AddColumn(("c",), T("INT"))])
    assert s3.field_names == ["a", "id", "name", "b", "addr", "tags", "m", "dt", "c"]
    assert (s1.id, s2.id, s3.id) == (1, 2, 3)
    assert [s3.field(n).id for n in ("a", "b", "c")] == [8, 9, 10]  # type: ignore[union-attr]
    assert s3.field("b").description == "why"  # type: ignore[union-attr]


def test_add_column_before_partition_option() -> None:
    s = apply_changes(base(), [SetOption("add-column-before-partition", "true")])
    s = apply_changes(s, [AddColumn(("x",), T("INT"))])
    assert s.field_names[-2:] == ["x", "dt"]


def test_nested_add_rename_retype_drop() -> None:
    s = apply_changes(base(), [AddColumn(("addr", "country"), T("STRING"))])
    assert s.field("addr").type.fields[-1].id == 8  # type: ignore[union-attr]
    s = apply_changes(s, [RenameColumn(("addr", "city"), "town")])
    s = apply_changes(s, [UpdateColumnType(("addr", "zip"), T("BIGINT"))])
    s = apply_changes(s, [DropColumn(("addr", "country"))])
    assert s.field("addr").type.sql() == "ROW<`town` STRING, `zip` BIGINT>"  # type: ignore[union-attr]
    assert s.highest_field_id == 8
    s = apply_changes(s, [UpdateColumnType(("tags", "element"), T("BIGINT"))])
    assert s.field("tags").type.sql() == "ARRAY<BIGINT>"  # type: ignore[union-attr]
    s = apply_changes(s, [UpdateColumnType(("m", "value", "element"), T("BIGINT"))])
    assert s.field("m").type.sql() == "MAP<STRING, ARRAY<BIGINT>>"  # type: ignore[union-attr]


def test_drop_and_re_add_gets_a_new_id_and_rename_back_keeps_the_id() -> None:
    s = apply_changes(base(), [DropColumn(("name",))])
    s = apply_changes(s, [AddColumn(("name",), T("INT"))])
    assert s.field("name").id == 8  # type: ignore[union-attr]
    s = apply_changes(s, [RenameColumn(("name",), "n2")])
    s = apply_changes(s, [RenameColumn(("n2",), "name")])
    assert s.field("name").id == 8 and s.highest_field_id == 8  # type: ignore[union-attr]


def test_swap_names_through_a_temporary_name() -> None:
    s = apply_changes(base(), [RenameColumn(("name",), "tmp"), RenameColumn(("tags",), "name"),
                               RenameColumn(("tmp",), "tags")])
    assert (s.field("name").id, s.field("tags").id) == (5, 1)  # type: ignore[union-attr]


def test_primary_key_rename_rewrites_the_key_list_and_column_options() -> None:
    s = apply_changes(base(), [SetOption("bucket-key", "id"), SetOption("fields.id.x", "1")])
    s = apply_changes(s, [RenameColumn(("id",), "order_id")])
    assert s.primary_keys == ("dt", "order_id")
    assert s.options["bucket-key"] == "order_id" and "fields.order_id.x" in s.options


def test_nullability_comment_move_options_comment() -> None:
    s = apply_changes(base(), [UpdateColumnNullability(("name",), True),
                               UpdateColumnComment(("name",), "the name"),
                               UpdateColumnPosition(Move("name", "LAST")),
                               SetOption("k", "v"), UpdateComment("orders")])
    assert s.field_names[-1] == "name" and s.field("name").description == "the name"  # type: ignore[union-attr]
    assert s.options == {"bucket": "2", "k": "v"} and s.comment == "orders"
    s = apply_changes(s, [RemoveOption("k"), UpdateComment(None)])
    assert s.options == {"bucket": "2"} and s.comment is None
    s = apply_changes(s, [UpdateColumnPosition(Move("tags", "AFTER", "id")),
                          UpdateColumnPosition(Move("m", "BEFORE", "id"))])
    assert s.field_names[:4] == ["m", "id", "tags", "addr"]


def test_not_null_allowed_when_option_says_so() -> None:
    s = apply_changes(base(), [SetOption("alter-column-null-to-not-null.disabled", "false")])
    s = apply_changes(s, [UpdateColumnNullability(("name",), False)])
    assert s.field("name").type.sql() == "STRING NOT NULL"  # type: ignore[union-attr]


def test_version_1_options_are_materialized_on_the_next_version() -> None:
    old = TableSchema.from_json('{"id": 0, "fields": [{"id": 0, "name": "a", "type": "INT"}],'
                                ' "highestFieldId": 0, "partitionKeys": [], "primaryKeys": [],'
                                ' "options": {"x": "y"}}')
    new = apply_changes(old, [AddColumn(("b",), T("INT"))])
    assert new.version == 3 and new.options == {"x": "y", "bucket": "1", "file.format": "orc"}


def test_apply_is_pure() -> None:
    s = base()
    before = s.to_json()
    with pytest.raises(SchemaChangeError):
        apply_changes(s, [AddColumn(("x",), T("INT")), DropColumn(("dt",))])
    assert s.to_json() == before


@pytest.mark.parametrize(("change", "mode", "ok"), [
    (UpdateColumnType(("name",), T("INT")), "explicit", True),
    (UpdateColumnType(("name",), T("INT")), "implicit", False),
    (UpdateColumnType(("tags", "element"), T("BIGINT")), "implicit", True),
    (UpdateColumnType(("tags", "element"), T("SMALLINT")), "implicit", False),
    (UpdateColumnType(("name",), T("BYTES")), "explicit", True),
    (UpdateColumnType(("addr",), T("STRING")), "explicit", False),
])
def test_cast_mode_governs_alter(change: SchemaChange, mode: str, ok: bool) -> None:
    s = apply_changes(base(), [SetOption("cast.mode", mode)])
    if ok:
        apply_changes(s, [change])
    else:
        with pytest.raises(SchemaChangeError) as e:
            apply_changes(s, [change])
        assert "cannot be converted" in str(e.value)


def test_bad_cast_mode_value_is_refused() -> None:
    with pytest.raises(SchemaChangeError, match="cast.mode"):
        apply_changes(base(), [SetOption("cast.mode", "sometimes")])


@pytest.mark.parametrize(("src", "dst", "kind"), [
    ("TINYINT", "INT", "implicit"), ("INT", "BIGINT", "implicit"), ("BIGINT", "INT", "explicit"),
    ("INT", "DOUBLE", "implicit"), ("FLOAT", "DOUBLE", "implicit"), ("DOUBLE", "FLOAT", "explicit"),
    ("INT", "DECIMAL(10, 0)", "implicit"), ("INT", "DECIMAL(10, 2)", "explicit"),
    ("DECIMAL(10, 2)", "DECIMAL(12, 2)", "implicit"),
    ("DECIMAL(10, 2)", "DECIMAL(8, 2)", "explicit"),
    ("CHAR(3)", "STRING", "implicit"), ("STRING", "VARCHAR(3)", "explicit"),
    ("INT", "STRING", "explicit"), ("STRING", "INT", "explicit"), ("INT", "BYTES", None),
    ("BINARY(2)", "BYTES", "implicit"), ("STRING", "BYTES", "explicit"),
    ("TIMESTAMP(6)", "DATE", "implicit"), ("DATE", "TIMESTAMP(6)", "explicit"),
    ("TIMESTAMP(6)", "TIMESTAMP(3) WITH LOCAL TIME ZONE", "explicit"),
    ("TIMESTAMP(3)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "implicit"),
    ("BOOLEAN", "INT", "explicit"), ("INT", "BOOLEAN", "explicit"), ("DATE", "INT", None),
    ("ARRAY<INT>", "ARRAY<BIGINT>", "implicit"), ("ARRAY<INT>", "STRING", "explicit"),
    ("MAP<STRING, INT>", "MAP<STRING, BIGINT>", "implicit"), ("INT", "INT NOT NULL", "identity"),
])
def test_cast_rules(src: str, dst: str, kind: str | None) -> None:
    assert cast_kind(T(src), T(dst)) == kind


def test_supports_cast_nullability_rule() -> None:
    assert not supports_cast(T("INT"), T("BIGINT NOT NULL"), allow_explicit=False)
    assert supports_cast(T("INT"), T("BIGINT NOT NULL"), allow_explicit=True)


def test_cast_mode_option() -> None:
    assert cast_mode({}) is CastMode.PAIMON  # no option: Java Paimon's casts
    assert cast_mode({"cast.mode": "explicit-null"}) is CastMode.EXPLICIT_NULL
    assert cast_mode({"cast.mode": "explicit", "disable-explicit-type-casting": "true"}) is (
        CastMode.IMPLICIT)


# ---- invariants over random sequences --------------------------------------------------------

_TYPES = ["INT", "BIGINT", "STRING", "DOUBLE", "ROW<x INT, y STRING>", "ARRAY<INT>"]


@st.composite
def change_sequences(draw: st.DrawFn) -> list[SchemaChange]:
    names = ["a", "b", "c", "d", "e"]
    out: list[SchemaChange] = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["add", "drop", "rename", "retype", "move", "opt"]))
        n = draw(st.sampled_from(names))
        if kind == "add":
            out.append(AddColumn((n,), T(draw(st.sampled_from(_TYPES)))))
        elif kind == "drop":
            out.append(DropColumn((n,)))
        elif kind == "rename":
            out.append(RenameColumn((n,), draw(st.sampled_from(names))))
        elif kind == "retype":
            out.append(UpdateColumnType((n,), T(draw(st.sampled_from(_TYPES)))))
        elif kind == "move":
            out.append(UpdateColumnPosition(Move(n, "FIRST")))
        else:
            out.append(SetOption("k", draw(st.sampled_from(["1", "2"]))))
    return out


@settings(max_examples=200, deadline=None)
@given(change_sequences())
def test_ids_are_never_reused_and_highest_only_grows(changes: list[SchemaChange]) -> None:
    s = new_table_schema([ColumnSpec("id", T("INT"))], time_millis=0)
    seen: dict[int, str] = {0: "INT"}
    for change in changes:
        try:
            new = apply_changes(s, [change], time_millis=0)
        except SchemaChangeError as e:
            assert e.table == "default.T" and e.rule
            continue
        assert new.id == s.id + 1
        assert new.highest_field_id >= s.highest_field_id
        all_ids = [f.id for _, f in iter_fields(new.fields)]
        assert len(all_ids) == len(set(all_ids))
        assert max(all_ids) <= new.highest_field_id
        if isinstance(change, AddColumn):
            added = new.field(change.path[0])
            assert added is not None and added.id > s.highest_field_id
        for fid in all_ids:
            seen.setdefault(fid, "")
        assert TableSchema.from_json(new.to_json()) == new
        s = new
