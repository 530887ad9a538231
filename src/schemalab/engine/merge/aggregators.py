"""Paimon's field aggregators (``FieldAggregator`` and its ``Field*Agg`` classes, Paimon 1.0)
as Spark expressions over an accumulator and one input value.

Each aggregator gives ``agg`` (a new value), ``retract`` (a -U/-D value taken back) and
``agg_reversed`` (``agg`` with its arguments swapped, for partial-update records older than
their sequence group). ``first_value`` and ``first_non_null_value`` keep an ``initialized``
flag, as Java's do, so their state is a (value, flag) pair. A function without retraction
fails the read with Paimon's message unless ``fields.<f>.ignore-retract`` is set.

Arithmetic follows Paimon 1.0 where Spark can say it exactly: a DECIMAL sum that no longer
fits its precision is NULL (``Decimal.fromBigDecimal``); an integer sum that overflows fails
the read, as Paimon 1.2 and later (1.0 wrapped around silently).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab.engine.merge.options import FieldAggregate
from schemalab.engine.spark_reader import all_nullable
from schemalab.types.model import DataType, TypeRoot
from schemalab.types.spark import to_spark

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column

#: (value, initialized flag or None)
State = tuple["Column", "Column | None"]

_INTEGRAL = {TypeRoot.TINYINT, TypeRoot.SMALLINT, TypeRoot.INTEGER, TypeRoot.BIGINT}


@dataclass(frozen=True)
class Aggregator:
    """One field's aggregate function, bound to its type, table and column (for errors)."""

    spec: FieldAggregate
    type: DataType
    table: str
    column: str

    @property
    def function(self) -> str:
        return self.spec.function

    @property
    def stateful(self) -> bool:
        """Whether the function keeps an ``initialized`` flag next to its value."""
        return self.function in ("first_value", "first_non_null_value")

    def _null(self) -> Column:
        from pyspark.sql import functions as F

        return F.lit(None).cast(all_nullable(to_spark(self.type)))

    def _fit(self, value: Column) -> Column:
        """A computed value back in the field's type."""
        if self.type.root is TypeRoot.DECIMAL:
            return value.try_cast(all_nullable(to_spark(self.type)))
        return value.cast(all_nullable(to_spark(self.type)))

    def _overflow(self, value: Column, acc: Column, x: Column, op: str) -> Column:
        """``value`` (a ``try_`` operation), failing the read where it overflowed."""
        from pyspark.sql import functions as F

        if self.type.root not in _INTEGRAL:
            return self._fit(value)
        message = F.concat(
            F.lit(f"Table {self.table}, column `{self.column}`: {self.function} overflows "
                  f"{self.type.sql()}: "), acc.cast("string"), F.lit(f" {op} "),
            x.cast("string"), F.lit(" (Paimon fails the merge; rule aggregate-function)."))
        fitted = value.try_cast(all_nullable(to_spark(self.type)))
        overflowed = fitted.isNull() & acc.isNotNull() & x.isNotNull()
        return F.when(overflowed, F.raise_error(message)).otherwise(fitted)

    def agg(self, acc: Column, x: Column, init: Column | None) -> State:
        from pyspark.sql import functions as F

        f = self.function
        either = F.when(acc.isNull(), x).when(x.isNull(), acc)
        if f == "sum":
            return either.otherwise(self._overflow(F.try_add(acc, x), acc, x, "+")), None
        if f == "product":
            return either.otherwise(self._overflow(F.try_multiply(acc, x), acc, x, "*")), None
        if f == "max":
            return F.greatest(acc, x), None
        if f == "min":
            return F.least(acc, x), None
        if f in ("last_value", "primary-key"):
            return x, None
        if f == "last_non_null_value":
            return F.coalesce(x, acc), None
        if f == "listagg":
            joined = F.concat(acc, F.lit(self.spec.delimiter), x)
            return either.otherwise(joined), None
        if f == "bool_and":
            return either.otherwise(acc & x), None
        if f == "bool_or":
            return either.otherwise(acc | x), None
        assert init is not None
        if f == "first_value":
            return F.when(init, acc).otherwise(x), F.lit(True)
        if f == "first_non_null_value":
            take = ~init & x.isNotNull()
            return F.when(take, x).otherwise(acc), init | x.isNotNull()
        raise AssertionError(f"no aggregator {f}")  # pragma: no cover - merge_options checks

    def agg_reversed(self, acc: Column, x: Column, init: Column | None) -> State:
        """Java's default ``aggReversed``: ``agg(inputField, accumulator)``."""
        return self.agg(x, acc, init)

    def retract(self, acc: Column, x: Column, init: Column | None) -> State:
        from pyspark.sql import functions as F

        f = self.function
        if self.spec.ignore_retract:
            return acc, init
        if f == "sum":
            negative = self._overflow(F.try_subtract(F.lit(0).cast(to_spark(self.type)), x),
                                      F.lit(0), x, "-")
            return (F.when(acc.isNull(), negative).when(x.isNull(), acc)
                    .otherwise(self._overflow(F.try_subtract(acc, x), acc, x, "-")), None)
        if f == "product":
            return (F.when(acc.isNull(), x).when(x.isNull(), acc)
                    .otherwise(self._fit(_divide(acc, x, self.type))), None)
        if f == "last_value":
            return self._null(), None
        if f == "last_non_null_value":
            return F.when(x.isNotNull(), self._null()).otherwise(acc), None
        if f == "primary-key":
            return x, None
        message = (f"Table {self.table}, column `{self.column}`: Aggregate function '{f}' does "
                   "not support retraction, If you allow this function to ignore retraction "
                   "messages, you can configure 'fields.${field_name}.ignore-retract'='true'. "
                   "(A -U/-D record of this key met the function; rule aggregate-function.)")
        return F.raise_error(F.lit(message)).cast(all_nullable(to_spark(self.type))), init


def _divide(acc: Column, x: Column, t: DataType) -> Column:
    """Java's division in the field's type: integers truncate toward zero."""
    from pyspark.sql import functions as F

    if t.root in _INTEGRAL:
        quotient = F.abs(acc.cast("long")).cast("decimal(20, 0)") / F.abs(x.cast("long"))
        sign = F.when((acc < 0) != (x < 0), F.lit(-1)).otherwise(F.lit(1))
        return F.floor(quotient) * sign
    return acc / x


def aggregators(opts_aggregates: dict[str, FieldAggregate], types: dict[str, DataType],
                table: str) -> dict[str, Aggregator]:
    """The aggregator of each field that has a function."""
    return {name: Aggregator(spec, types[name], table, name)
            for name, spec in opts_aggregates.items() if name in types}
