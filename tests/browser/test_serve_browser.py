"""``schemalab serve``: the read-only Explorer through Voilà, in Debian's chromium.

A warehouse with the tour's table T (data/scenarios/flip226.sql) is served on a free
loopback port. The page loads the Explorer (table picker, four tabs, plotly figures); every
tab switches; no code cell or source is visible; Time travel explains reads and reads no rows
(no ``--allow-reads``). Then, as a viewer would try: an ``execute_request`` over the kernel's
own websocket (a ``kernel_info_request`` on the same socket is answered, the execute never
is, and the file it would write never appears), Jupyter's REST API (kernels, contents,
sessions), Voilà's file and tree endpoints, and paths that climb out of the notebook's
directory — none answers with anything but an error.

Screenshots: tests/browser/screenshots/serve/.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_tour_browser import REPO, SHOTS, _free_port, _wait, browser

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

SERVE_SHOTS = SHOTS / "serve"
START_S = 120




class Served:
    def __init__(self, url: str, log: Path) -> None:
        self.url, self.log = url, log
        self.token = ""

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])


def _status(url: str, method: str = "GET", data: bytes | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, method=method, data=data,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:  # noqa: S310 (loopback only)
            return int(r.status), r.read(4000).decode(errors="replace")
    except urllib.error.HTTPError as e:
        return int(e.code), ""


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import schemalab as sl

    root = tmp_path_factory.mktemp("serve")
    wh = sl.Warehouse(root / "wh")
    wh.sql((REPO / "data" / "scenarios" / "flip226.sql").read_text())
    return root / "wh"


@contextlib.contextmanager
def serving(target: Path, tmp: Path, *extra: str) -> Iterator[Served]:
    port = _free_port()
    log = tmp / "serve.log"
    served = Served(f"http://127.0.0.1:{port}/", log)
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "schemalab.cli", "serve", str(target),
                                 f"--port={port}", *extra], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=tmp)
    try:
        deadline = time.monotonic() + START_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited with {proc.returncode}:\n{served.log_tail()}")
            with contextlib.suppress(OSError):
                if _status(served.url + "voila/static/voila.js")[0] in (200, 404):
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"serve not up in {START_S}s:\n{served.log_tail()}")
            time.sleep(0.5)
        yield served
    finally:
        # the server's whole session: voila and the kernel it started (started here, by id)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


PAGE_JS = """
() => ({
  tabs: [...document.querySelectorAll('.lm-TabBar-tab')].map((t) => t.textContent.trim()),
  current: document.querySelector('.lm-TabBar-tab.lm-mod-current')?.textContent.trim() ?? null,
  plots: [...document.querySelectorAll('.js-plotly-plot')].filter((p) => p.offsetParent).length,
  inputs: document.querySelectorAll('.jp-InputArea, .jp-Cell-inputWrapper, .CodeMirror, '
                                    + '.cm-editor, textarea').length,
  source: document.body.innerText.includes('explorer_page'),
  picker: [...document.querySelectorAll('select option')].map((o) => o.textContent.trim()),
  buttons: [...document.querySelectorAll('button')].map((b) => b.textContent.trim()),
  explanation: document.body.innerText.includes('schema'),
  preview: document.querySelectorAll('table.sl-preview').length,
  error: document.querySelector('.sl-error')?.textContent ?? null,
})
"""

# A viewer's attempt to run code: the page's own kernel, over its websocket. Resolves with
# the message types that came back.
EXECUTE_JS = """
async ([kernelId, marker]) => {
  const url = location.origin.replace('http', 'ws') + '/api/kernels/' + kernelId + '/channels';
  const ws = new WebSocket(url);
  const got = [];
  await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = () => fail('no socket'); });
  ws.onmessage = (m) => {
    try { got.push(JSON.parse(m.data).header.msg_type); } catch (e) { got.push('binary'); }
  };
  const msg = (type, content) => JSON.stringify({
    header: {msg_id: type + Math.random(), msg_type: type, username: 'viewer',
             session: 'viewer', version: '5.3', date: new Date().toISOString()},
    parent_header: {}, metadata: {}, content, channel: 'shell', buffers: []});
  ws.send(msg('execute_request', {code: "open('" + marker + "', 'w').write('ran')",
                                  silent: false, store_history: false,
                                  user_expressions: {}, allow_stdin: false}));
  ws.send(msg('kernel_info_request', {}));
  await new Promise((ok) => setTimeout(ok, 8000));
  ws.close();
  return got;
}
"""


def test_serve_shows_the_explorer_and_nothing_else(warehouse: Path, tmp_path: Path) -> None:
    SERVE_SHOTS.mkdir(parents=True, exist_ok=True)
    marker = tmp_path / "viewer-ran-code"
    with serving(warehouse, tmp_path) as served, \
            browser(served, {"width": 1400, "height": 1100}, "96_serve_failure.png") as page:
        page.goto(served.url, timeout=START_S * 1000)
        first = _wait("the Explorer served", lambda: page.evaluate(PAGE_JS),
                      lambda s: len(s["tabs"]) == 4 and s["plots"] >= 1, START_S)
        assert first["tabs"] == ["Schema history", "Lineage", "Snapshots", "Time travel"]
        assert first["picker"][:1] == ["default.T"] or "default.T" in first["picker"], first
        assert first["inputs"] == 0 and not first["source"], first
        page.screenshot(path=str(SERVE_SHOTS / "0_schema_history.png"))
        for k, tab in enumerate(first["tabs"][1:], start=1):
            page.locator(".lm-TabBar-tab", has_text=tab).first.click()
            _wait(f"tab {tab}", lambda: page.evaluate(PAGE_JS),
                  lambda s, tab=tab: s["current"] == tab and s["error"] is None, 60)
            page.wait_for_timeout(400)
            page.screenshot(path=str(SERVE_SHOTS / f"{k}_{tab.replace(' ', '_')}.png"))
        # metadata only: Time travel explains, it has no Read button and shows no rows
        state = page.evaluate(PAGE_JS)
        assert "Explain" in " ".join(state["buttons"]) and "Read" not in state["buttons"]
        page.locator("button", has_text="Explain").first.click()
        explained = _wait("an explanation", lambda: page.evaluate(PAGE_JS),
                          lambda s: "files" in page.inner_text("body") or s["error"], 60)
        assert explained["error"] is None and explained["preview"] == 0, explained
        page.screenshot(path=str(SERVE_SHOTS / "4_explained.png"))

        # -- a viewer cannot run code: the kernel's websocket drops execute_request ----------
        html = _status(served.url)[1] + page.content()
        m = re.search(r'"kernelId"\s*:\s*"([0-9a-f-]{36})"', page.content())
        assert m, "no kernel id in the page"
        got = page.evaluate(EXECUTE_JS, [m.group(1), str(marker)])
        assert "kernel_info_reply" in got, got  # the socket works: it answers what it allows
        assert "execute_reply" not in got and "execute_input" not in got, got
        assert not marker.exists(), "a viewer's execute_request ran"
        assert "explorer_page" not in html

        # -- nor reach Jupyter's API, the files around the notebook, or above them ----------
        for method, path in [
            ("GET", "api/kernels"), ("POST", "api/kernels"), ("GET", "api/sessions"),
            ("GET", "api/contents"), ("GET", "api/contents/explorer.ipynb"),
            ("GET", "api/terminals"), ("GET", "tree"), ("GET", "voila/tree"),
            ("GET", "voila/render/explorer.ipynb"), ("GET", "files/explorer.ipynb"),
            ("GET", "voila/files/explorer.ipynb"), ("GET", "files/../../../etc/passwd"),
            ("GET", "voila/files/..%2F..%2F..%2Fetc%2Fpasswd"),
            ("GET", "voila/files/%2Fetc%2Fpasswd"),
            ("GET", f"voila/files/{warehouse}/default.db/T/schema/schema-0"),
        ]:
            code, body = _status(served.url + path, method, b"{}" if method == "POST" else None)
            assert code >= 400, f"{method} /{path} answered {code}: {body[:200]}"
            assert "root:" not in body and "explorer_page" not in body
    print(f"screenshots in {SERVE_SHOTS}")
