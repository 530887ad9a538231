"""The ``java_paimon`` pytest fixture: one Java Paimon worker (one JVM) per test session.

Import it into a test module (``from oracles.fixtures import java_paimon``); pytest then
finds it there. Without ``.venv-paimon-java`` the fixture FAILS (it does not skip): the
cross-check is part of ``make test``, which builds that venv.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .java_paimon import JavaPaimon, JavaPaimonUnavailable


@pytest.fixture(scope="session")
def java_paimon() -> Iterator[JavaPaimon]:
    try:
        client = JavaPaimon.start()
    except JavaPaimonUnavailable as exc:
        pytest.fail(f"Java Paimon oracle unavailable: {exc}", pytrace=False)
    try:
        yield client
    finally:
        client.close()
