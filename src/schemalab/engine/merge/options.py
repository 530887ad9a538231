"""Which row of a key a merging read returns: the merge engine and its options, as values.

A format that keeps keyed tables reads its own options into :class:`MergeOptions` (Paimon:
:func:`schemalab.paimon.merge_options.merge_options`, with Paimon's rules and messages) and
passes them in the read plan; the merge functions read nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEDUPLICATE = "deduplicate"
PARTIAL_UPDATE = "partial-update"
AGGREGATION = "aggregation"
FIRST_ROW = "first-row"
ENGINES = (DEDUPLICATE, PARTIAL_UPDATE, AGGREGATION, FIRST_ROW)


@dataclass(frozen=True)
class FieldAggregate:
    """How one field aggregates: Paimon's function name and its per-field options."""

    function: str
    ignore_retract: bool = False
    #: ``fields.<f>.list-agg-delimiter`` (listagg)
    delimiter: str = ","


@dataclass(frozen=True)
class SequenceGroup:
    """``fields.<seq fields>.sequence-group = <fields>``: the fields updated only by records
    whose sequence fields are at least the current ones."""

    sequence_fields: tuple[str, ...]
    fields: tuple[str, ...]


@dataclass(frozen=True)
class MergeOptions:
    """The options that decide which row of a key a read returns."""

    engine: str = DEDUPLICATE
    ignore_delete: bool = False
    #: ``sequence.field``: ordered by these fields (then by _SEQUENCE_NUMBER)
    sequence_fields: tuple[str, ...] = ()
    sequence_ascending: bool = True
    #: partial-update
    remove_record_on_delete: bool = False
    sequence_groups: tuple[SequenceGroup, ...] = ()
    remove_record_on_sequence_group: tuple[str, ...] = ()
    #: aggregation (and partial-update fields with a function), by field name
    aggregates: dict[str, FieldAggregate] = field(default_factory=dict)
    aggregation_remove_record_on_delete: bool = False
    rowkind_field: str | None = None

    def aggregate_of(self, name: str) -> FieldAggregate | None:
        return self.aggregates.get(name)

    def group_of(self, name: str) -> SequenceGroup | None:
        """The sequence group that protects ``name`` (a grouped field or a group's own
        sequence field)."""
        for g in self.sequence_groups:
            if name in g.fields or name in g.sequence_fields:
                return g
        return None

    @property
    def skips_level0(self) -> bool:
        """Java's batch scan of a first-row table reads compacted files only (level > 0):
        its writer compacts level 0 away at once, with a lookup of the older levels."""
        return self.engine == FIRST_ROW

    def describe(self) -> str:
        """The options in a few words, for explanations."""
        parts = [f"merge-engine {self.engine}"]
        if self.sequence_fields:
            order = "" if self.sequence_ascending else " descending"
            parts.append(f"sequence.field {', '.join(self.sequence_fields)}{order}")
        if self.ignore_delete:
            parts.append("ignore-delete")
        if self.remove_record_on_delete or self.aggregation_remove_record_on_delete:
            parts.append("remove-record-on-delete")
        for g in self.sequence_groups:
            parts.append(f"sequence group {','.join(g.sequence_fields)} → {','.join(g.fields)}")
        return "; ".join(parts)
