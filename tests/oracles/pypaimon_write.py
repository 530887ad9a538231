"""Writes through pypaimon 2.1 (the Python engine, in-process), the way its docs show them:
a batch write builder, one write, one commit. Tests use these to have pypaimon write a
table (or write on after schemalab) instead of each test spelling the five calls out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def append(table: Any, data: Any) -> None:
    """Commit ``data`` (a pyarrow Table) as one batch write to pypaimon's ``table``."""
    wb = table.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    try:
        w.write_arrow(data)
        c.commit(w.prepare_commit())
    finally:
        w.close()
        c.close()


def update_columns(table: Any, columns: Sequence[str], data: Any) -> None:
    """A data-evolution UPDATE: ``data`` holds ``_ROW_ID`` and new values of ``columns``;
    pypaimon writes files of those columns only, merged on read by row id."""
    wb = table.new_batch_write_builder()
    msgs = wb.new_update().with_update_type(list(columns)).update_by_arrow_with_row_id(data)
    c = wb.new_commit()
    try:
        c.commit(msgs)
    finally:
        c.close()
