"""File encodings more than one table format reads (Roaring bitmaps: Paimon's and
Iceberg's deletion vectors)."""
