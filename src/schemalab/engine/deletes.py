"""Deleted rows removed from a scan, on Spark: by position (deletion vectors, position delete
files) and by value (equality delete files).

**By position.** Spark's Parquet reader gives each row's 0-based position in its file: a
read-schema column named :data:`ROW_INDEX_FIELD` is filled with it (as Spark fills
``_metadata.row_index``, and as Delta's deletion-vector reader asks for it), also in a scan
by field id. On a classic session the position is tested by a filter in the JVM
(:func:`jvm_position_filter`, :mod:`schemalab.engine.kept_rows`), which asks the scan for
its file once per file; otherwise (Spark Connect) by Spark expressions, below, where the
file is told by ``_metadata.file_size`` (then ``file_name``). The deleted
positions of every data file of a scan are decoded on the driver (a Roaring bitmap, or the
rows of a position delete file naming it) and set as bits of one bitmap, each file's from a
64-bit word of its own on; a row's word is its file's first word (found by its file's size,
then name) plus its position / 64, its bit its position % 64, tested in the scan's own
filter with the bitmap in a scalar subquery: no join, hash table or exchange. Past
:data:`BITMAP_ROWS` rows or :data:`BITMAP_FILES` files with deletes in one scan, the
positions go to Spark as 64-position words, one row ``(file name, position >> 6, 64-bit
mask)`` per word holding a deleted position, and a row is dropped by a broadcast left
anti-join on (file name, word) testing its bit. Measured (``bench/deletes.py``): the join's
probe per row cost a deletes read about 1.8x a plain read of the surviving rows; one row per
deleted position cost Spark 2–3 s to build from Arrow at 10M rows; a bitmap indexed by file
offset + position (a bounds test and offset arithmetic per row, the name lookup three times
in an expression Spark took ~0.1 s to analyse) 1.4x. A per-file ``NOT IN`` filter would need
one scan (and one Spark job plan) per file.

File names must be unique within a scan (the scan splits files otherwise, see
:func:`unique_name_scans`), and Spark reports them URI-encoded (``a b.parquet`` is
``a%20b.parquet``): names made of :data:`_SAFE` characters, as every engine's generated data
file names are, are compared as they are; a scan with any other name decodes Spark's side
per row (``url_decode``, after protecting ``+``, which a URI keeps literal).

ORC files with deletes and Avro files are read on the driver (:mod:`schemalab.engine.arrow_read`),
where the positions are simply dropped before the rows reach Spark.

**By value.** An equality delete file's rows are read like a data file (evolved by field id)
into columns ``__sl_eq_<id>``; a row of a data file is dropped by a left anti-join when every
equality column is NULL-safe equal (``<=>``) and the delete applies to its file: the file's
data sequence number is lower than the delete's, and the delete is global or of the file's
partition. Each row learns its file's sequence number and partition from a broadcast join on
its file name.
"""

from __future__ import annotations

import functools
import operator
import os
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from schemalab import fileio
from schemalab.engine.plan import DataFile, EqualityDeletes, extra_name
from schemalab.engine.session_cache import hold, local_frame, session_frames
from schemalab.engine.spark_reader import quote
from schemalab.errors import SchemaLabError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

#: each row's data file name and position, while deletes are applied
FILE_NAME_COL = "__sl_file_name"
POS_COL = "__sl_pos"
#: each row's data file size in bytes, while positions are tested (see :func:`_file_start`)
FILE_SIZE_COL = "__sl_file_size"
#: the read-schema column Spark's Parquet reader fills with each row's position in its file
#: (Spark's own name for it, ``FileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME``, through which
#: Spark fills ``_metadata.row_index``; the reader finds it by name). ``_metadata.row_index``
#: gives the same values through a struct built for every row: a filter on the position of
#: 4.9M rows in 40 files took 0.30 s with it and 0.25 s with this column (a read of their
#: key alone: 0.18 s). Spark 4.3 refuses to plan a scan that reads it while a ``_metadata``
#: field the scan projected is pruned away unused ("cannot be read in combination with
#: _metadata.row_index"): the filter keeps using the file size it asks for.
ROW_INDEX_FIELD = "_tmp_metadata_row_index"
_WORD_FILE, _WORD, _BITS = "__sl_dv_file", "__sl_dv_word", "__sl_dv_bits"
_SEQ, _SCOPE = "__sl_data_seq", "__sl_scope"
_DEL_SEQ, _DEL_SCOPE = "__sl_del_seq", "__sl_del_scope"
_BITMAP = "__sl_words"
#: file-name characters Spark's ``_metadata.file_name`` shows as they are
_SAFE = re.compile(r"[A-Za-z0-9._\-=+,@~]*")


def file_name(f: DataFile) -> str:
    return os.path.basename(f.path.rstrip("/"))


def names_are_safe(files: Sequence[DataFile]) -> bool:
    return all(_SAFE.fullmatch(file_name(f)) for f in files)


def unique_name_scans(files: Sequence[DataFile]) -> list[list[DataFile]]:
    """``files`` split into as few lists as possible in which no two files share a name
    (files of different partitions may: Spark names its part files alike)."""
    scans: list[tuple[set[str], list[DataFile]]] = []
    for f in files:
        name = file_name(f)
        for names, fs in scans:
            if name not in names:
                names.add(name)
                fs.append(f)
                break
        else:
            scans.append(({name}, [f]))
    return [fs for _, fs in scans]


def metadata_columns(df: DataFrame, files: Sequence[DataFile], *, positions: bool,
                     sizes: bool = False, row_index: bool = False, table: str | None = None,
                     names: bool = True) -> list[Column]:
    """The columns a Spark scan ``df`` adds for delete application: with ``names`` each
    row's file name (decoded when a name is not :data:`_SAFE`), with ``positions`` its row
    index, and with ``sizes`` its file's size (:data:`FILE_SIZE_COL`, for
    :func:`drop_deleted_positions`). With ``row_index`` (``df`` is a Parquet scan of
    ``table`` that reads :data:`ROW_INDEX_FIELD`), the row index is that column's; a NULL
    there (a Spark whose reader does not fill it) fails the read with an error naming the
    table, where it would keep a deleted row."""
    from pyspark.sql import functions as F

    meta = df.metadataColumn("_metadata")
    cols = []
    if names:
        name = meta.getField("file_name")
        if not names_are_safe(files):
            name = F.url_decode(F.replace(name, F.lit("+"), F.lit("%2B")))
        cols.append(name.alias(FILE_NAME_COL))
    if positions and row_index:
        cols.append(F.coalesce(F.col(ROW_INDEX_FIELD), F.raise_error(F.lit(
            f"Reading {table}: Spark's Parquet reader gave no row position "
            f"({ROW_INDEX_FIELD}), which deletes by position and row ids need; this "
            "Spark cannot read the table's deletes"))).alias(POS_COL))
    elif positions:
        cols.append(meta.getField("row_index").alias(POS_COL))
    if sizes:
        cols.append(meta.getField("file_size").alias(FILE_SIZE_COL))
    return cols


def deleted_positions(f: DataFile, table: str) -> npt.NDArray[np.int64]:
    """The sorted positions deleted from ``f`` by all its deletes, checked against its row
    count: a position past the file's end means the delete was made for another file."""
    import numpy as np

    arrays = [np.asarray(d.load(), dtype=np.int64) for d in f.deletes]
    if not arrays:
        return np.zeros(0, np.int64)
    pos = arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
    if len(arrays) > 1 or (len(pos) > 1 and not bool(np.all(pos[1:] > pos[:-1]))):
        pos = np.unique(pos)  # a vector is sorted already; sorting again costs 10x decoding
    if len(pos) and (pos[0] < 0 or pos[-1] >= f.row_count):
        bad = int(pos[0] if pos[0] < 0 else pos[-1])
        sources = ", ".join(sorted({os.path.basename(d.source) for d in f.deletes}))
        raise SchemaLabError(
            f"Table {table}: {sources} delete(s) row {bad} of data file {file_name(f)}, which "
            f"has {f.row_count} rows; the deletes do not belong to this file, so the read is "
            "refused rather than guessed.", table=table, rule="delete-position")
    return pos


def position_words(files: Sequence[DataFile], table: str) -> pa.Table:
    """``(file name, word, bits)`` for every 64-position word of each file that holds a
    deleted position; ``bits`` is the word's mask as a signed 64-bit integer."""
    import numpy as np
    import pyarrow as pa

    names: list[pa.Array] = []
    words, bits = [], []
    for f in files:
        pos = deleted_positions(f, table)
        if not len(pos):
            continue
        w = pos >> 6
        starts = np.flatnonzero(np.r_[True, w[1:] != w[:-1]])
        masks = np.left_shift(np.uint64(1), (pos & 63).astype(np.uint64))
        bits.append(np.bitwise_or.reduceat(masks, starts).view(np.int64))
        words.append(w[starts])
        names.append(pa.repeat(pa.scalar(file_name(f), pa.string()), len(starts)))
    if not words:
        return pa.table({_WORD_FILE: pa.array([], pa.string()),
                         _WORD: pa.array([], pa.int64()), _BITS: pa.array([], pa.int64())})
    return pa.table({_WORD_FILE: pa.concat_arrays(names),
                     _WORD: pa.array(np.concatenate(words), pa.int64()),
                     _BITS: pa.array(np.concatenate(bits), pa.int64())})


def drop_deleted_positions(df: DataFrame, files: Sequence[DataFile], spark: SparkSession,
                           table: str) -> DataFrame:
    """``df`` (with :data:`FILE_NAME_COL`, :data:`POS_COL` and :data:`FILE_SIZE_COL`)
    without the rows the files' position deletes name, and without the position and size
    columns: by a bitmap of every file's positions in the scan's own filter where it fits
    (:func:`_bitmap_filter`), else by a broadcast anti-join on (file name, word)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    keep = _bitmap_filter(files, spark, table)
    if keep is not None:
        return df.where(keep).drop(POS_COL, FILE_SIZE_COL)
    df = df.drop(FILE_SIZE_COL)
    words = position_words(files, table)
    if words.num_rows:
        schema = st.StructType([st.StructField(_WORD_FILE, st.StringType(), False),
                                st.StructField(_WORD, st.LongType(), False),
                                st.StructField(_BITS, st.LongType(), False)])
        w = F.broadcast(local_frame(spark, words, schema))
        pos = F.col(POS_COL)
        hit = ((F.col(FILE_NAME_COL) == F.col(_WORD_FILE))
               & (F.shiftright(pos, 6) == F.col(_WORD))
               # the row's bit of the word (an arithmetic shift keeps bit 63's sign: != 0)
               & F.expr(f"shiftright({_BITS}, CAST({POS_COL} % 64 AS INT)) % 2 != 0"))
        df = df.join(w, hit, "left_anti")
    return df.drop(POS_COL)


def jvm_position_filter(files: Sequence[DataFile], spark: SparkSession, table: str
                        ) -> Column | None:
    """Whether a row of ``files`` (one scan's, of unique names) survives their deletes by
    position, tested by :mod:`schemalab.engine.kept_rows`' filter in the JVM on
    :data:`POS_COL` alone (the scan needs no file name or size); None where that filter is
    not available or the files with deletes hold more than :data:`BITMAP_ROWS` rows."""
    import numpy as np
    from pyspark.sql import functions as F

    from schemalab.engine import kept_rows

    if not kept_rows.available(spark):
        return None  # before decoding: the expression filter decodes them again
    deleted = {f.path: p for f in files if len(p := deleted_positions(f, table))}
    if sum(f.row_count for f in files if f.path in deleted) > BITMAP_ROWS:
        return None
    bitmaps = []
    for f in files:
        pos = deleted.get(f.path)
        words = np.zeros(0, np.int64)
        if pos is not None:
            bits = np.zeros(((f.row_count + 63) >> 6) * 64, dtype=bool)
            bits[pos] = True
            words = bitmap_words(bits)
        bitmaps.append((file_name(f), words))
    return kept_rows.position_filter(spark, bitmaps, F.col(POS_COL), table)


#: the most rows (of files with deletes, in one scan) whose positions a bitmap covers, and
#: the most such files a row's offset is chosen among by name
BITMAP_ROWS = 1 << 27
BITMAP_FILES = 64


def _bitmap_filter(files: Sequence[DataFile], spark: SparkSession, table: str
                   ) -> Column | None:
    """Whether a row survives, as a filter of its own scan: the deleted positions of every
    file set as bits of one bitmap, each file's from a 64-bit word of its own on, a row's
    word found from its file's first word (:func:`_file_start`) plus its position / 64, its
    bit from its position alone. No join, hash table or exchange: the test runs in the
    scan's generated code, and the file lookup once per row. None past
    :data:`BITMAP_ROWS` or :data:`BITMAP_FILES`."""
    import numpy as np
    from pyspark.sql import functions as F

    deleted = [(f, p) for f in files if len(p := deleted_positions(f, table))]
    if not deleted:
        return F.lit(True)
    if sum(f.row_count for f, _ in deleted) > BITMAP_ROWS or len(deleted) > BITMAP_FILES:
        return None
    # file k's bits start at word first[k]: a row's bit within its word is its position's
    first = np.cumsum([0] + [(f.row_count + 63) >> 6 for f, _ in deleted])
    bits = np.zeros(int(first[-1]) * 64, dtype=bool)
    for (_, p), w in zip(deleted, first, strict=False):
        bits[int(w) * 64 + p] = True
    bitmap = _bitmap_scalar(bits, spark)
    # element_at counts from 1; a file without deletes has no first word: its rows all stay
    start = _file_start([(f, int(w) + 1) for (f, _), w in zip(deleted, first, strict=False)],
                        files, spark)
    _, w, bit = bit_position(F.col(POS_COL), 0)
    # NULL past the bitmap's end (a file holding more rows than its manifest says)
    word = F.try_element_at(bitmap, start + w)
    return F.coalesce(_bit(word, bit) == 0, F.lit(True))


def _file_start(values: list[tuple[DataFile, int]], scanned: Sequence[DataFile],
                spark: SparkSession) -> Column:
    """The value of the row's file among ``values`` (files of unique names, some of the
    ``scanned`` files), NULL for any other file: found by the file's size
    (:data:`FILE_SIZE_COL`), by a perfect hash where every scanned file's size is its own
    (:func:`_size_table`), else by a balanced tree of 64-bit comparisons, and by its name only
    where another scanned file has the same size, as comparing names costs more (the names
    of one commit's files share their first 41 characters, so each comparison reads most of
    a name): a deletes read of 3M rows in 10 files measured 1.32x a plain read by names,
    1.22x by size then name. Where every size is its file's own, the scan reads no file
    name. The sizes are the files' own (asked of their store: a manifest's may be wrong),
    as Spark's are; a file of the same size and another name (one without deletes) gets
    NULL at the name's leaf. Where every name is of :data:`_SAFE` characters the tree goes
    to Spark as one SQL text (one call, where building its expressions takes several per
    node: 0.02 s of the read's 0.15 s planning at 10 files)."""
    from pyspark.sql import functions as F

    size = {f.path: fileio.size(f.path) for f in scanned}
    shared = Counter(size.values())
    if len(shared) == len(scanned):
        hashed = _size_table([(size[f.path], v) for f, v in values], spark)
        if hashed is not None:
            return hashed
    by_size: dict[int, list[tuple[str, int]]] = {}
    for f, v in values:
        by_size.setdefault(size[f.path], []).append((file_name(f), v))
    tree = _balanced(FILE_SIZE_COL, [
        (n, named[0][1] if shared[n] == 1 else _balanced(FILE_NAME_COL, sorted(named)))
        for n, named in sorted(by_size.items())])
    if all(_SAFE.fullmatch(n) for named in by_size.values() for n, _ in named):
        return F.expr(_as_text(tree))
    return _as_column(tree)


def _size_table(values: list[tuple[int, int]], spark: SparkSession) -> Column | None:
    """The value of the row's file size among ``values`` ((size, value), each size its
    file's own among every scanned file), NULL for any other size, as a perfect hash of the
    size: slot ``((size >> a) ^ size) & mask``, for the first shift ``a`` and the smallest
    mask (from four slots per size on) that give every size a slot of its own; the slot's
    size is compared, so a size not among ``values`` gets NULL. Per row two array reads and
    a few bit operations, and the expression's code is as small for 64 files as for one:
    a tree of comparisons grows with the files (the scan's generated method: 1,500 bytes of
    bytecode for 8 files, 6,800 for 64), and HotSpot does not compile a method past 8,000
    bytes: 10M rows in one scan of 80 files read 8-13x slower by the tree than in two
    scans. None where no shift and mask up to 64 slots per size separate the sizes (the
    caller then builds the tree)."""
    import numpy as np
    from pyspark.sql import functions as F

    sizes = np.array([s for s, _ in values], dtype=np.int64)
    for bits in range(max(2, (len(values) - 1).bit_length() + 2),
                      (len(values) - 1).bit_length() + 7):
        mask = (1 << bits) - 1
        for shift in range(48):
            slot = ((sizes >> shift) ^ sizes) & mask
            if len(np.unique(slot)) == len(values):
                keys = np.full(mask + 1, -1, dtype=np.int64)
                found = np.zeros(mask + 1, dtype=np.int32)
                keys[slot] = sizes
                found[slot] = [v for _, v in values]
                size = F.col(FILE_SIZE_COL)
                i = F.shiftright(size, shift).bitwiseXOR(size).bitwiseAND(F.lit(mask)) \
                    .cast("int")
                return F.when(F.get(array_scalar(keys, spark), i) == size,
                              F.get(array_scalar(found, spark), i))
    return None


#: a lookup: the value of the first (key, value) whose key equals the row's ``column``
#: (NULL for none), as a tree of comparisons: a leaf (column, key, value, None) or a node
#: (column, pivot, below the pivot, from the pivot on); a value is an int or a lookup
_Lookup = tuple[str, "int | str", "int | _Lookup", "int | _Lookup | None"]


def _balanced(column: str, items: list[tuple[int | str, int | _Lookup]]) -> _Lookup:
    """A balanced tree over ``items`` (sorted by key): a row compares its column about
    log2(len(items)) + 1 times, not once per item before its own."""
    if len(items) == 1:
        return (column, items[0][0], items[0][1], None)
    mid = len(items) // 2
    return (column, items[mid][0], _balanced(column, items[:mid]),
            _balanced(column, items[mid:]))


def _as_text(t: int | _Lookup) -> str:
    """``t`` as Spark SQL (its string keys are of :data:`_SAFE` characters)."""
    if isinstance(t, int):
        return str(t)
    column, key, below, rest = t
    literal = f"'{key}'" if isinstance(key, str) else str(key)
    if rest is None:
        return f"CASE WHEN `{column}` = {literal} THEN {_as_text(below)} END"
    return (f"CASE WHEN `{column}` < {literal} THEN {_as_text(below)} "
            f"ELSE {_as_text(rest)} END")


def _as_column(t: int | _Lookup) -> Column:
    """``t`` as Column expressions, for names :func:`_as_text` does not take (its keys are
    literals: nothing is quoted by hand)."""
    from pyspark.sql import functions as F

    if isinstance(t, int):
        return F.lit(t)
    column, key, below, rest = t
    if rest is None:
        return F.when(F.col(column) == F.lit(key), _as_column(below))
    return F.when(F.col(column) < F.lit(key), _as_column(below)).otherwise(_as_column(rest))


def bitmap_test(index: Column, lo: int, bits: npt.NDArray[np.bool_],
                spark: SparkSession, *, int_index: bool = False) -> Column:
    """Whether bit ``index - lo`` of ``bits`` is set (False outside them), as an expression
    holding the bitmap in a scalar subquery, so the test runs in generated code.
    ``int_index``: ``index`` is an INT (or narrower) column, so where ``lo`` is 0 the test
    needs no 64-bit arithmetic (a third of the test's cost per row: 30M rows, 0.48 s over
    the scan against 0.31 s)."""
    from pyspark.sql import functions as F

    if not bits.any():
        return F.lit(False)
    bitmap = _bitmap_scalar(bits, spark)  # bit i of word w is index lo + 64 w + i
    i, w, bit = bit_position(index, lo, int_index=int_index)
    # CASE WHEN reads a word only inside the bitmap (``get`` counts from 0)
    return F.when(i.between(0, len(bits) - 1), _bit(F.get(bitmap, w), bit) == 1) \
        .otherwise(F.lit(False))


def bit_position(index: Column, lo: int, *, int_index: bool = False
                 ) -> tuple[Column, Column, Column]:
    """(``i = index - lo``, the 0-based index of its 64-bit word ``i >> 6``, its bit in that
    word ``i & 63``), the last two INT. ``int_index``: ``index`` is an INT (or narrower)
    column, so where ``lo`` is 0 all three are ``index``'s own 32-bit arithmetic; else
    ``i`` is a BIGINT (no subtraction per row where ``lo`` is 0), and only a ``w`` inside a
    bitmap may be read (a ``w`` past an INT fails its cast in ANSI mode)."""
    from pyspark.sql import functions as F

    if int_index and lo == 0:
        return index, F.shiftright(index, 6), index.bitwiseAND(F.lit(63))
    i = index.cast("bigint")
    if lo != 0:
        i = i - F.lit(lo)
    return i, F.shiftright(i, 6).cast("int"), i.bitwiseAND(F.lit(63)).cast("int")


def _bitmap_scalar(bits: npt.NDArray[np.bool_], spark: SparkSession) -> Column:
    """``bits`` as a scalar subquery of 64-bit words, bit ``i`` of word ``w`` being bit
    ``64 w + i``: packed little-endian (20x faster than setting each bit of each word with
    np.bitwise_or.at)."""
    return array_scalar(bitmap_words(bits), spark)


def bitmap_words(bits: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """``bits`` (a multiple of 64 long) as 64-bit words, bit ``i`` of word ``w`` being bit
    ``64 w + i``."""
    import numpy as np

    return np.packbits(bits, bitorder="little").view("<u8").view(np.int64)


def _bit(word: Column, index: Column) -> Column:
    """Bit ``index`` (0 = lowest) of the 64-bit ``word``: 0 or 1."""
    from pyspark.sql import functions as F

    return F.call_function("shiftright", word, index).bitwiseAND(F.lit(1))


def array_scalar(values: npt.NDArray[np.int64] | npt.NDArray[np.int32],
                 spark: SparkSession) -> Column:
    """``values`` (a numpy array of 64- or 32-bit integers) as an ARRAY in a scalar
    subquery of a one-row frame: the same values again (a data file and its deletes never
    change) reuse the subquery, sending them to the JVM once a session (about a tenth of a
    second of a merge read's planning); least recently used dropped past
    ``session_cache.CACHED_ARRAY_BYTES``."""
    import hashlib

    import pyarrow as pa

    frames = session_frames(spark)
    digest = hashlib.blake2b(values.tobytes(), digest_size=20).digest() + \
        len(values).to_bytes(8, "little") + str(values.dtype).encode()
    hit = frames.get(digest)
    if hit is not None:
        hold(hit[0])
        return cast("Column", hit[1])
    arrow = pa.int64() if values.dtype.itemsize == 8 else pa.int32()
    scalar = local_frame(spark, pa.table({_BITMAP: pa.array(
        [values], type=pa.list_(arrow))})).scalar()
    frames.put(digest, (values.nbytes, scalar))
    return scalar


def drop_equality_deleted(df: DataFrame, files: Sequence[DataFile],
                          deletes: Sequence[tuple[EqualityDeletes, DataFrame]],
                          column_of: dict[int, str], spark: SparkSession) -> DataFrame:
    """``df`` (with :data:`FILE_NAME_COL`) without the rows an equality delete removes.
    ``deletes`` pairs each delete file with its rows (columns ``__sl_eq_<id>``);
    ``column_of`` names ``df``'s column for each equality field id."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    scope = pa.table({
        FILE_NAME_COL: pa.array([file_name(f) for f in files], pa.string()),
        _SEQ: pa.array([f.data_sequence_number for f in files], pa.int64()),
        _SCOPE: pa.array([f.delete_scope for f in files], pa.string())})
    schema = st.StructType([st.StructField(FILE_NAME_COL, st.StringType(), False),
                            st.StructField(_SEQ, st.LongType(), True),
                            st.StructField(_SCOPE, st.StringType(), True)])
    df = df.join(F.broadcast(local_frame(spark, scope, schema)), FILE_NAME_COL, "left")
    by_ids: dict[tuple[int, ...], list[DataFrame]] = {}
    for eq, rows in deletes:
        cols = [F.col(quote(extra_name(i))) for i in eq.field_ids]
        by_ids.setdefault(tuple(eq.field_ids), []).append(rows.select(
            *cols, F.lit(eq.sequence_number).cast("bigint").alias(_DEL_SEQ),
            F.lit(eq.scope).cast("string").alias(_DEL_SCOPE)))
    for ids, frames in by_ids.items():
        dels = functools.reduce(lambda a, b: a.unionByName(b), frames)
        # the delete's columns renamed apart from the data's, which may share their names
        dels = dels.select(*[F.col(quote(extra_name(i))).alias(f"__sl_d{i}") for i in ids],
                           _DEL_SEQ, _DEL_SCOPE)
        match = functools.reduce(operator.and_, [
            F.col(quote(column_of[i])).eqNullSafe(F.col(f"__sl_d{i}")) for i in ids])
        applies = ((F.col(_SEQ) < F.col(_DEL_SEQ))
                   & (F.col(_DEL_SCOPE).isNull() | (F.col(_DEL_SCOPE) == F.col(_SCOPE))))
        df = df.join(dels, match & applies, "left_anti")
    return df.drop(_SEQ, _SCOPE)
