"""Progress of long work: manifests read, files listed, files rewritten — done of total.

The loops that read many manifests or rewrite many files wrap themselves in :func:`task`
(or :func:`track` for a plain loop); what is shown depends on where schemalab runs:

- in a terminal (``schemalab inspect``, ``compact``, …): one line on stderr, redrawn in place,
  ``reading manifests: 37/120 manifests`` — only when stderr is a TTY, or when asked
  (``SCHEMALAB_PROGRESS=always schemalab inspect …``, :func:`configure` ``("always")``;
  ``SCHEMALAB_PROGRESS=never`` shows nothing anywhere);
- in a notebook (an IPython kernel): an ipywidgets progress bar under the cell, removed when
  the work ends;
- nowhere else, and never for work that ends within :data:`DELAY_S` or has fewer than
  :data:`MIN_STEPS` steps (a small table shows nothing, so notebook outputs stay the same
  run to run).

Observers (:func:`observe`) see every step whatever the display: tests count with them.

Ctrl-C raises ``KeyboardInterrupt`` in the loop as anywhere else; :func:`task` closes its
display (saying *interrupted*) and lets it propagate, and each caller undoes what it started
(a compaction deletes the files it wrote and commits nothing).

>>> seen = []
>>> with observe(lambda e: seen.append((e.done, e.total, e.state))):
...     for _ in track(range(2), "reading manifests", unit="manifests"):
...         pass
>>> seen
[(0, 2, 'running'), (1, 2, 'running'), (2, 2, 'running'), (2, 2, 'done')]
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

T = TypeVar("T")
Mode = Literal["auto", "always", "never"]

#: work that ends sooner shows nothing
DELAY_S = 0.5
#: fewer steps than this show nothing either (unless asked): a bar for three files is noise
MIN_STEPS = 10
#: the display is redrawn at most this often
REDRAW_S = 0.1


@dataclass(frozen=True)
class Event:
    """One step of a task: ``done`` of ``total`` ``unit``; ``state`` is ``"running"``,
    ``"done"`` or ``"interrupted"``."""

    what: str
    done: int
    total: int
    unit: str
    state: str = "running"


def _env_mode() -> Mode:
    value = os.environ.get("SCHEMALAB_PROGRESS", "auto").strip().lower()
    return value if value in ("always", "never") else "auto"  # type: ignore[return-value]


_mode: Mode = _env_mode()
_observers: list[Callable[[Event], None]] = []


def configure(mode: Mode) -> Mode:
    """``"auto"``: a bar in notebooks and on a terminal's stderr; ``"always"``: on stderr
    even when it is not a terminal (a log), and without the delay; ``"never"``: nothing.
    Returns the mode it replaces."""
    global _mode
    if mode not in ("auto", "always", "never"):
        raise ValueError(f"progress mode {mode!r} is not one of auto, always, never")
    previous, _mode = _mode, mode
    return previous


@contextlib.contextmanager
def observe(callback: Callable[[Event], None]) -> Iterator[None]:
    """Call ``callback`` with every :class:`Event` of every task while the block runs."""
    _observers.append(callback)
    try:
        yield
    finally:
        _observers.remove(callback)


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = shell.get_ipython()  # type: ignore[attr-defined]
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


class _Stderr:
    """One line on stderr, redrawn with a carriage return."""

    def __init__(self) -> None:
        self.drawn = False

    def draw(self, e: Event) -> None:
        bar = _bar_text(e.done, e.total)
        end = "\n" if e.state != "running" else ""
        note = f" ({e.state})" if e.state == "interrupted" else ""
        sys.stderr.write(f"\r{e.what}: {bar} {e.done}/{e.total} {e.unit}{note}{end}")
        sys.stderr.flush()
        self.drawn = e.state == "running"


class _Widget:
    """An ipywidgets bar displayed under the running cell, removed at the end."""

    def __init__(self, e: Event) -> None:
        import ipywidgets as W
        from IPython.display import display

        self.bar = W.IntProgress(value=e.done, min=0, max=max(e.total, 1),
                                 description=e.what, style={"description_width": "initial"})
        self.label = W.Label(f"{e.done}/{e.total} {e.unit}")
        self.box = W.HBox([self.bar, self.label])
        self.box.add_class("sl-progress-bar")
        self.handle = display(self.box, display_id=True)

    def draw(self, e: Event) -> None:
        self.bar.value = min(e.done, self.bar.max)
        self.label.value = f"{e.done}/{e.total} {e.unit}" + (
            f" ({e.state})" if e.state == "interrupted" else "")
        if e.state != "running":
            self.box.close()
            if self.handle is not None:
                self.handle.update({"text/plain": ""}, raw=True)


def _bar_text(done: int, total: int, width: int = 24) -> str:
    filled = width if total <= 0 else min(width, width * done // total)
    return "[" + "#" * filled + "." * (width - filled) + "]"


class Task:
    """``done`` of ``total`` ``unit`` of ``what``; :meth:`advance` after each one."""

    def __init__(self, what: str, total: int, unit: str) -> None:
        self.what, self.total, self.unit = what, total, unit
        self.done = 0
        self.started = time.monotonic()
        self._drawn_at = 0.0
        self._display: _Stderr | _Widget | None = None
        self._emit("running")

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._emit("running")

    def close(self, state: str = "done") -> None:
        self._emit(state, final=True)

    def _emit(self, state: str, final: bool = False) -> None:
        e = Event(self.what, self.done, self.total, self.unit, state)
        for cb in list(_observers):
            cb(e)
        if _mode == "never":
            return
        now = time.monotonic()
        if self._display is None:
            if final or (_mode == "auto" and (now - self.started < DELAY_S
                                              or self.total < MIN_STEPS)):
                return
            self._display = self._open(e)
            if self._display is None:
                return
        elif not final and now - self._drawn_at < REDRAW_S:
            return
        self._drawn_at = now
        self._display.draw(e)

    def _open(self, e: Event) -> _Stderr | _Widget | None:
        if _mode == "always" or sys.stderr.isatty():
            return _Stderr()
        if _in_notebook():
            try:
                return _Widget(e)
            except Exception:  # no widget front end: show nothing rather than fail the work
                return None
        return None


@contextlib.contextmanager
def task(what: str, total: int, unit: str) -> Iterator[Task]:
    """A task of ``total`` steps: advance it in the block; Ctrl-C (or any error) closes its
    display as interrupted and propagates."""
    t = Task(what, total, unit)
    try:
        yield t
    except GeneratorExit:
        # the loop over track() ended without finishing: its body raised (Ctrl-C, an error),
        # which a generator is not told, only closed
        t.close("done" if t.done >= t.total else "interrupted")
        raise
    except BaseException:
        t.close("interrupted")
        raise
    t.close()


def track(items: Iterable[T], what: str, *, unit: str, total: int | None = None) -> Iterator[T]:
    """Iterate ``items`` as a task: one step per item."""
    seq: Any = items
    if total is None:
        seq = list(items)
        total = len(seq)
    with task(what, total, unit) as t:
        for item in seq:
            yield item
            t.advance()
