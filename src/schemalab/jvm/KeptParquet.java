/*
 * schemalab's Parquet format that drops, inside the reader, the rows whose key newer files
 * hold: a merge's `newest` buckets (schemalab.engine.merge.keyed_read), whose base rows
 * stay where no newer file holds their key.
 *
 * Spark's own Parquet format reads each batch of rows (its vectorized reader); this one
 * tests each row's key against a bitmap of the newer keys, in a plain loop over the key's
 * column, and moves the kept rows to the front of every column of the batch. A filter in
 * the plan did the same test in Spark's generated code: there, any filter that drops rows
 * at all costs 0.4-4 ns a row more than one that drops none, whatever it tests
 * (bench/filter_cost.py). At 30M rows (layout a, narrow query) the filter added 0.09-0.16 s
 * to the base's 0.28-0.34 s read; this reader 0.015 s.
 *
 * Everything else is Spark's ParquetFileFormat: the files, the pushed filters, the
 * columns, the vectorized reader and its row fallback. The key's column is read even when
 * the query does not need it (then dropped from each batch or row after the test). A row
 * without a key fails the read; a vector of a kind this class does not know how to move
 * fails it too, naming the type (schemalab.engine.kept_scan checks the types first and
 * uses a filter instead).
 *
 * Compiled by Spark's own Janino when a session first needs it, and shipped to the
 * executors as a jar with SparkContext.addJar (see schemalab.engine.jvm_udfs). Janino knows
 * no generics and no lambdas.
 */
package schemalab.spark;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.CalendarIntervalType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.YearMonthIntervalType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

public final class KeptParquet extends ParquetFileFormat {
  private static final long serialVersionUID = 1L;
  /** how Spark's plans show the format (schemalab.engine.kept_scan.FORMAT_NAME) */
  private static final String NAME = "Parquet, schemalab_kept";

  /** {table name, {lowest key}, the bitmap's 64-bit words}: one copy per executor */
  private final Broadcast data;
  /** the key's column in the scan (its requested name) */
  private final String key;

  /**
   * What schemalab (schemalab.engine.kept_scan) wrote to {@code payload}, a little-endian
   * file: the table's name, the key column's name, the lowest key, the word count and the
   * words (bit i of word w: key lowest + 64 w + i is held by a newer file). A text is its
   * UTF-8 length, then itself.
   */
  public KeptParquet(JavaSparkContext jsc, String payload) throws IOException {
    ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(Paths.get(payload)))
        .order(ByteOrder.LITTLE_ENDIAN);
    String table = text(in);
    key = text(in);
    long lowest = in.getLong();
    long[] words = new long[in.getInt()];
    in.asLongBuffer().get(words);
    data = jsc.broadcast(new Object[] {table, new long[] {lowest}, words});
  }

  private static String text(ByteBuffer in) {
    byte[] bytes = new byte[in.getInt()];
    in.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  public String toString() {
    return NAME;
  }

  /** Spark's ParquetFileFormat equals every other one: a plain scan of the same files must
   * not stand in for this one (a cached or reused plan), nor this one for another's keys. */
  public boolean equals(Object other) {
    return other == this;
  }

  public int hashCode() {
    return System.identityHashCode(this);
  }

  public scala.Function1 buildReaderWithPartitionValues(org.apache.spark.sql.SparkSession s,
      StructType dataSchema, StructType partitionSchema, StructType requiredSchema,
      scala.collection.immutable.Seq filters, scala.collection.immutable.Map options,
      org.apache.hadoop.conf.Configuration conf) {
    String table = (String) ((Object[]) data.value())[0];
    int at = index(requiredSchema, key);
    boolean added = at < 0;
    StructType read = requiredSchema;
    if (added) {
      // the query does not need the key: read it all the same, drop it after the test
      int d = index(dataSchema, key);
      if (d < 0) {
        throw new IllegalStateException("Reading " + table + ": the scan has no key column "
            + key);
      }
      read = requiredSchema.add(dataSchema.fields()[d]);
      at = requiredSchema.fields().length;
    }
    DataType type = read.fields()[at].dataType();
    int width = type instanceof LongType ? 8 : type instanceof IntegerType ? 4
        : type instanceof ShortType ? 2 : type instanceof ByteType ? 1 : 0;
    if (width == 0) {
      throw new IllegalStateException("Reading " + table + ": the key column " + key
          + " is " + type.simpleString() + ", not an integer");
    }
    scala.Function1 inner = super.buildReaderWithPartitionValues(s, dataSchema,
        partitionSchema, read, filters, options, conf);
    StructField[] fields = read.fields();
    StructField[] partitions = partitionSchema.fields();
    DataType[] types = new DataType[fields.length + partitions.length];
    for (int i = 0; i < types.length; i++) {
      types[i] = (i < fields.length ? fields[i] : partitions[i - fields.length]).dataType();
    }
    return new Reader(inner, data, at, width, added, types);
  }

  private static int index(StructType schema, String name) {
    StructField[] fields = schema.fields();
    for (int i = 0; i < fields.length; i++) {
      if (fields[i].name().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  private static long key(ColumnVector keys, int i, int width) {
    if (width == 8) {
      return keys.getLong(i);
    }
    if (width == 2) {
      return keys.getShort(i);
    }
    if (width == 1) {
      return keys.getByte(i);
    }
    return keys.getInt(i);
  }

  /** Each file's rows, those whose key a newer file holds dropped. */
  static final class Reader extends scala.runtime.AbstractFunction1 implements Serializable {
    private static final long serialVersionUID = 1L;
    private final scala.Function1 inner;
    private final Broadcast data;
    private final int at;
    private final int width;
    private final boolean added;
    /** the types of the rows Spark's reader gives (the scan's columns, then partitions) */
    private final DataType[] types;

    Reader(scala.Function1 inner, Broadcast data, int at, int width, boolean added,
        DataType[] types) {
      this.inner = inner;
      this.data = data;
      this.at = at;
      this.width = width;
      this.added = added;
      this.types = types;
    }

    public Object apply(Object file) {
      Object[] value = (Object[]) data.value();
      return new Rows((scala.collection.Iterator) inner.apply(file), (String) value[0],
          ((PartitionedFile) file).filePath().toString(), ((long[]) value[1])[0],
          (long[]) value[2], at, width, added, types);
    }
  }

  /** One file's batches (or rows, where Spark's reader gives rows), kept rows only. */
  static final class Rows extends scala.collection.AbstractIterator {
    private final scala.collection.Iterator inner;
    private final String table;
    private final String path;
    private final long lowest;
    private final long[] words;
    private final int at;
    private final int width;
    private final boolean added;
    private final DataType[] types;
    private int[] kept = new int[0];
    /** the next batch or row to give, once found (without the key where it was added) */
    private Object row;
    private UnsafeProjection project;

    Rows(scala.collection.Iterator inner, String table, String path, long lowest,
        long[] words, int at, int width, boolean added, DataType[] types) {
      this.inner = inner;
      this.table = table;
      this.path = path;
      this.lowest = lowest;
      this.words = words;
      this.at = at;
      this.width = width;
      this.added = added;
      this.types = types;
    }

    public boolean hasNext() {
      if (row != null) {
        return true;
      }
      while (inner.hasNext()) {
        Object next = inner.next();
        if (next instanceof ColumnarBatch) {
          row = batch((ColumnarBatch) next);
          return true;
        }
        InternalRow r = (InternalRow) next;
        if (r.isNullAt(at)) {
          throw noKey();
        }
        long k;
        if (width == 8) {
          k = r.getLong(at);
        } else if (width == 4) {
          k = r.getInt(at);
        } else if (width == 2) {
          k = r.getShort(at);
        } else {
          k = r.getByte(at);
        }
        if (!held(k)) {
          row = added ? projection().apply(r) : r;
          return true;
        }
      }
      return false;
    }

    public Object next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      Object out = row;
      row = null;
      return out;
    }

    private boolean held(long k) {
      long i = k - lowest;
      long w = i >>> 6;
      return i >= 0L && w < words.length && ((words[(int) w] >>> i) & 1L) != 0L;
    }

    private IllegalStateException noKey() {
      return new IllegalStateException("Reading " + table + ": a row of " + path
          + " has no key (NULL)");
    }

    /** Rows without the added key: every column but {@code at}. */
    private UnsafeProjection projection() {
      if (project == null) {
        ArrayList refs = new ArrayList();
        for (int i = 0; i < types.length; i++) {
          if (i != at) {
            refs.add(new BoundReference(i, types[i], true));
          }
        }
        project = UnsafeProjection.create(
            scala.jdk.javaapi.CollectionConverters.asScala(refs).toList());
      }
      return project;
    }

    /** The batch with the kept rows first in every column (and without an added key). */
    private ColumnarBatch batch(ColumnarBatch batch) {
      int n = batch.numRows();
      if (kept.length < n) {
        kept = new int[Math.max(n, 4096)];
      }
      ColumnVector keys = batch.column(at);
      if (keys.hasNull()) {
        for (int i = 0; i < n; i++) {
          if (keys.isNullAt(i)) {
            throw noKey();
          }
        }
      }
      int m = 0;
      long lo = lowest;
      long[] w = words;
      int[] out = kept;
      // a row stays unless its key's bit is set (one loop per key width: no test per row)
      if (width == 4) {
        for (int i = 0; i < n; i++) {
          long k = keys.getInt(i) - lo;
          long word = k >>> 6;
          out[m] = i;
          m += k >= 0L && word < w.length && ((w[(int) word] >>> k) & 1L) != 0L ? 0 : 1;
        }
      } else {
        for (int i = 0; i < n; i++) {
          long k = key(keys, i, width) - lo;
          long word = k >>> 6;
          out[m] = i;
          m += k >= 0L && word < w.length && ((w[(int) word] >>> k) & 1L) != 0L ? 0 : 1;
        }
      }
      if (m < n) {
        for (int c = 0; c < batch.numCols(); c++) {
          if (!(added && c == at)) {
            compact(batch.column(c), out, m, table);
          }
        }
        batch.setNumRows(m);
      }
      if (!added) {
        return batch;
      }
      ColumnVector[] without = new ColumnVector[batch.numCols() - 1];
      for (int c = 0, j = 0; c < batch.numCols(); c++) {
        if (c != at) {
          without[j++] = batch.column(c);
        }
      }
      return new ColumnarBatch(without, batch.numRows());
    }
  }

  /**
   * Moves rows {@code kept[0..m)} of {@code col} to positions 0..m: their NULLs, their
   * values (a dictionary's ids where the vector holds them so), and for nested columns
   * their children's rows (a struct) or their offsets and lengths (an array, a map).
   * A vector that is not one of Spark's writable ones (a constant: a partition's value, a
   * column no file holds) is the same in every row and stays as it is.
   */
  static void compact(ColumnVector vector, int[] kept, int m, String table) {
    if (!(vector instanceof WritableColumnVector)) {
      return;
    }
    WritableColumnVector col = (WritableColumnVector) vector;
    if (col.isAllNull()) {
      return;  // NULL in every row (a column the file lacks)
    }
    if (col.hasNull()) {
      for (int j = 0; j < m; j++) {
        if (col.isNullAt(kept[j])) {
          col.putNull(j);
        } else {
          col.putNotNull(j);
        }
      }
    }
    DataType t = col.dataType();
    if (col.hasDictionary()) {
      ints(col.getDictionaryIds(), kept, m);
    } else if (t instanceof StructType || t instanceof CalendarIntervalType
        || "variant".equals(t.typeName())) {
      int children = t instanceof StructType ? ((StructType) t).fields().length
          : t instanceof CalendarIntervalType ? 3 : 2;
      for (int c = 0; c < children; c++) {
        compact(col.getChild(c), kept, m, table);
      }
    } else if (t instanceof ArrayType || t instanceof MapType || t instanceof StringType
        || t instanceof BinaryType
        || (t instanceof DecimalType && ((DecimalType) t).precision() > 18)) {
      for (int j = 0; j < m; j++) {
        int i = kept[j];
        col.putArray(j, col.getArrayOffset(i), col.getArrayLength(i));
      }
    } else if (t instanceof IntegerType || t instanceof DateType
        || t instanceof YearMonthIntervalType
        || (t instanceof DecimalType && ((DecimalType) t).precision() <= 9)) {
      ints(col, kept, m);
    } else if (t instanceof LongType || t instanceof TimestampType
        || t instanceof TimestampNTZType || t instanceof DayTimeIntervalType
        || t instanceof DecimalType) {
      for (int j = 0; j < m; j++) {
        col.putLong(j, col.getLong(kept[j]));
      }
    } else if (t instanceof DoubleType) {
      for (int j = 0; j < m; j++) {
        col.putDouble(j, col.getDouble(kept[j]));
      }
    } else if (t instanceof FloatType) {
      for (int j = 0; j < m; j++) {
        col.putFloat(j, col.getFloat(kept[j]));
      }
    } else if (t instanceof ShortType) {
      for (int j = 0; j < m; j++) {
        col.putShort(j, col.getShort(kept[j]));
      }
    } else if (t instanceof ByteType) {
      for (int j = 0; j < m; j++) {
        col.putByte(j, col.getByte(kept[j]));
      }
    } else if (t instanceof BooleanType) {
      for (int j = 0; j < m; j++) {
        col.putBoolean(j, col.getBoolean(kept[j]));
      }
    } else if (!(t instanceof NullType)) {
      throw new UnsupportedOperationException("Reading " + table + ": schemalab's reader "
          + "cannot drop rows of a " + t.simpleString() + " column");
    }
  }

  private static void ints(WritableColumnVector col, int[] kept, int m) {
    for (int j = 0; j < m; j++) {
      col.putInt(j, col.getInt(kept[j]));
    }
  }
}
