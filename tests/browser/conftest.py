"""Browser tests drive a real JupyterLab in Debian's chromium; they are opt-in.

``make test`` collects them and skips them; ``make test-browser`` sets SCHEMALAB_BROWSER=1
(after installing chromium) and runs them.
"""

from __future__ import annotations

import os

import pytest


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A runtest hook in this conftest only sees the items under tests/browser/.
    if item.get_closest_marker("browser") and os.environ.get("SCHEMALAB_BROWSER") != "1":
        pytest.skip("real-browser test: run `make test-browser` (sets SCHEMALAB_BROWSER=1)")
