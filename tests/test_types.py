"""Paimon type strings, JSON forms, and the Spark/Arrow mappings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemalab.errors import UnknownTypeError
from schemalab.types.arrow import from_arrow, to_arrow
from schemalab.types.model import (
    MAX_LENGTH,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
)
from schemalab.types.parse import parse_type, type_from_json, type_to_json
from schemalab.types.spark import from_spark, to_spark

EVERY_ATOMIC = [
    "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(10, 2)",
    "DECIMAL(38, 0)", "CHAR(3)", "VARCHAR(20)", "STRING", "BINARY(4)", "VARBINARY(9)", "BYTES",
    "DATE", "TIME(0)", "TIME(3)", "TIMESTAMP(0)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)",
    "TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "VARIANT",
]


@pytest.mark.parametrize("text", EVERY_ATOMIC)
@pytest.mark.parametrize("not_null", [False, True])
def test_every_atomic_type_prints_as_parsed(text: str, not_null: bool) -> None:
    full = text + (" NOT NULL" if not_null else "")
    t = parse_type(full)
    assert t.sql() == full
    assert t.nullable is not not_null
    assert type_from_json(type_to_json(t)) == t


@pytest.mark.parametrize(("spelling", "canonical"), [
    ("int", "INT"), ("INTEGER", "INT"), ("VARCHAR(2147483647)", "STRING"),
    ("VARBINARY(2147483647)", "BYTES"), ("DECIMAL", "DECIMAL(10, 0)"),
    ("NUMERIC(5,1)", "DECIMAL(5, 1)"),
    ("TIMESTAMP", "TIMESTAMP(6)"), ("TIMESTAMP_LTZ(3)", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    ("TIMESTAMP(3) WITHOUT TIME ZONE", "TIMESTAMP(3)"), ("TIME", "TIME(0)"),
    ("DOUBLE PRECISION", "DOUBLE"), ("INT ARRAY", "ARRAY<INT>"),
    ("INT NOT NULL MULTISET", "MULTISET<INT NOT NULL>"),
    ("STRUCT<a: INT, b STRING NOT NULL>", "ROW<`a` INT, `b` STRING NOT NULL>"),
    ("map<string not null, array<int>>", "MAP<STRING NOT NULL, ARRAY<INT>>"),
    ("CHAR", "CHAR(1)"), ("BINARY", "BINARY(1)"),
])
def test_other_spellings(spelling: str, canonical: str) -> None:
    assert parse_type(spelling).sql() == canonical


@pytest.mark.parametrize("bad", [
    "", "  ", "INTT", "DECIMAL(39, 0)", "DECIMAL(5, 6)", "VARCHAR(0)", "TIMESTAMP(10)", "INT NOT",
    "ARRAY<INT", "MAP<INT>", "ROW<a>", "INT INT", "VARCHAR(a)", "TIMESTAMP(3) WITH TIME ZONE",
    "ARRAY<>", "☃",
])
def test_unknown_types_get_a_clear_error(bad: str) -> None:
    with pytest.raises(UnknownTypeError) as e:
        parse_type(bad)
    assert "Unknown type" in str(e.value)


def test_nested_json_forms_java_and_pypaimon() -> None:
    java = {"type": "ROW NOT NULL", "fields": [{"id": 7, "name": "city", "type": "STRING"}]}
    py = {"type": "ARRAY", "element": "INT", "nullable": True}
    row = type_from_json(java)
    assert row == RowType((DataField(7, "city", parse_type("STRING")),), nullable=False)
    assert type_to_json(row) == java
    arr = type_from_json(py)
    assert arr == ArrayType(parse_type("INT"))
    assert type_to_json(arr, nullable_key=True) == py
    m = type_from_json({"type": "MAP", "key": "STRING NOT NULL", "value": "INT"})
    assert m == MapType(parse_type("STRING NOT NULL"), parse_type("INT"))
    ms = type_from_json({"type": "MULTISET NOT NULL", "element": "INT"})
    assert ms == MultisetType(parse_type("INT"), nullable=False)


@pytest.mark.parametrize("bad", [{"type": "ROW"}, {"type": "WHAT"}, {"fields": []}, 42,
                                 {"type": "ROW", "fields": [{"name": "x", "type": "INT"}]}])
def test_malformed_json_types(bad: object) -> None:
    with pytest.raises(UnknownTypeError):
        type_from_json(bad)


# ---- property tests -----------------------------------------------------------------------

_names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                 max_size=8)


def _atomic() -> st.SearchStrategy[DataType]:
    simple = st.sampled_from([TypeRoot.BOOLEAN, TypeRoot.TINYINT, TypeRoot.SMALLINT,
                              TypeRoot.INTEGER, TypeRoot.BIGINT, TypeRoot.FLOAT, TypeRoot.DOUBLE,
                              TypeRoot.DATE]).map(AtomicType)
    sized = st.builds(lambda r, n: AtomicType(r, length=n),
                      st.sampled_from([TypeRoot.CHAR, TypeRoot.VARCHAR, TypeRoot.BINARY,
                                       TypeRoot.VARBINARY]),
                      st.integers(1, MAX_LENGTH))
    dec = st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(
        lambda s: AtomicType(TypeRoot.DECIMAL, precision=p, scale=s)))
    timed = st.builds(lambda r, p: AtomicType(r, precision=p),
                      st.sampled_from([TypeRoot.TIME_WITHOUT_TIME_ZONE,
                                       TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE,
                                       TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE]),
                      st.integers(0, 9))
    return st.one_of(simple, sized, dec, timed)


def _types() -> st.SearchStrategy[DataType]:
    def extend(inner: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
        return st.one_of(
            st.builds(ArrayType, inner),
            st.builds(MultisetType, inner),
            st.builds(MapType, inner, inner),
            st.lists(st.tuples(_names, inner), min_size=1, max_size=3,
                     unique_by=lambda x: x[0]).map(
                lambda fs: RowType(tuple(DataField(-1, n, t) for n, t in fs))),
        )

    base = st.recursive(_atomic(), extend, max_leaves=6)
    return st.tuples(base, st.booleans()).map(lambda x: x[0].with_nullable(x[1]))


@settings(max_examples=200, deadline=None)
@given(_types())
def test_sql_string_round_trip(t: DataType) -> None:
    assert parse_type(t.sql()) == t


@settings(max_examples=200, deadline=None)
@given(_types())
def test_json_round_trip(t: DataType) -> None:
    assert type_from_json(type_to_json(t)) == t
    assert type_from_json(type_to_json(t, nullable_key=True)) == t


def _spark_image(t: DataType) -> DataType:
    """What survives a trip through Spark: CHAR/VARCHAR → STRING, BINARY → BYTES,
    MULTISET → MAP<e, INT NOT NULL>, TIMESTAMP/TIME precision → Spark's microseconds,
    map keys NOT NULL."""
    if isinstance(t, AtomicType):
        r = t.root
        if r in (TypeRoot.CHAR, TypeRoot.VARCHAR):
            return parse_type("STRING").with_nullable(t.nullable)
        if r in (TypeRoot.BINARY, TypeRoot.VARBINARY):
            return parse_type("BYTES").with_nullable(t.nullable)
        if r in (TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE, TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE):
            return AtomicType(r, t.nullable, precision=6)
        if r is TypeRoot.TIME_WITHOUT_TIME_ZONE:
            return AtomicType(r, t.nullable, precision=min(t.precision or 0, 6))
        return t
    if isinstance(t, ArrayType):
        return ArrayType(_spark_image(t.element), t.nullable)
    if isinstance(t, MultisetType):
        return MapType(_spark_image(t.element).with_nullable(False),
                       parse_type("INT NOT NULL"), t.nullable)
    if isinstance(t, MapType):
        return MapType(_spark_image(t.key).with_nullable(False), _spark_image(t.value),
                       t.nullable)
    return RowType(tuple(DataField(f.id, f.name, _spark_image(f.type)) for f in t.fields),
                   t.nullable)


@settings(max_examples=150, deadline=None)
@given(_types())
def test_spark_mapping_round_trip(t: DataType) -> None:
    assert from_spark(to_spark(t), t.nullable) == _spark_image(t)


def _arrow_image(t: DataType) -> DataType:
    if isinstance(t, AtomicType):
        r = t.root
        if r in (TypeRoot.CHAR, TypeRoot.VARCHAR):
            return parse_type("STRING").with_nullable(t.nullable)
        if r is TypeRoot.VARBINARY:
            return parse_type("BYTES").with_nullable(t.nullable)
        if r in (TypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE, TypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE,
                 TypeRoot.TIME_WITHOUT_TIME_ZONE):
            p = t.precision or 0
            unit_p = 0 if p == 0 else 3 if p <= 3 else 6 if p <= 6 else 9
            if r is TypeRoot.TIME_WITHOUT_TIME_ZONE and unit_p == 0:
                unit_p = 3
            return AtomicType(r, t.nullable, precision=unit_p)
        return t
    if isinstance(t, ArrayType):
        return ArrayType(_arrow_image(t.element), t.nullable)
    if isinstance(t, MultisetType):
        return MapType(_arrow_image(t.element).with_nullable(False),
                       parse_type("INT NOT NULL"), t.nullable)
    if isinstance(t, MapType):
        return MapType(_arrow_image(t.key).with_nullable(False), _arrow_image(t.value), t.nullable)
    return RowType(tuple(DataField(f.id, f.name, _arrow_image(f.type)) for f in t.fields),
                   t.nullable)


@settings(max_examples=150, deadline=None)
@given(_types().filter(lambda t: "VARIANT" not in t.sql()))
def test_arrow_mapping_round_trip(t: DataType) -> None:
    assert from_arrow(to_arrow(t), t.nullable) == _arrow_image(t)


def test_spark_field_ids_on_nested_rows() -> None:
    from schemalab.types.spark import spark_schema

    fields = (DataField(0, "id", parse_type("INT")),
              DataField(1, "addr", RowType((DataField(2, "city", parse_type("STRING")),))))
    schema = spark_schema(fields)
    assert schema["id"].metadata == {"parquet.field.id": 0}
    assert schema["addr"].dataType["city"].metadata == {"parquet.field.id": 2}  # type: ignore[index]


# ---- Java Paimon's cast rules (docs/compatibility.md §3, §4) ---------------------------------

from schemalab.explain.casts import cast_text, stats_note, target_range  # noqa: E402
from schemalab.types.casts import (  # noqa: E402
    CastMode,
    alters_values,
    cast_mode,
    has_cast_executor,
    java_cast_rule,
)


def test_default_cast_mode_is_java_paimons() -> None:
    assert cast_mode({}) is CastMode.PAIMON and CastMode.PAIMON.javas_values
    assert cast_mode({"cast.mode": "explicit"}) is CastMode.EXPLICIT
    assert not CastMode.EXPLICIT.javas_values and not CastMode.EXPLICIT_NULL.javas_values
    assert cast_mode({"disable-explicit-type-casting": "true"}) is CastMode.IMPLICIT


@pytest.mark.parametrize(("src", "dst", "java_class", "effect"), [
    ("BIGINT", "INT", "NumericPrimitiveCastRule", "values outside INT wrap"),
    ("DOUBLE", "SMALLINT", "NumericPrimitiveCastRule",
     "the fraction is cut, values outside SMALLINT saturate at INT's bounds, then wrap, "
     "NaN reads 0"),
    ("DECIMAL(12, 2)", "INT", "DecimalToNumericPrimitiveCastRule",
     "the fraction is cut, values outside INT wrap"),
    ("TIMESTAMP(6)", "TIMESTAMP(3)", "TimestampToTimestampCastRule",
     "fraction digits beyond 3 are cut"),
    ("TIMESTAMP(3)", "TIMESTAMP(6)", "TimestampToTimestampCastRule", None),
    ("STRING", "VARCHAR(3)", "StringToStringCastRule", "strings longer than 3 are cut"),
    ("INT", "BIGINT", "NumericPrimitiveCastRule", None),
    ("DECIMAL(5, 2)", "DECIMAL(10, 2)", "DecimalToDecimalCastRule", None),
])
def test_java_cast_rule_names_class_and_effect(src: str, dst: str, java_class: str,
                                               effect: str | None) -> None:
    rule = java_cast_rule(parse_type(src), parse_type(dst))
    assert rule is not None and rule.java_class == java_class and rule.effect == effect


@pytest.mark.parametrize(("src", "dst", "has"), [
    ("TIMESTAMP(3)", "STRING", True), ("TIMESTAMP(3)", "VARCHAR(30)", False),
    ("TIMESTAMP(3)", "DOUBLE", False), ("INT", "TIMESTAMP(3)", True),
    ("SMALLINT", "TIMESTAMP(3)", False), ("ARRAY<INT>", "ARRAY<BIGINT>", False),
    ("INT", "INT NOT NULL", True), ("STRING", "INT", True), ("DATE", "INT", False),
])
def test_cast_executor_exists_as_in_paimon(src: str, dst: str, has: bool) -> None:
    assert has_cast_executor(parse_type(src), parse_type(dst)) is has


def test_same_form_changes_that_alter_values() -> None:
    assert alters_values(parse_type("TIMESTAMP(6)"), parse_type("TIMESTAMP(3)"))
    assert not alters_values(parse_type("TIMESTAMP(3)"), parse_type("TIMESTAMP(6)"))
    assert alters_values(parse_type("STRING"), parse_type("CHAR(3)"))
    assert alters_values(parse_type("ARRAY<VARCHAR(9)>"), parse_type("ARRAY<VARCHAR(2)>"))
    assert not alters_values(parse_type("VARCHAR(2)"), parse_type("STRING"))


def test_explain_cast_text_warns_from_stats() -> None:
    b, i = parse_type("BIGINT"), parse_type("INT")
    ranges = [(1, 5_000_000_000), (-3, 7), (0, 2**40)]
    assert cast_text(b, i, CastMode.PAIMON, ranges) == (
        "BIGINT → INT, Java Paimon's explicit cast: values outside INT wrap "
        "(2 of 3 files have a max above 2147483647 per their stats)")
    assert cast_text(b, i, CastMode.EXPLICIT_NULL, [(-2**40, 0), None]) == (
        "BIGINT → INT, explicit cast under cast.mode = explicit-null: a value Java Paimon's "
        "cast would not keep reads as NULL (Java: values outside INT wrap) "
        "(1 of 2 files has a min below -2147483648 per their stats; 1 file has no stats)")
    assert stats_note(b, i, [(0, 1), (2, 3)]) == (
        "no file's stats show a value outside -2147483648..2147483647")
    assert stats_note(b, i, [None]) == "no stats in the manifest for 1 file"
    assert stats_note(i, b, [(0, 1)]) is None  # a widening changes nothing
    dec = target_range(parse_type("DOUBLE"), parse_type("DECIMAL(5, 2)"))
    assert dec is not None and str(dec[1]) == "999.99"
    assert target_range(parse_type("DECIMAL(5, 2)"), parse_type("DECIMAL(10, 2)")) is None
    assert target_range(parse_type("DECIMAL(5, 0)"), parse_type("INT")) is None
