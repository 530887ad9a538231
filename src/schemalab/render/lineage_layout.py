"""Where everything of a lineage drawing goes, as plain values: rows (one per field id, nested
fields under their parent), columns (schema versions), the cells where something changes with
their short labels, and the connectors between two fields' rows (a swap of names, a name used
again by a new field). The plotly figure (``schemalab.widgets.lineage_figure``) only draws
this; a test counts its labels without drawing anything.

    >>> from schemalab.history.lineage import compute_lineage, with_events
    >>> from schemalab.history.model import TableHistory
    >>> from schemalab.history.versions import FieldInfo, SchemaVersion
    >>> a, c = FieldInfo(1, "a", "INT"), FieldInfo(2, "c", "STRING")
    >>> vs = with_events([SchemaVersion(0, 1, (a, c)), SchemaVersion(1, 2, (a,)),
    ...     SchemaVersion(2, 3, (FieldInfo(1, "a", "BIGINT"), FieldInfo(3, "c", "STRING")))])
    >>> lin = tuple(compute_lineage(vs, precomputed=True))
    >>> h = TableHistory("paimon", "/t", "T", tuple(vs), lin, ())
    >>> layout = lineage_layout(h)
    >>> [(r.field_id, r.name) for r in layout.rows]
    [(1, 'a'), (2, 'c'), (3, 'c')]
    >>> [(c.field_id, c.col, c.label) for c in layout.labelled]
    [(1, 0, 'INT'), (2, 0, 'STRING'), (2, 1, 'dropped'), (1, 2, 'INT → BIGINT'), (3, 2, 'STRING')]
    >>> [(k.kind, k.from_field, k.to_field) for k in layout.connectors]
    [('reuse', 2, 3)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemalab.history.versions import FieldEvent, FieldInfo, FieldLineage

if TYPE_CHECKING:  # pragma: no cover
    from schemalab.history.model import TableHistory

#: which event names a cell when several happen in one version
KIND_ORDER = ("added", "dropped", "renamed", "retyped", "nullability_changed", "moved",
              "commented", "default_changed")


@dataclass(frozen=True)
class Column:
    """A schema version, in the order of the table's history."""

    col: int
    schema_id: int
    time_millis: int | None


@dataclass(frozen=True)
class Row:
    """One field id. ``name`` is its last name (the leaf name for a nested field), ``depth``
    how deep it is nested, ``first``/``last`` the columns it exists in, ``dropped_at`` the
    column of the version that dropped it (None while it lives)."""

    row: int
    field_id: int
    name: str
    depth: int
    first: int
    last: int
    dropped_at: int | None
    lineage: FieldLineage

    @property
    def names(self) -> list[str]:
        return self.lineage.names


@dataclass(frozen=True)
class Cell:
    """A field in one version. ``kind`` is ``"unchanged"`` or the cell's main event kind;
    ``label`` is empty for unchanged cells (labels only where something changes). A dropped
    field's last cell sits in the version that dropped it (``field`` is its last state)."""

    row: int
    col: int
    field_id: int
    field: FieldInfo
    kind: str
    events: tuple[FieldEvent, ...]
    label: str

    @property
    def schema_id(self) -> int:
        return self.events[0].schema_id if self.events else -1


@dataclass(frozen=True)
class Connector:
    """``swap``: two fields exchanged names (at ``to_col``); ``reuse``: ``to_field`` took a
    name ``from_field`` held before (from its last column with that name)."""

    kind: str
    from_field: int
    from_row: int
    from_col: int
    to_field: int
    to_row: int
    to_col: int
    name: str


@dataclass(frozen=True)
class LineageLayout:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    cells: tuple[Cell, ...]
    connectors: tuple[Connector, ...]
    #: rows before paging, and the page shown (rows ``first_row`` .. ``first_row+len(rows)``)
    total_rows: int
    first_row: int
    #: what ``focus`` selected, in words ("fields ever named `c`"), or ""
    focus_text: str = ""

    @property
    def labelled(self) -> list[Cell]:
        """The cells that carry a label: exactly those where something changes."""
        return sorted((c for c in self.cells if c.label), key=lambda c: (c.col, c.row))


def lineage_layout(h: TableHistory, *, focus: int | str | Sequence[int | str] | None = None,
                   page: int = 0, page_size: int | None = None) -> LineageLayout:
    """The drawing of ``h``'s lineage. ``focus``: a field id, a name (every field that was
    ever called that, nested names dotted or by their last part) or several of either; the
    fields' parents are kept as context. ``page``/``page_size`` cut the rows into pages."""
    columns, col_of = _columns(h)
    by_id = {lin.field_id: lin for lin in h.lineage}
    ordered = _tree_order(h.lineage)
    focus_text = ""
    if focus is not None:
        wanted, focus_text = _focused(h.lineage, focus)
        keep = set(wanted)
        for fid in wanted:  # parents, for context
            parent = _last_state(by_id[fid]).parent_id
            while parent is not None and parent in by_id:
                keep.add(parent)
                parent = _last_state(by_id[parent]).parent_id
        ordered = [(lin, d) for lin, d in ordered if lin.field_id in keep]
    total = len(ordered)
    first = 0
    if page_size is not None and page_size > 0:
        first = max(0, min(page, max(total - 1, 0) // page_size)) * page_size
        ordered = ordered[first:first + page_size]
    rows: list[Row] = []
    cells: list[Cell] = []
    for r, (lin, depth) in enumerate(ordered):
        state_cols = _state_columns(lin, col_of)
        event_cols = _event_columns(lin, col_of)
        dropped_at = next((c for c, ev in event_cols if ev.kind == "dropped"), None)
        last_state = lin.states[-1][1]
        rows.append(Row(r, lin.field_id, last_state.name, depth,
                        state_cols[0] if state_cols else 0,
                        state_cols[-1] if state_cols else 0, dropped_at, lin))
        evs_at: dict[int, list[FieldEvent]] = {}
        for c, ev in event_cols:
            evs_at.setdefault(c, []).append(ev)
        shown = last_state.name
        for c, (_, f) in zip(state_cols, lin.states, strict=True):
            evs = tuple(evs_at.pop(c, ()))
            cells.append(_cell(r, c, lin.field_id, f, evs, shown))
        for c, evs_left in sorted(evs_at.items()):  # the drop, in a version without the field
            cells.append(_cell(r, c, lin.field_id, last_state, tuple(evs_left), shown))
    row_of = {row.field_id: row for row in rows}
    connectors = _connectors(rows, row_of, col_of)
    return LineageLayout(tuple(columns), tuple(rows), tuple(cells), tuple(connectors), total,
                         first, focus_text)


def _columns(h: TableHistory) -> tuple[list[Column], list[int]]:
    """The versions as columns, and ``col_of``: the schema id of each column (an id may come
    twice: Iceberg's return to an older schema id is a last column of its own)."""
    versions = [v for v in h.schemas if v.kind == "schema"]
    columns = [Column(i, v.id, v.time_millis) for i, v in enumerate(versions)]
    if versions and h.current_schema_id is not None and versions[-1].id != h.current_schema_id:
        cur = next((v for v in versions if v.id == h.current_schema_id), None)
        if cur is not None:
            columns.append(Column(len(columns), cur.id, cur.time_millis))
    return columns, [c.schema_id for c in columns]


def _state_columns(lin: FieldLineage, col_of: list[int]) -> list[int]:
    """The column of each state, in order (walking forward, so a reused id maps to the
    later column)."""
    out: list[int] = []
    start = 0
    for sid, _ in lin.states:
        c = _find(col_of, sid, start)
        out.append(c)
        start = c + 1
    return out


def _event_columns(lin: FieldLineage, col_of: list[int]) -> list[tuple[int, FieldEvent]]:
    out: list[tuple[int, FieldEvent]] = []
    start = 0
    prev_sid: int | None = None
    for ev in lin.events:
        if ev.schema_id == prev_sid and out:
            out.append((out[-1][0], ev))
            continue
        c = _find(col_of, ev.schema_id, start)
        out.append((c, ev))
        start, prev_sid = c + 1, ev.schema_id
    return out


def _find(col_of: list[int], schema_id: int, start: int) -> int:
    for i in range(start, len(col_of)):
        if col_of[i] == schema_id:
            return i
    return col_of.index(schema_id) if schema_id in col_of else max(start - 1, 0)


def _cell(row: int, col: int, field_id: int, f: FieldInfo, evs: tuple[FieldEvent, ...],
          shown_name: str) -> Cell:
    if not evs:
        return Cell(row, col, field_id, f, "unchanged", (), "")
    kinds = {ev.kind for ev in evs}
    kind = next(k for k in KIND_ORDER if k in kinds)
    label = ", ".join(event_label(ev, shown_name) for ev in
                      sorted(evs, key=lambda e: KIND_ORDER.index(e.kind)))
    return Cell(row, col, field_id, f, kind, evs, label)


def event_label(ev: FieldEvent, shown_name: str) -> str:
    """A change in a few characters; the row already names the field (``shown_name``), so
    an added field's label is its type unless it started with another name."""
    leaf = _leaf(ev.name)
    if ev.kind == "added":
        return ev.type if leaf == shown_name else f"{leaf} {ev.type}"
    if ev.kind == "renamed":
        return f"→ {leaf}"
    if ev.kind == "retyped":
        return f"{ev.old_type} → {ev.type}"
    if ev.kind == "nullability_changed":
        return "nullable" if ev.type == "NULL" else "NOT NULL"
    if ev.kind == "commented":
        return "comment"
    if ev.kind == "default_changed":
        return f"default {ev.type}" if ev.type else "no default"
    if ev.kind == "moved":
        return "moved"
    return "dropped"


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _last_state(lin: FieldLineage) -> FieldInfo:
    return lin.states[-1][1]


def _tree_order(lineage: Sequence[FieldLineage]) -> list[tuple[FieldLineage, int]]:
    """Every field with its depth: top-level fields by id, each followed by its nested fields
    (by id), so a ROW's fields sit indented under it."""
    children: dict[int | None, list[FieldLineage]] = {}
    ids = {lin.field_id for lin in lineage}
    for lin in lineage:
        parent = _last_state(lin).parent_id
        children.setdefault(parent if parent in ids else None, []).append(lin)
    out: list[tuple[FieldLineage, int]] = []
    stack: list[tuple[FieldLineage, int]] = [
        (lin, 0) for lin in sorted(children.get(None, []), key=lambda x: -x.field_id)]
    while stack:
        lin, depth = stack.pop()
        out.append((lin, depth))
        stack.extend((c, depth + 1) for c in
                     sorted(children.get(lin.field_id, []), key=lambda x: -x.field_id))
    return out


def _focused(lineage: Sequence[FieldLineage], focus: int | str | Sequence[int | str]
             ) -> tuple[list[int], str]:
    items = [focus] if isinstance(focus, int | str) else list(focus)
    out: list[int] = []
    words = []
    for item in items:
        if isinstance(item, int) or (isinstance(item, str) and item.isdigit()):
            fid = int(item)
            out.extend(lin.field_id for lin in lineage if lin.field_id == fid)
            words.append(f"field {fid}")
        else:
            out.extend(lin.field_id for lin in lineage
                       if any(f.full_name == item or f.name == item for _, f in lin.states))
            words.append(f"`{item}`")
    text = "fields ever named " if all(isinstance(i, str) and not i.isdigit() for i in items) \
        else ""
    return list(dict.fromkeys(out)), text + ", ".join(words)


def _runs(row: Row, col_of: list[int]) -> list[tuple[str, int, int]]:
    """The field's names as runs ``(full name, first column, last column)``."""
    out: list[list[object]] = []
    for c, (_, f) in zip(_state_columns(row.lineage, col_of), row.lineage.states, strict=True):
        if out and out[-1][0] == f.full_name:
            out[-1][2] = c
        else:
            out.append([f.full_name, c, c])
    return [(str(n), int(str(a)), int(str(b))) for n, a, b in out]


def _connectors(rows: Sequence[Row], row_of: dict[int, Row], col_of: list[int]
                ) -> list[Connector]:
    runs = {r.field_id: _runs(r, col_of) for r in rows}
    out: list[Connector] = []
    done: set[tuple[int, int]] = set()
    for r in rows:
        lin = r.lineage
        for other in lin.swapped_with:
            pair = (min(r.field_id, other), max(r.field_id, other))
            if other not in row_of or pair in done:
                continue
            done.add(pair)
            col = _swap_column(runs[pair[0]], runs[pair[1]])
            if col is not None:
                a, b = row_of[pair[0]], row_of[pair[1]]
                out.append(Connector("swap", a.field_id, a.row, col, b.field_id, b.row, col,
                                     f"{_name_at(runs[a.field_id], col)} ⇄ "
                                     f"{_name_at(runs[b.field_id], col)}"))
        for other in lin.name_reused_from:
            if other not in row_of or tuple(sorted((r.field_id, other))) in done:
                continue
            o = row_of[other]
            for name, first, _ in runs[r.field_id]:
                before = [b for n, _, b in runs[other] if n == name and b < first]
                if before:
                    from_col = o.dropped_at if (o.dropped_at is not None
                                                and o.dropped_at <= first) else before[-1]
                    out.append(Connector("reuse", other, o.row, from_col, r.field_id, r.row,
                                         first, name))
                    break
    return out


def _swap_column(a: list[tuple[str, int, int]], b: list[tuple[str, int, int]]) -> int | None:
    """The first column where A and B hold each other's earlier names."""
    def name_at(runs: list[tuple[str, int, int]], col: int) -> str | None:
        return next((n for n, s, e in runs if s <= col <= e), None)

    cols = sorted({s for _, s, _ in a} | {s for _, s, _ in b})
    for j in cols:
        na, nb = name_at(a, j), name_at(b, j)
        if na is None or nb is None:
            continue
        for i in range(j):
            if name_at(a, i) == nb and name_at(b, i) == na and na != nb:
                return j
    return None


def _name_at(runs: list[tuple[str, int, int]], col: int) -> str:
    return next((n for n, s, e in runs if s <= col <= e), "?")
