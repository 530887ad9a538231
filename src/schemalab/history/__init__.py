"""The format-neutral history model (schema versions, field lineage, snapshot trees) and the
adapters that build it."""
