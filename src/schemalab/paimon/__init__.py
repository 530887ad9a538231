"""The Apache Paimon table format, without Spark: paths, schema and snapshot files, Avro
manifests, BinaryRow, the bucket function, commits and orphan files."""
