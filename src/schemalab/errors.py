"""Errors a user sees. Each names the table, the column and the rule that was broken.

Every error schemalab raises on purpose is a :class:`SchemaLabError`, so a notebook or the
CLI can show its message instead of a traceback.
"""

from __future__ import annotations

import os

from schemalab.rules import is_known

#: Set (by the tests' conftest) to make an error with a rule id missing from
#: :data:`schemalab.rules.RULES` fail where it is built.
CHECK_RULES_VARIABLE = "SCHEMALAB_TEST"


class UnknownRuleId(BaseException):
    """An error was built with a rule id that is not in :mod:`schemalab.rules` (raised only
    under ``SCHEMALAB_TEST``). A ``BaseException``, so no ``except Exception`` hides it."""


class SchemaLabError(Exception):
    """Base class. ``table`` and ``column`` are set where they are known; ``rule`` is one of
    the ids in :data:`schemalab.rules.RULES`."""

    def __init__(self, message: str, *, table: str | None = None, column: str | None = None,
                 rule: str | None = None) -> None:
        if os.environ.get(CHECK_RULES_VARIABLE) and not is_known(rule):
            raise UnknownRuleId(f"rule id {rule!r} is not in schemalab.rules.RULES "
                                f"(error: {message})")
        super().__init__(message)
        self.message = message
        self.table = table
        self.column = column
        self.rule = rule

    def __reduce__(self) -> tuple[object, ...]:
        # copy and pickle rebuild the error as it is (table, column, rule and a subclass's
        # own fields), not by calling __init__ again with the message alone
        return _rebuild, (type(self), self.args, self.__dict__)


def _rebuild(cls: type[SchemaLabError], args: tuple[object, ...],
             state: dict[str, object]) -> SchemaLabError:
    out = cls.__new__(cls, *args)
    out.args = args
    out.__dict__.update(state)
    return out


def with_message(error: SchemaLabError, message: str) -> SchemaLabError:
    """A copy of ``error`` (same class, table, column and rule) that says ``message``."""
    import copy

    out = copy.copy(error)
    out.message = message
    out.args = (message,)
    return out


class UnknownTypeError(SchemaLabError, ValueError):
    """A type string or JSON type node that is not a Paimon type (rule ``unknown-type``), or
    a Paimon type that schemalab does not support yet (rule ``unsupported-type``)."""

    def __init__(self, message: str, *, type_text: str | None = None,
                 table: str | None = None, column: str | None = None,
                 rule: str = "unknown-type") -> None:
        super().__init__(message, table=table, column=column, rule=rule)
        self.type_text = type_text


class NotFoundError(SchemaLabError, KeyError):
    """A schema, snapshot, field or column looked up by id or name in a table's history or
    read explanation that it does not have (rules ``schema-must-exist``,
    ``snapshot-must-exist``, ``field-must-exist``, ``column-must-exist``). Also a
    ``KeyError``, what such a lookup raised before."""

    def __str__(self) -> str:  # KeyError's own would quote the message
        return self.message


class UnsupportedFeatureError(SchemaLabError):
    """A table feature (named in ``feature``, enabled by ``option``) that schemalab cannot
    read or maintain yet: refused before anything is read or written, never ignored."""

    def __init__(self, message: str, *, table: str | None = None, column: str | None = None,
                 feature: str, option: str | None = None) -> None:
        super().__init__(message, table=table, column=column, rule="unsupported-feature")
        self.feature = feature
        self.option = option


class SchemaChangeError(SchemaLabError):
    """An ALTER that Paimon's SchemaManager rules refuse. Nothing was written."""


class CorruptFileError(SchemaLabError):
    """A metadata or data file that cannot be parsed: names the file and what is wrong."""

    def __init__(self, path: str, what: str, *, table: str | None = None) -> None:
        super().__init__(f"{path}: {what}", table=table, rule="corrupt-file")
        self.path = path
        self.what = what


class UnsupportedVersionError(CorruptFileError):
    """A format version newer (or other) than the ones schemalab understands."""


class CommitConflictError(SchemaLabError):
    """A commit kept losing races to other writers and gave up; nothing of it is visible."""


class SqlError(SchemaLabError):
    """A statement that cannot be parsed or is not supported."""


class TableNotFoundError(SchemaLabError):
    """No such table in the warehouse."""


class TableExistsError(SchemaLabError):
    """CREATE TABLE of a table that exists."""


class InvalidIdentifierError(SchemaLabError):
    """A database or table name that would leave the warehouse or is otherwise unusable."""
