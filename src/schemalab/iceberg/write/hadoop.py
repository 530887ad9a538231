"""Iceberg tables in a warehouse, laid out as Java's ``HadoopCatalog`` lays them out:
``<warehouse>/<namespace>/<table>/metadata/v<N>.metadata.json`` (+ ``version-hint.text``),
data under ``<table>/data/``. Java's ``HadoopCatalog(conf, warehouse)`` loads ``db.t`` from
there and pyiceberg's ``StaticTable`` opens its metadata file. Paimon tables of the same
warehouse stay in ``<db>.db/<table>``, so the two never share a directory."""

from __future__ import annotations

import os

from schemalab import fileio
from schemalab.iceberg.locate import metadata_version


def table_dir(warehouse: str, db: str, table: str) -> str:
    return os.path.join(warehouse, db, table)


def is_table(warehouse: str, db: str, table: str) -> bool:
    mdir = os.path.join(table_dir(warehouse, db, table), "metadata")
    return any(metadata_version(n) is not None for n in fileio.list_names(mdir))


def namespaces(warehouse: str) -> list[str]:
    """Directories of the warehouse that hold at least one Iceberg table."""
    out = []
    for n in fileio.list_names(warehouse):
        if n.startswith(".") or n.endswith(".db"):
            continue
        d = os.path.join(warehouse, n)
        if fileio.is_dir(d) and tables(warehouse, n):
            out.append(n)
    return sorted(out)


def tables(warehouse: str, db: str) -> list[str]:
    d = os.path.join(warehouse, db)
    return sorted(t for t in fileio.list_names(d)
                  if not t.startswith(".") and is_table(warehouse, db, t))
