/*
 * A merge's newer version of a key, one column of it, run by Spark's executors
 * (schemalab.engine.merge.lookup, for "pair" buckets).
 *
 * The newer rows are few; the driver sorted them by key, and a base row's key finds its
 * newer version at the key's rank among the newer keys (which Spark expressions compute
 * from a bitmap). Each column's values are held here in a primitive array (strings and
 * binaries as one byte array and offsets), one broadcast per executor for every column:
 * as arrays in Spark expressions they would go in every task (scalar subqueries), or in a
 * one-row frame joined to every base row.
 *
 * A value goes back to Spark as the external type its converter takes for the column's
 * type: a boxed primitive, a UTF8String (no copy), a byte[], a LocalDate, an Instant, a
 * LocalDateTime, a Decimal.
 *
 * Compiled by Spark's own Janino (schemalab.engine.jvm_udfs): no generics, no lambdas.
 */
package schemalab.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.UTF8String;

public final class NewerValues implements UDF1 {
  private static final long serialVersionUID = 1L;
  /** The kinds of column (schemalab.engine.merge.lookup writes the same numbers). */
  private static final int BOOLEAN = 0;
  private static final int BYTE = 1;
  private static final int SHORT = 2;
  private static final int INT = 3;
  private static final int LONG = 4;
  private static final int FLOAT = 5;
  private static final int DOUBLE = 6;
  private static final int STRING = 7;
  private static final int BINARY = 8;
  private static final int DATE = 9;
  private static final int TIMESTAMP = 10;
  private static final int TIMESTAMP_NTZ = 11;
  private static final int DECIMAL = 12;

  /**
   * One copy per executor: {table name, per column {kind, rows, validity, values, offsets,
   * precision, scale}} (Java's arrays and boxes only: nothing an executor's deserializer
   * must find a class of ours for).
   */
  private final Broadcast data;
  /** The column this instance looks up. */
  private final int index;
  private transient Column column;
  private transient String table;

  /** A column as the executor reads it. */
  private static final class Column {
    final int kind;
    final int rows;
    /** Bit i (little-endian within each byte) set where row i's value is not NULL; null:
     * no NULL. */
    final byte[] valid;
    final Object values;
    /** STRING and BINARY: row i's bytes are values[offsets[i], offsets[i + 1]). */
    final int[] offsets;
    final int precision;
    final int scale;

    Column(Object[] parts) {
      kind = ((Integer) parts[0]).intValue();
      rows = ((Integer) parts[1]).intValue();
      valid = (byte[]) parts[2];
      values = parts[3];
      offsets = (int[]) parts[4];
      precision = ((Integer) parts[5]).intValue();
      scale = ((Integer) parts[6]).intValue();
    }
  }

  /**
   * What schemalab wrote to {@code payload}, a little-endian file: the table's name (its
   * length, then UTF-8), the rows, the columns; per column its kind, precision and scale,
   * whether it holds a NULL (then its validity bits, (rows + 7) / 8 bytes), and its values:
   * rows values of the kind's width (BOOLEAN a byte; DATE an INT of days; TIMESTAMP and
   * TIMESTAMP_NTZ a LONG of microseconds; DECIMAL the unscaled LONG), or for STRING and
   * BINARY rows + 1 INT offsets, then the bytes.
   */
  public NewerValues(JavaSparkContext jsc, String payload) throws IOException {
    ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(Paths.get(payload)))
        .order(ByteOrder.LITTLE_ENDIAN);
    byte[] name = new byte[in.getInt()];
    in.get(name);
    int rows = in.getInt();
    Object[] columns = new Object[in.getInt()];
    for (int c = 0; c < columns.length; c++) {
      columns[c] = read(in, rows);
    }
    data = jsc.broadcast(new Object[] {new String(name, StandardCharsets.UTF_8), columns});
    index = 0;
  }

  private NewerValues(Broadcast data, int index) {
    this.data = data;
    this.index = index;
  }

  /** The same values' column {@code i} (the data is shared, not copied). */
  public NewerValues column(int i) {
    return new NewerValues(data, i);
  }

  private static Object[] read(ByteBuffer in, int rows) {
    int kind = in.getInt();
    int precision = in.getInt();
    int scale = in.getInt();
    byte[] valid = null;
    if (in.getInt() != 0) {
      valid = new byte[(rows + 7) / 8];
      in.get(valid);
    }
    Object values;
    int[] offsets = null;
    if (kind == STRING || kind == BINARY) {
      offsets = new int[rows + 1];
      in.asIntBuffer().get(offsets);
      in.position(in.position() + 4 * (rows + 1));
      byte[] bytes = new byte[offsets[rows]];
      in.get(bytes);
      values = bytes;
    } else if (kind == BOOLEAN || kind == BYTE) {
      byte[] v = new byte[rows];
      in.get(v);
      values = v;
    } else if (kind == SHORT) {
      short[] v = new short[rows];
      in.asShortBuffer().get(v);
      in.position(in.position() + 2 * rows);
      values = v;
    } else if (kind == INT || kind == DATE) {
      int[] v = new int[rows];
      in.asIntBuffer().get(v);
      in.position(in.position() + 4 * rows);
      values = v;
    } else if (kind == LONG || kind == TIMESTAMP || kind == TIMESTAMP_NTZ || kind == DECIMAL) {
      long[] v = new long[rows];
      in.asLongBuffer().get(v);
      in.position(in.position() + 8 * rows);
      values = v;
    } else if (kind == FLOAT) {
      float[] v = new float[rows];
      in.asFloatBuffer().get(v);
      in.position(in.position() + 4 * rows);
      values = v;
    } else if (kind == DOUBLE) {
      double[] v = new double[rows];
      in.asDoubleBuffer().get(v);
      in.position(in.position() + 8 * rows);
      values = v;
    } else {
      throw new IllegalArgumentException("no column of kind " + kind);
    }
    return new Object[] {Integer.valueOf(kind), Integer.valueOf(rows), valid, values, offsets,
        Integer.valueOf(precision), Integer.valueOf(scale)};
  }

  /** The newer version's value at {@code rank} (1-based; an INT), NULL for a NULL rank. */
  public Object call(Object rank) {
    if (rank == null) {
      return null;
    }
    Column c = column;
    if (c == null) {
      Object[] value = (Object[]) data.value();
      table = (String) value[0];
      c = new Column((Object[]) ((Object[]) value[1])[index]);
      column = c;
    }
    int i = ((Number) rank).intValue() - 1;
    if (i < 0 || i >= c.rows) {
      throw new IllegalStateException("Reading " + table + ": no newer version at rank "
          + (i + 1) + " of " + c.rows);
    }
    if (c.valid != null && ((c.valid[i >>> 3] >>> (i & 7)) & 1) == 0) {
      return null;
    }
    switch (c.kind) {
      case BOOLEAN:
        return ((byte[]) c.values)[i] != 0 ? Boolean.TRUE : Boolean.FALSE;
      case BYTE:
        return Byte.valueOf(((byte[]) c.values)[i]);
      case SHORT:
        return Short.valueOf(((short[]) c.values)[i]);
      case INT:
        return Integer.valueOf(((int[]) c.values)[i]);
      case LONG:
        return Long.valueOf(((long[]) c.values)[i]);
      case FLOAT:
        return Float.valueOf(((float[]) c.values)[i]);
      case DOUBLE:
        return Double.valueOf(((double[]) c.values)[i]);
      case STRING:
        return UTF8String.fromBytes((byte[]) c.values, c.offsets[i],
            c.offsets[i + 1] - c.offsets[i]);
      case BINARY:
        return Arrays.copyOfRange((byte[]) c.values, c.offsets[i], c.offsets[i + 1]);
      case DATE:
        return LocalDate.ofEpochDay(((int[]) c.values)[i]);
      case TIMESTAMP: {
        long micros = ((long[]) c.values)[i];
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1000000L),
            Math.floorMod(micros, 1000000L) * 1000L);
      }
      case TIMESTAMP_NTZ: {
        long micros = ((long[]) c.values)[i];
        return LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1000000L),
            (int) (Math.floorMod(micros, 1000000L) * 1000L), ZoneOffset.UTC);
      }
      case DECIMAL:
        return new Decimal().set(((long[]) c.values)[i], c.precision, c.scale);
      default:
        throw new IllegalStateException("Reading " + table + ": no column of kind " + c.kind);
    }
  }
}
