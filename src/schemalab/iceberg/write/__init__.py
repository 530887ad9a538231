"""Writing Iceberg tables: Spark writes the data files (Parquet with Iceberg's field ids),
schemalab writes the metadata JSON, manifest lists and manifests (Avro) and commits them
(create-if-absent ``v<N>.metadata.json``, then ``version-hint.text``) in the Hadoop-catalog
layout Java's ``HadoopCatalog`` and pyiceberg open.

    from schemalab.iceberg.write import create_iceberg_table
    t = create_iceberg_table("/wh/default/t", "default.t", columns, format_version=2)
    t.insert(rows)                       # a snapshot: data files, a manifest, a manifest list
"""

from schemalab.iceberg.write.table import WritableIcebergTable, create_iceberg_table

__all__ = ["WritableIcebergTable", "create_iceberg_table"]
