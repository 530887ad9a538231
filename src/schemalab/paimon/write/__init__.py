"""Paimon's write path on Spark: rows → data files in Paimon's layout (with the Parquet
encodings Java Paimon uses) → a committed snapshot; primary-key writes, the bucket column
and compaction."""
