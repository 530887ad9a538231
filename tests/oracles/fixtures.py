"""The Java Paimon oracles as pytest fixtures: one worker (one JVM) per version per session.

- ``java_paimon`` (= ``java_paimon_1``): Java Paimon 1.0 (the oracle of ``make test``'s Java
  cross-checks);
- ``java_paimon_2``: Java Paimon 2.0.0 (Maven Central, ``make oracle-jars``);
- ``java_paimon_each``: parametrized over both (ids ``paimon-1.0``, ``paimon-2.0.0``). A test
  module whose every test should run against both overrides ``java_paimon`` with it.

Import them into a test module (``pytest_plugins = ["oracles.fixtures"]``). A missing oracle
FAILS the test (it does not skip), naming the make target that builds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar

import pytest

from .java_paimon import VERSIONS, JavaPaimon, JavaPaimonUnavailable


class _Closing(Protocol):
    def close(self) -> Any: ...


C = TypeVar("C", bound=_Closing)


def started(start: Callable[[], C], what: str) -> Iterator[C]:
    """A fixture's body for a Java oracle: ``start()``'s client, closed after; a client that
    cannot start FAILS the test, naming ``what``."""
    try:
        client = start()
    except JavaPaimonUnavailable as exc:
        pytest.fail(f"{what} oracle unavailable: {exc}", pytrace=False)
    try:
        yield client
    finally:
        client.close()


def _start(version: str) -> Iterator[JavaPaimon]:
    yield from started(lambda: JavaPaimon.start(version), f"Java Paimon {version}")


@pytest.fixture(scope="session")
def java_paimon_1() -> Iterator[JavaPaimon]:
    yield from _start("1.0")


@pytest.fixture(scope="session")
def java_paimon(java_paimon_1: JavaPaimon) -> JavaPaimon:
    return java_paimon_1


@pytest.fixture(scope="session")
def java_paimon_2() -> Iterator[JavaPaimon]:
    yield from _start("2.0.0")


@pytest.fixture(params=[pytest.param(v, id=f"paimon-{v}") for v in VERSIONS])
def java_paimon_each(request: pytest.FixtureRequest) -> JavaPaimon:
    # (not "java_paimon": a module may override that name with this fixture)
    name = "java_paimon_1" if request.param == "1.0" else "java_paimon_2"
    client: JavaPaimon = request.getfixturevalue(name)
    return client
