"""Model-based testing: random CREATE / INSERT / ALTER sequences against a reference model.

Each hypothesis example is a small batch of sequences (see ``reliability_support``): every
sequence is replayed on its own table, next to a tiny pure-Python model of what the table must
contain. Each ALTER must be accepted or refused exactly as the model predicts; afterwards the
schema versions, field ids and snapshots must match the model, and so must every read — every
snapshot with its own schema and the latest with the current schema — all of a batch checked
in one Spark job.

``SCHEMALAB_MODEL_EXAMPLES`` (default 200) is the number of sequences; ``make soak`` runs
2000. Append tables meet a DELETE now and then (refused: Paimon deletes only in primary-key
tables). ``SCHEMALAB_MERGE_EXAMPLES`` (default 4; ``make soak`` 400) sequences run on
primary-key tables of every merge engine (deduplicate, with ignore-delete or sequence.field;
partial-update, with a sequence group; first-row; aggregation with sum, max, min, last_value,
last_non_null_value, first_value): upserts of a few keys, DELETE FROM and compactions between
the ALTERs, and the model merges each key's versions as Paimon's docs say, after evolution.
``SCHEMALAB_MODEL_BATCH`` (default 4) sequences share one verification job. The runs are
derandomized, so CI sees the same sequences every time; ``SCHEMALAB_MODEL_SEED`` picks
another fixed set; ``SCHEMALAB_MODEL_SHRINK=0`` reports a failing sequence unshrunk.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from reliability_support import (
    FULL,
    MERGES,
    STATS,
    Insert,
    Refused,
    SequenceRun,
    TableModel,
    sequences,
    verify_runs,
)

import schemalab as sl
from schemalab.schema.changes import (
    AddColumn,
    DropColumn,
    Move,
    RenameColumn,
    SetOption,
    UpdateColumnPosition,
    UpdateColumnType,
)
from schemalab.types.parse import parse_type

EXAMPLES = int(os.environ.get("SCHEMALAB_MODEL_EXAMPLES", "200"))
MERGE_EXAMPLES = int(os.environ.get("SCHEMALAB_MERGE_EXAMPLES", "4"))
BATCH = max(1, int(os.environ.get("SCHEMALAB_MODEL_BATCH", "4")))
SEED = int(os.environ.get("SCHEMALAB_MODEL_SEED", "20240611"))

#: SCHEMALAB_MODEL_SHRINK=0: report the first failing sequence as it is (shrinking replays
#: each candidate on Spark, minutes on a busy machine)
PHASES = tuple(Phase) if os.environ.get("SCHEMALAB_MODEL_SHRINK", "1") != "0" else (
    Phase.explicit, Phase.reuse, Phase.generate)

_names = itertools.count()


@pytest.fixture(scope="module")
def wh(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield sl.Warehouse(tmp_path_factory.mktemp("model"), spark=spark)


# ---- the model itself (no Spark) -------------------------------------------------------------


def test_model_predicts_reads_by_identity() -> None:
    """The model on the FLIP-226 example and a swap: names follow identities, not files."""
    from reliability_support import Create

    m = TableModel(Create((("a", "STRING"), ("b", "STRING"), ("c", "STRING"))))
    m.insert([("a1", "b1", "c1")])
    m.alter([DropColumn(("c",))])
    m.alter([AddColumn(("c",), parse_type("STRING"))])
    m.insert([("a2", "b2", "c2")])
    assert m.expected(None) == sorted([
        (("a", ("s", "a1")), ("b", ("s", "b1")), ("c", None)),
        (("a", ("s", "a2")), ("b", ("s", "b2")), ("c", ("s", "c2")))], key=repr)
    assert m.expected(1) == [(("a", ("s", "a1")), ("b", ("s", "b1")), ("c", ("s", "c1")))]
    m.alter([RenameColumn(("a",), "tmp"), RenameColumn(("b",), "a"),
             RenameColumn(("tmp",), "b")])
    m.alter([UpdateColumnPosition(Move("c", "FIRST"))])
    assert [f.name for f in m.schema.fields] == ["c", "b", "a"]
    # the old a's values now read under the name b, and the other way round
    assert (("c", None), ("b", ("s", "a1")), ("a", ("s", "b1"))) in m.expected(None)
    with pytest.raises(Refused):
        m.alter([UpdateColumnType(("a",), parse_type("INT"))])  # STRING → INT is not modelled
    with pytest.raises(Refused):
        m.alter([SetOption("cast.mode", "implicit"), AddColumn(("a",), parse_type("INT"))])
    assert len(m.schemas) == 5  # refused ALTERs left nothing


# ---- random sequences --------------------------------------------------------------------------


@pytest.mark.timeout(3600)
def test_random_sequences_match_the_model(wh: Any) -> None:
    examples = math.ceil(EXAMPLES / BATCH)
    ran: list[int] = []
    start = time.perf_counter()

    @seed(SEED)
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(st.lists(sequences(FULL), min_size=BATCH, max_size=BATCH))
    def check(batch: list[Any]) -> None:
        runs = [SequenceRun(wh, f"m{next(_names)}", s).execute() for s in batch]
        verify_runs(wh.spark, runs)
        ran.append(len(runs))

    check()
    total = sum(ran)
    elapsed = time.perf_counter() - start
    print(f"\nmodel: {total} sequences ({STATS.inserts} inserts, {STATS.rows} rows, "
          f"{STATS.alters} alters of which {STATS.refused} refused as predicted, "
          f"{STATS.deletes} deletes ({STATS.deletes_refused} refused), "
          f"{STATS.reads} reads in {STATS.spark_jobs} verification jobs) in {elapsed:.0f}s; "
          f"change kinds {dict(sorted(STATS.kinds.items()))}")
    assert total >= EXAMPLES
    assert STATS.rows_lost == 0


def test_model_merges_as_paimon_documents() -> None:
    """The model's merge engines on one key, without Spark."""
    from reliability_support import Create, Where

    def model(options: dict[str, str]) -> TableModel:
        return TableModel(Create((("id", "INT"), ("v", "INT"), ("s", "STRING")),
                                 options=tuple(options.items()), primary_keys=("id",)))

    def v(m: TableModel, snapshot_id: int | None = None) -> list[Any]:
        return [(r[1][1], r[2][1]) for r in m.expected(snapshot_id)]

    dedup = model({})
    dedup.insert([(1, 1, "a"), (1, 2, None)])
    assert v(dedup) == [(("i", 2), None)]
    assert dedup.delete(Where("id", "=", (1,)))
    assert v(dedup) == [] and v(dedup, 1) == [(("i", 2), None)]
    partial = model({"merge-engine": "partial-update",
                     "partial-update.remove-record-on-delete": "true"})
    partial.insert([(1, 1, "a"), (1, None, "b")])
    assert v(partial) == [(("i", 1), ("s", "b"))]
    partial.delete(None)
    partial.insert([(1, None, "c")])
    assert v(partial) == [(None, ("s", "c"))]
    first = model({"merge-engine": "first-row", "ignore-delete": "true"})
    first.insert([(1, 1, "a")])  # an APPEND, then a COMPACT snapshot (as Java's writer)
    first.insert([(1, 2, "b")])
    assert [x.kind for x in first.snapshots] == ["+I", "compact"] * 2
    assert v(first, 1) == []  # a batch read of first-row sees compacted files only
    assert v(first) == [(("i", 1), ("s", "a"))]
    assert not first.compact()  # nothing new: no snapshot
    first.alter([AddColumn(("w",), parse_type("INT"))])
    assert first.compact()  # files in an older schema are rewritten
    assert not first.delete(None)  # ignore-delete: nothing written, no snapshot
    summed = model({"merge-engine": "aggregation", "fields.default-aggregate-function": "sum"})
    summed.insert([(1, 1, None), (1, 2, None)])
    summed.insert([(1, None, None)])
    assert v(summed) == [(("i", 3), None)]
    summed.delete(None)
    assert v(summed) == [(("i", 0), None)]  # retracted, yet the key reads
    seq = TableModel(Create((("id", "INT"), ("sq", "INT"), ("v", "INT")),
                            options=(("sequence.field", "sq"),), primary_keys=("id",)))
    seq.insert([(1, 5, 1)])
    seq.insert([(1, 4, 2)])
    assert [r[2][1] for r in seq.expected(None)] == [("i", 1)]
    with pytest.raises(Refused):
        seq.alter([RenameColumn(("id",), "key")])
    grouped = TableModel(Create((("id", "INT"), ("g", "INT"), ("a", "INT"), ("b", "INT")),
                                options=(("merge-engine", "partial-update"),
                                         ("fields.g.sequence-group", "a")),
                                primary_keys=("id",)))
    grouped.insert([(1, 2, 1, 1)])
    grouped.insert([(1, 1, 9, None), (1, None, 8, 2)])  # older group; empty group
    assert [(r[1][1], r[2][1], r[3][1]) for r in grouped.expected(None)] == [
        (("i", 2), ("i", 1), ("i", 2))]
    grouped.insert([(2, None, 5, None)])  # a key's only record reads as written
    assert [(r[1][1], r[2][1]) for r in grouped.expected(None)][1] == (None, ("i", 5))
    with pytest.raises(Refused):
        TableModel(Create((("a", "INT"),))).delete(None)


@pytest.mark.timeout(3600)
def test_random_merge_sequences_match_the_model(wh: Any) -> None:
    """Upserts, deletes and compactions on merge-engine tables, between ALTERs."""
    from reliability_support import Stats

    before = Stats(**{k: getattr(STATS, k) for k in ("sequences", "deletes", "compactions")})
    examples = math.ceil(MERGE_EXAMPLES / BATCH)
    ran: list[int] = []
    start = time.perf_counter()

    @seed(SEED + 2)
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True, phases=PHASES)
    @given(st.lists(sequences(MERGES), min_size=BATCH, max_size=BATCH))
    def check(batch: list[Any]) -> None:
        runs = [SequenceRun(wh, f"mm{next(_names)}", s).execute() for s in batch]
        verify_runs(wh.spark, runs)
        ran.append(len(runs))

    check()
    total = sum(ran)
    print(f"\nmerge model: {total} sequences, {STATS.deletes - before.deletes} deletes, "
          f"{STATS.compactions - before.compactions} compactions in "
          f"{time.perf_counter() - start:.0f}s; tables {dict(sorted(STATS.engines.items()))}")
    assert total >= MERGE_EXAMPLES


def test_sql_inserts_of_hostile_strings_match_the_model(wh: Any) -> None:
    """A fixed sequence through the SQL paths: hostile names and string values, a partition
    key, a swap through a temp name and an option change, read at every snapshot."""
    from reliability_support import Alter, Create, Sequence_

    seq = Sequence_(
        Create((("a b", "STRING"), ("x.y", "INT"), ("<s>", "FLOAT"), ("p", "STRING")),
               partition_keys=("p",), options=(("cast.mode", "explicit-null"),)),
        (Insert((("it's", 1, 1.5, "a/b"), ("back\\slash; --", None, None, None)), True),
         Alter((RenameColumn(("a b",), "tmp"), RenameColumn(("x.y",), "a b"),
                RenameColumn(("tmp",), "x.y")), False, "swap"),
         Alter((UpdateColumnType(("a b",), parse_type("STRING")),), True, "retype"),
         Alter((UpdateColumnType(("<s>",), parse_type("DOUBLE")),), True, "retype"),
         # after the swap and the retype, "a b" (the old x.y) is a STRING column
         Insert((("\n\t'\"", "2", -0.25, "%41=x"), ("ü", "-7", 3.0e38, " ")), True),
         Alter((SetOption("cast.mode", "implicit"),), True, "option"),
         Alter((UpdateColumnType(("a b",), parse_type("INT")),), True, "bad: retype")))
    run = SequenceRun(wh, f"m{next(_names)}", seq).execute()
    verify_runs(wh.spark, [run])
    assert [f.name for f in run.table.schema.fields] == ["x.y", "a b", "<s>", "p"]


# ("</script>" cannot be a table name: "/" would leave the table's directory; see
# test_bad_input.py::test_names_cannot_escape_the_warehouse)
@pytest.mark.parametrize("table", ["m.dotted", "m `tick` 'q' \"d\"", "<script>alert(1)"])
def test_hostile_table_names_match_the_model(wh: Any, table: str) -> None:
    from reliability_support import Alter, Create, Sequence_

    seq = Sequence_(Create((("id", "INT"), ("v", "STRING"))),
                    (Insert(((1, "x"),), True), Alter((AddColumn(("w",), parse_type("INT")),),
                                                      True), Insert(((2, "y", 3),), True)))
    run = SequenceRun(wh, table, seq).execute()
    verify_runs(wh.spark, [run])
    assert Path(run.table.path).name == table
