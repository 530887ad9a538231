"""Reference engines run as oracles for interop tests (Java Paimon 1.0 through py4j)."""
