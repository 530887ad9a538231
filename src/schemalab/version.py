"""schemalab's version: one place, below every other module (snapshot summaries and
Paimon's ``commitUser`` writer name carry it; ``schemalab.__version__`` re-exports it)."""

__version__ = "0.1.0"
