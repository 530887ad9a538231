"""Plain plotly figures built from the history model.

They are ``go.Figure`` values, so they render statically in nbconvert and on GitHub and
compare equal run to run under nbval; the widgets in :mod:`schemalab.widgets.views` only wire
them to controls.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from schemalab.history.model import TableHistory
from schemalab.history.snapshots import SnapshotNode
from schemalab.history.versions import FieldEvent, FieldLineage, SchemaDiff
from schemalab.render.palette import EVENT_COLORS, schema_color


def _esc(text: Any) -> str:
    # plotly renders hover and text labels as HTML: names must not become markup
    return html.escape(str(text), quote=False)


def _rows(n: int | None) -> str:
    return "? rows" if n is None else f"{n:,} row{'' if n == 1 else 's'}"


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(title=dict(text=_esc(title), x=0.01), height=height,
                      margin=dict(l=10, r=10, t=50, b=30), template="plotly_white",
                      showlegend=False)
    return fig


def schema_timeline_figure(h: TableHistory) -> go.Figure:
    """Schema versions and snapshots on two lanes of one axis of change order: an ALTER is a
    step of its own (a new schema, no snapshot), an INSERT a snapshot under some schema."""
    fig = go.Figure()
    xs, texts, hovers, colors = [], [], [], []
    for i, v in enumerate(h.schemas):
        xs.append(i)
        counts: dict[str, int] = {}
        for ev in v.events:
            counts[ev.kind] = counts.get(ev.kind, 0) + 1
        texts.append(f"schema {v.id}")
        detail = "<br>".join(_esc(ev.describe()) for ev in v.events[:12]) or "created"
        if len(v.events) > 12:
            detail += f"<br>… {len(v.events) - 12} more"
        hovers.append(f"<b>schema {v.id}</b><br>{detail}")
        main = max(counts, key=lambda k: counts[k]) if counts else "added"
        colors.append(EVENT_COLORS.get(main, "#8c959f") if i else EVENT_COLORS["added"])
    fig.add_trace(go.Scatter(x=xs, y=["schema"] * len(xs), mode="markers+text", text=texts,
                             textposition="top center", hovertext=hovers, hoverinfo="text",
                             marker=dict(size=16, color=colors, symbol="diamond")))
    position = {v.id: i for i, v in enumerate(h.schemas)}
    sx, stexts, shovers, scolors = [], [], [], []
    seen: dict[int | None, int] = {}
    for s in h.snapshots:
        base = position.get(s.schema_id, 0) if s.schema_id is not None else 0
        k = seen.get(s.schema_id, 0)
        seen[s.schema_id] = k + 1
        sx.append(base + 0.15 + 0.12 * k)
        stexts.append(str(s.id))
        shovers.append(f"<b>snapshot {s.id}</b> ({_esc(s.kind)})<br>schema {s.schema_id}"
                       f"<br>{_rows(s.record_count)}")
        scolors.append(schema_color(s.schema_id))
    fig.add_trace(go.Scatter(x=sx, y=["snapshot"] * len(sx), mode="markers+text", text=stexts,
                             textposition="bottom center", hovertext=shovers,
                             hoverinfo="text", marker=dict(size=12, color=scolors)))
    # room left and right of the outer markers, and above the schema lane for its labels
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False,
                     range=[-0.5, max(len(xs) - 0.5, max(sx, default=0) + 0.3)])
    fig.update_yaxes(categoryorder="array", categoryarray=["snapshot", "schema"],
                     range=[-0.6, 1.6])
    return _layout(fig, f"{h.name}: schema versions and snapshots", 260)


def _state_kind(lin: FieldLineage, schema_id: int) -> str:
    kinds = [ev.kind for ev in lin.events if ev.schema_id == schema_id and ev.kind != "dropped"]
    for k in ("added", "renamed", "retyped", "nullability_changed", "moved", "commented"):
        if k in kinds:
            return k
    return "unchanged"


def lineage_figure(h: TableHistory, *, max_fields: int = 200) -> go.Figure:
    """One row per field id, one column per schema version. Each field is one line through
    the versions where it exists, its cells labelled with its name and type there; colour
    marks the event (added, renamed, retyped, dropped); hovering gives the details."""
    fig = go.Figure()
    versions = [v.id for v in h.schemas]
    col = {sid: i for i, sid in enumerate(versions)}
    lineages = list(h.lineage)[:max_fields]
    rows = [f"field {lin.field_id}" for lin in lineages]
    for lin in lineages:
        y = f"field {lin.field_id}"
        xs, texts, hovers, colors = [], [], [], []
        for sid, f in lin.states:
            xs.append(col[sid])
            texts.append(f"{_esc(f.full_name)}<br><span style='font-size:9px'>"
                         f"{_esc(f.type)}</span>")
            kind = _state_kind(lin, sid)
            colors.append(EVENT_COLORS[kind])
            evs = [ev.describe() for ev in lin.events if ev.schema_id == sid]
            flags = []
            if lin.name_reused_from:
                flags.append("name was used before by field "
                             + ", ".join(map(str, lin.name_reused_from)))
            if lin.swapped_with:
                flags.append("swapped names with field " + ", ".join(map(str, lin.swapped_with)))
            hovers.append(f"<b>field {lin.field_id}</b> in schema {sid}<br>"
                          f"name: {_esc(f.full_name)}<br>type: {_esc(f.type)}"
                          f"{'' if f.nullable else ' NOT NULL'}"
                          + "".join(f"<br>{_esc(x)}" for x in evs + flags))
        fig.add_trace(go.Scatter(x=xs, y=[y] * len(xs), mode="lines+markers+text", text=texts,
                                 textposition="top center", hovertext=hovers, hoverinfo="text",
                                 line=dict(color="#afb8c1", width=2),
                                 marker=dict(size=13, color=colors,
                                             line=dict(width=1, color="#ffffff"))))
        drops = [ev for ev in lin.events if ev.kind == "dropped"]
        for ev in drops:
            fig.add_trace(go.Scatter(
                x=[col[ev.schema_id]], y=[y], mode="markers", hoverinfo="text",
                hovertext=[f"<b>field {lin.field_id}</b> dropped in schema {ev.schema_id}"],
                marker=dict(size=14, color=EVENT_COLORS["dropped"], symbol="x")))
    fig.update_xaxes(tickvals=list(range(len(versions))),
                     ticktext=[f"schema {v}" for v in versions], side="top",
                     range=[-0.6, max(len(versions) - 0.4, 0.6)])
    # half a row of room above the top field: its name label sits above its marker
    fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(rows)),
                     showgrid=False, range=[-0.6, max(len(rows), 1) - 0.1])
    return _layout(fig, f"{h.name}: field lineage by id", 120 + 46 * max(len(rows), 1))


def snapshot_tree_figure(node: SnapshotNode, title: str = "") -> go.Figure:
    """Snapshot → manifest lists → manifests → data files as an icicle chart; each file is
    coloured by the schema id it was written with."""
    ids, labels, parents, colors, hovers = [], [], [], [], []
    root = f"s{node.id}"
    ids.append(root)
    labels.append(f"snapshot {node.id}")
    parents.append("")
    colors.append("#ffffff")
    hovers.append(f"snapshot {node.id}<br>schema {node.schema_id}<br>{node.record_count} rows")
    for li, lst in enumerate(node.lists):
        lid = f"{root}/l{li}"
        ids.append(lid)
        # Paimon's lists are "base"/"delta"; Iceberg's one is already called a manifest list
        labels.append(lst.kind if lst.kind.endswith("list") else f"{lst.kind} list")
        parents.append(root)
        colors.append("#f6f8fa")
        hovers.append(_esc(lst.name))
        for mi, m in enumerate(lst.manifests):
            mid = f"{lid}/m{mi}"
            ids.append(mid)
            labels.append(f"manifest +{m.added} −{m.deleted}")
            parents.append(lid)
            colors.append("#eaeef2")
            hovers.append(_esc(m.name))
            for fi, f in enumerate(m.files):
                ids.append(f"{mid}/f{fi}")
                labels.append(f"{f.kind} {_rows(f.row_count)} (schema {f.schema_id})")
                parents.append(mid)
                # Paimon says ADD/DELETE, Iceberg ADDED/EXISTING/DELETED
                live = f.kind.startswith(("ADD", "EXISTING"))
                colors.append(schema_color(f.schema_id) if live else "#cf222e")
                part = ", ".join(f"{_esc(k)}={_esc(v)}" for k, v in f.partition.items())
                hovers.append(f"{_esc(f.path)}<br>{f.kind}, schema {f.schema_id}, "
                              f"{_rows(f.row_count)}" + (f"<br>{part}" if part else "")
                              + ("" if f.bucket is None else f"<br>bucket {f.bucket}")
                              + _lsm_text(f))
    fig = go.Figure(go.Icicle(ids=ids, labels=labels, parents=parents,
                              marker=dict(colors=colors), hovertext=hovers,
                              hoverinfo="text", tiling=dict(orientation="h")))
    return _layout(fig, title or f"snapshot {node.id}: manifest tree", 380)


def _lsm_text(f: Any) -> str:
    """A primary-key file's place in its bucket's LSM tree: level, key range, sequence
    numbers (what the deduplicate merge orders by)."""
    if f.min_key is None:
        return ""
    keys = ", ".join(_esc(k) for k in f.min_key) + " … " + ", ".join(_esc(k) for k in f.max_key)
    return (f"<br>level {f.level}, keys [{keys}], sequence numbers "
            f"{f.min_sequence_number}–{f.max_sequence_number}")


def _without_kind(ev: FieldEvent) -> str:
    """``ev.describe()`` without a leading kind word, which the badge before it shows."""
    text = ev.describe()
    return text[len(ev.kind) + 1:] if text.startswith(ev.kind + " ") else text


def diff_html(d: SchemaDiff) -> str:
    """A schema diff as an HTML list, every name escaped."""
    if not d.events:
        return f"<p>schema {d.old} → {d.new}: no field changes</p>"
    items = "".join(
        f"<li><span style='color:{EVENT_COLORS.get(ev.kind, '#57606a')};font-weight:600'>"
        f"{html.escape(ev.kind)}</span> {html.escape(_without_kind(ev))} "
        f"<small>(field {ev.field_id})</small></li>" for ev in d.events)
    return f"<p><b>schema {d.old} → {d.new}</b></p><ul>{items}</ul>"
