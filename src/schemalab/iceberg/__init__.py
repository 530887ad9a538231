"""Apache Iceberg tables (format v1-v3), opened read-only: metadata, manifests, history, and
reads planned for the one engine.

    t = IcebergTable("warehouse/db/orders")      # or a path to one *.metadata.json
    t.format_version, t.schema.schema_id
    h = t.history()                              # TableHistory(format="iceberg")
    h.tree(h.snapshots[-1].id)                   # manifest list -> manifests -> files
    t.read()                                     # current snapshot, current schema
    t.read(snapshot_id=s)                        # time travel with snapshot s's schema
    t.read(snapshot_id=s, schema="current")
"""

from schemalab.iceberg.locate import is_iceberg_table
from schemalab.iceberg.table import IcebergTable

__all__ = ["IcebergTable", "is_iceberg_table"]
