"""Notebook widgets for schemalab (filled in by the widget issue)."""
