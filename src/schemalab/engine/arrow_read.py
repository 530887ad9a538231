"""Data files read on the driver into Arrow, for the files Spark cannot read as the read
needs them: Avro (PySpark ships no Avro data source) and ORC files with rows deleted by
position (Spark's ORC reader has no ``_metadata.row_index``).

The columns come out named and typed as the file's own schema says (the Arrow types of
:func:`schemalab.types.arrow.to_arrow`), with the deleted positions already dropped, so the
scan hands Spark an Arrow table (``createDataFrame``, which works over Spark Connect too) and
evolves it exactly as a Parquet or ORC file read by name. The cost is the driver's: fastavro
decodes about a million values a second and the table travels to Spark once; reading the
files on the driver keeps executors free of anything but pyarrow.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schemalab import fileio
from schemalab.engine.plan import DataFile
from schemalab.errors import CorruptFileError
from schemalab.types.arrow import to_arrow
from schemalab.types.model import (
    ArrayType,
    AtomicType,
    DataType,
    MapType,
    MultisetType,
    RowType,
    TypeRoot,
)
from schemalab.types.visitor import TypeVisitor, visit

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa


def read_file(f: DataFile, columns: Sequence[tuple[str, DataType]],
              deleted: npt.NDArray[np.int64] | None = None) -> pa.Table:
    """The ``columns`` (file column name, type in the file's schema) of data file ``f`` as an
    Arrow table, without the rows at the ``deleted`` positions. A column the file lacks reads
    as NULL (as Spark's readers do)."""
    import pyarrow as pa

    if f.format == "avro":
        table = _avro_table(f.path, columns)
    else:
        table = _orc_table(f.path, columns) if f.format == "orc" else _parquet_table(f.path,
                                                                                      columns)
    if table.num_rows != f.row_count:
        raise CorruptFileError(f.path, f"holds {table.num_rows} rows, its manifest entry says "
                                       f"{f.row_count}")
    if deleted is not None and len(deleted):
        import numpy as np

        keep = np.ones(table.num_rows, dtype=bool)
        keep[deleted] = False
        table = table.filter(pa.array(keep))
    return table


def _avro_table(path: str, columns: Sequence[tuple[str, DataType]]) -> pa.Table:
    import pyarrow as pa

    records = fileio.read_avro(path).records
    arrays = []
    for name, t in columns:
        convert = visit(t, _ToArrowValue())
        values = [r.get(name) for r in records]
        if convert is not None:
            values = [_apply(convert, v) for v in values]
        try:
            arrays.append(pa.array(values, type=to_arrow(t)))
        except (pa.ArrowException, TypeError, ValueError) as e:
            raise CorruptFileError(path, f"column {name!r} does not hold {t.sql()} values "
                                         f"({e})") from None
    return pa.table(arrays, names=[n for n, _ in columns]) if columns else \
        pa.table({"_": pa.nulls(len(records))}).drop_columns(["_"])


def _orc_table(path: str, columns: Sequence[tuple[str, DataType]]) -> pa.Table:
    import pyarrow.orc as orc

    try:
        table = orc.ORCFile(fileio.open_input(path)).read()
    except Exception as e:  # noqa: BLE001 - the ORC reader raises several kinds
        raise CorruptFileError(path, f"unreadable ORC ({type(e).__name__}: {e})") from None
    return _select(path, table, columns)


def _parquet_table(path: str, columns: Sequence[tuple[str, DataType]]) -> pa.Table:
    import pyarrow.parquet as pq

    # only the wanted columns, and no partition values guessed from a path's directories
    # (a Paimon partition's ``dt=x/``: the file holds ``dt`` itself)
    f = pq.ParquetFile(fileio.open_input(path))
    held = set(f.schema_arrow.names)
    return _select(path, f.read(columns=[n for n, _ in columns if n in held]), columns)


def _select(path: str, table: pa.Table, columns: Sequence[tuple[str, DataType]]) -> pa.Table:
    import pyarrow as pa

    out = []
    for name, t in columns:
        want = to_arrow(t)
        if name not in table.column_names:
            out.append(pa.nulls(table.num_rows, want))
            continue
        try:
            out.append(table[name].cast(want, safe=False))
        except (pa.ArrowException, TypeError, ValueError) as e:
            raise CorruptFileError(path, f"column {name!r} does not hold {t.sql()} values "
                                         f"({e})") from None
    if not columns:
        return table.select([])
    return pa.table(out, names=[n for n, _ in columns])


class _ToArrowValue(TypeVisitor[Any]):
    """How a value fastavro decoded becomes one pyarrow takes for the type: maps as (key,
    value) pairs (Avro writes maps with non-string keys as arrays of key/value records),
    UUIDs as their bytes; None where the value is already right."""

    def atomic(self, t: AtomicType) -> Any:
        if t.root in (TypeRoot.BINARY, TypeRoot.VARBINARY):
            return lambda v: v.bytes if isinstance(v, uuid.UUID) else v
        return None

    def row(self, t: RowType, fields: list[Any]) -> Any:
        if all(fn is None for fn in fields):
            return None
        pairs = [(f.name, fn) for f, fn in zip(t.fields, fields, strict=True)]
        return lambda v: {n: _apply(fn, v.get(n)) for n, fn in pairs}

    def array(self, t: ArrayType, element: Any) -> Any:
        if element is None:
            return None
        return lambda v: [_apply(element, x) for x in v]

    def multiset(self, t: MultisetType, element: Any) -> Any:
        return lambda v: [(_apply(element, k), n) for k, n in _pairs(v)]

    def map(self, t: MapType, key: Any, value: Any) -> Any:
        return lambda v: [(_apply(key, k), _apply(value, x)) for k, x in _pairs(v)]


def _apply(fn: Any, v: Any) -> Any:
    return v if fn is None or v is None else fn(v)


def _pairs(v: Any) -> list[tuple[Any, Any]]:
    if isinstance(v, dict):
        return list(v.items())
    return [(kv["key"], kv["value"]) for kv in v]
