"""Cross-check: pypaimon reads the tables of random model sequences.

Random CREATE / INSERT / ALTER sequences (the generator of ``test_model_based``) are replayed
on real tables through schemalab's write path (Spark writes the Parquet files); then
pypaimon 2.1.0 — another implementation of the format — reads every snapshot (with that
snapshot's schema) and the latest, and each read must equal the reference model's.

``SCHEMALAB_PYPAIMON_SEQUENCES`` (default 30; ``make soak`` runs 100) is the number of
sequences; ``SCHEMALAB_PYPAIMON_MERGE_SEQUENCES`` (default 2; ``make soak`` 60) more run on
primary-key tables of the merge engines pypaimon 2.1.0 merges (deduplicate, with
sequence.field; plain partial-update; first-row with ignore-delete), with upserts, DELETEs and
compactions. Derandomized, so every run checks the same sequences.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from reliability_support import (
    MERGES,
    STATS,
    Profile,
    SequenceRun,
    pypaimon_problems,
    sequences,
)

import schemalab as sl

SEQUENCES = int(os.environ.get("SCHEMALAB_PYPAIMON_SEQUENCES", "30"))
MERGE_SEQUENCES = int(os.environ.get("SCHEMALAB_PYPAIMON_MERGE_SEQUENCES", "2"))
SEED = int(os.environ.get("SCHEMALAB_MODEL_SEED", "20240611")) + 1
#: what pypaimon 2.1.0 reads as Paimon does. Paimon (Java and pypaimon) applies no
#: cast.mode (schemalab's teaching option), so its explicit-cast reads are not compared, and
#: SQL INSERTs are the same files as API ones.
PYPAIMON = Profile(options=False, sql=False)
#: pypaimon 2.1.0 merges deduplicate (it has no ignore-delete there), first-row, and
#: partial-update without delete options; not aggregation
PYPAIMON_MERGES = dataclasses.replace(
    MERGES, options=False, sql=False,
    merge_configs=("deduplicate", "deduplicate-sequence-field", "partial-update",
                   "first-row"))

#: SCHEMALAB_MODEL_SHRINK=0: report the first failing sequence as it is (shrinking replays
#: each candidate on Spark, minutes on a busy machine)
PHASES = tuple(Phase) if os.environ.get("SCHEMALAB_MODEL_SHRINK", "1") != "0" else (
    Phase.explicit, Phase.reuse, Phase.generate)

_names = itertools.count()


@pytest.fixture(scope="module")
def wh(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield sl.Warehouse(tmp_path_factory.mktemp("pypaimon-model"), spark=spark)


def _compare_with_pypaimon(wh: Any, label: str, prefix: str, seed_value: int,
                           examples: int, profile: Profile, **extra: Any) -> None:
    """``examples`` random sequences of ``profile`` run against schemalab, each snapshot's
    read compared with pypaimon's."""
    ran: list[str] = []
    problems: list[str] = []

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), print_blob=True, **extra)
    @given(sequences(profile))
    def check(seq: Any) -> None:
        run = SequenceRun(wh, f"{prefix}{next(_names)}", seq).execute()
        found = pypaimon_problems(run)
        if found:
            problems.append(f"{run.name}:\n" + "\n".join(found) + "\n" + seq.describe())
        ran.append(run.name)

    check()
    print(f"\n{label}: {len(ran)} sequences, {STATS.pypaimon_reads} reads compared")
    assert not problems, "\n\n".join(problems[:3])
    assert len(ran) >= examples


@pytest.mark.timeout(3600)
def test_pypaimon_reads_random_sequences_as_the_model(wh: Any) -> None:
    _compare_with_pypaimon(wh, "pypaimon", "p", SEED, SEQUENCES, PYPAIMON)


@pytest.mark.timeout(3600)
def test_pypaimon_reads_random_merge_sequences_as_the_model(wh: Any) -> None:
    _compare_with_pypaimon(wh, "pypaimon merges", "pm", SEED + 1, MERGE_SEQUENCES,
                           PYPAIMON_MERGES, phases=PHASES)
