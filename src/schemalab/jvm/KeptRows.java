/*
 * schemalab's filter of the rows a read keeps, run by Spark's executors.
 *
 * Two kinds of test, one per filter:
 *  - by position: each file's deleted rows as a bitmap of their positions (deletion vectors,
 *    position deletes, rows a merge found superseded); the row's position comes from the
 *    reader's row-index column;
 *  - by key (a merge's superseded rows, schemalab.engine.merge.superseded): each file's keys
 *    increase, and the driver sends per file its lowest and highest key and the keys it
 *    keeps or those it drops (whichever are fewer), in order. Each row's key is met by a
 *    cursor walking that list forward, so the test reads memory in order (a byte per key of
 *    the whole key span, 10 MB looked up out of order, took 0.08 s more per 10M rows).
 * Either way the file is the scan's current input file (as input_file_name() gives it),
 * asked once per file. A filter written in Spark expressions must find each row's file
 * through the _metadata struct, which Spark builds for every row.
 *
 * The filter is a LongPredicate, not a UDF: schemalab.engine.jvm_udfs.predicate puts it in
 * the plan as a Catalyst Invoke of test(long), whose generated code passes the primitive
 * value and takes the primitive result. A UDF, with its boxed Long and Boolean per row and
 * its converters, took 0.01-0.06 s more per 10M rows (deduplicate, layout c, narrow query,
 * three runs).
 * Spark's plans show the filter by this object's toString.
 *
 * Compiled by Spark's own Janino when a session first needs it (no JDK, no build step), and
 * shipped to the executors as a jar with SparkContext.addJar. Janino knows no generics and
 * no lambdas.
 */
package schemalab.spark;

import java.io.IOException;
import java.io.Serializable;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashMap;
import java.util.function.LongPredicate;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.unsafe.types.UTF8String;

public final class KeptRows implements LongPredicate, Serializable {
  private static final long serialVersionUID = 4L;
  /** how Spark's plans show the filter (schemalab.engine.kept_rows.FILTER_NAME) */
  private static final String NAME = "schemalab_kept_rows";
  private static final int BY_POSITION = 0;
  private static final int BY_KEY = 1;

  /**
   * One copy per executor: {table name, file names, per file its words} by position; by key
   * {table name, file names, per file its lowest key, its highest key, whether its listed
   * keys are the kept ones, and its listed keys as offsets from its lowest}.
   */
  private final Broadcast data;
  private final int kind;

  private transient HashMap byName;
  /**
   * The file being read and what tests its rows, in one object: replaced whole when the
   * file changes; by key, its cursor moves on with the rows.
   */
  private transient Current current;

  private static final class Current {
    final UTF8String path;
    final long[] words;
    final long lowest;
    final long highest;
    final boolean listedKept;
    final int[] listed;
    /** by key: the first listed key not below the last row's, and that row's offset */
    int at;
    long last = -1L;

    Current(UTF8String path, long[] words, long lowest, long highest, boolean listedKept,
        int[] listed) {
      this.path = path;
      this.words = words;
      this.lowest = lowest;
      this.highest = highest;
      this.listedKept = listedKept;
      this.listed = listed;
    }
  }

  /**
   * What schemalab (schemalab.engine.kept_rows) wrote to {@code payload}, a little-endian
   * file: the table's name, the kind, the file count, then per file its name and by
   * position its words; by key its lowest and highest key, whether the listed keys are
   * kept (1) or dropped (0), and the listed keys (INTs, offsets from the lowest, in
   * increasing order). A text or array is its length (bytes or items), then itself.
   */
  public KeptRows(JavaSparkContext jsc, String payload) throws IOException {
    ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(Paths.get(payload)))
        .order(ByteOrder.LITTLE_ENDIAN);
    String table = text(in);
    kind = in.getInt();
    int files = in.getInt();
    String[] names = new String[files];
    Object[] value;
    if (kind == BY_POSITION) {
      long[][] words = new long[files][];
      for (int f = 0; f < files; f++) {
        names[f] = text(in);
        words[f] = new long[in.getInt()];
        in.asLongBuffer().get(words[f]);
        in.position(in.position() + 8 * words[f].length);
      }
      value = new Object[] {table, names, words};
    } else if (kind == BY_KEY) {
      long[] lowest = new long[files];
      long[] highest = new long[files];
      boolean[] listedKept = new boolean[files];
      int[][] listed = new int[files][];
      for (int f = 0; f < files; f++) {
        names[f] = text(in);
        lowest[f] = in.getLong();
        highest[f] = in.getLong();
        listedKept[f] = in.getInt() != 0;
        listed[f] = new int[in.getInt()];
        in.asIntBuffer().get(listed[f]);
        in.position(in.position() + 4 * listed[f].length);
      }
      value = new Object[] {table, names, lowest, highest, listedKept, listed};
    } else {
      throw new IllegalArgumentException("Reading " + table + ": no filter of kind " + kind);
    }
    data = jsc.broadcast(value);
  }

  private static String text(ByteBuffer in) {
    byte[] bytes = new byte[in.getInt()];
    in.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * Whether the row is kept: {@code v} is its position in its file, or its key (never
   * NULL: schemalab's expression fails the read on a NULL before it is tested).
   */
  public boolean test(long v) {
    // the same UTF8String for every row of a file: compared by reference
    UTF8String path = InputFileBlockHolder.getInputFilePath();
    Current file = current;
    if (file == null || file.path != path) {
      file = open(path);
      current = file;
    }
    if (kind == BY_KEY) {
      if (v < file.lowest || v > file.highest) {
        throw new IllegalStateException("Reading " + table() + ": " + path + " holds key "
            + v + ", which the driver did not read in it; the file changed under the read");
      }
      long k = v - file.lowest;
      int[] listed = file.listed;
      int i = file.at;
      if (k < file.last) {
        // a key below the last row's: another split of the file, read after a later one
        i = Arrays.binarySearch(listed, (int) k);
        i = i < 0 ? -i - 1 : i;
      }
      while (i < listed.length && listed[i] < k) {
        i++;
      }
      file.at = i;
      file.last = k;
      return (i < listed.length && listed[i] == k) == file.listedKept;
    }
    long word = v >>> 6;
    // a row past the bitmap's end (a file holding more rows than its manifest says) stays
    if (word >= file.words.length) {
      return true;
    }
    return ((file.words[(int) word] >>> (v & 63)) & 1L) == 0L;
  }

  public String toString() {
    return NAME;
  }

  private Object[] values() {
    return (Object[]) data.value();
  }

  private String table() {
    return (String) values()[0];
  }

  private Current open(UTF8String path) {
    Object[] value = values();
    HashMap files = byName;
    if (files == null) {
      String[] names = (String[]) value[1];
      files = new HashMap(names.length * 2);
      for (int f = 0; f < names.length; f++) {
        files.put(names[f], Integer.valueOf(f));
      }
      byName = files;
    }
    String full = path.toString();
    if (full.isEmpty()) {
      throw new IllegalStateException("Reading " + table() + ": Spark gave no input file "
          + "for a row the filter tests");
    }
    // the name Spark reports is URI-encoded (a '+' is a '+', not a space)
    String name = full.substring(full.lastIndexOf('/') + 1);
    if (name.indexOf('%') >= 0) {
      name = URLDecoder.decode(name.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
    Integer f = (Integer) files.get(name);
    if (f == null) {
      throw new IllegalStateException("Reading " + table() + ": the scan read " + full
          + ", which is none of the files the filter tests");
    }
    int i = f.intValue();
    if (kind == BY_POSITION) {
      return new Current(path, ((long[][]) value[2])[i], 0L, 0L, false, null);
    }
    return new Current(path, null, ((long[]) value[2])[i], ((long[]) value[3])[i],
        ((boolean[]) value[4])[i], ((int[][]) value[5])[i]);
  }
}
