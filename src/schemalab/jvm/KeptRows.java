/*
 * schemalab's filter of the rows a read keeps, run by Spark's executors.
 *
 * Two kinds of test, one per filter:
 *  - by position: each file's deleted rows as a bitmap of their positions (deletion vectors,
 *    position deletes, rows a merge found superseded); the row's position comes from the
 *    reader's row-index column;
 *  - by key (a merge's superseded rows, schemalab.engine.merge.superseded): each key's
 *    winning run, a byte per key over the key span, and each file's run; a row is kept
 *    where its key's winning run is its file's.
 * Either way the file is the scan's current input file (as input_file_name() gives it),
 * asked once per file. A filter written in Spark expressions must find each row's file
 * through the _metadata struct, which Spark builds for every row.
 *
 * Compiled by Spark's own Janino when a session first needs it (no JDK, no build step), and
 * shipped to the executors as a jar with SparkContext.addJar. Janino knows no generics, so
 * UDF1 is implemented as erased (call(Object)), and no lambdas.
 */
package schemalab.spark;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.InputFileBlockHolder;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.unsafe.types.UTF8String;

public final class KeptRows implements UDF1 {
  private static final long serialVersionUID = 2L;
  private static final int BY_POSITION = 0;
  private static final int BY_KEY = 1;

  /**
   * One copy per executor: {table name, kind, file names, per file its words (by position)
   * or its run (by key), and by key the key span's first key and each domain's winning runs
   * with each file's domain}.
   */
  private final Broadcast data;
  private final int kind;

  private transient HashMap byName;
  /** The file being read and what tests its rows, in one object: read and replaced whole. */
  private transient Current current;

  private static final class Current {
    final UTF8String path;
    final long[] words;
    final byte run;
    final byte[] winners;
    final long first;

    Current(UTF8String path, long[] words, byte run, byte[] winners, long first) {
      this.path = path;
      this.words = words;
      this.run = run;
      this.winners = winners;
      this.first = first;
    }
  }

  /**
   * What schemalab (schemalab.engine.kept_rows) wrote to {@code payload}, a little-endian
   * file: the table's name, the kind, the file count; by position per file its name and
   * words; by key the first key, the domains (each a length and its bytes), then per file
   * its name, domain and run. A text or array is its length (bytes or words), then itself.
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
      long first = in.getLong();
      byte[][] domains = new byte[in.getInt()][];
      for (int d = 0; d < domains.length; d++) {
        domains[d] = new byte[in.getInt()];
        in.get(domains[d]);
      }
      int[] domainOf = new int[files];
      byte[] runOf = new byte[files];
      for (int f = 0; f < files; f++) {
        names[f] = text(in);
        domainOf[f] = in.getInt();
        runOf[f] = (byte) in.getInt();
      }
      value = new Object[] {table, names, Long.valueOf(first), domains, domainOf, runOf};
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
   * Whether the row is kept: {@code value} (a Long) is its position in its file, or its
   * key.
   */
  public Object call(Object value) {
    // the same UTF8String for every row of a file: compared by reference
    UTF8String path = InputFileBlockHolder.getInputFilePath();
    Current file = current;
    if (file == null || file.path != path) {
      file = open(path);
      current = file;
    }
    if (value == null) {
      throw new IllegalStateException("Reading " + table() + ": a row of " + path + " has no "
          + (kind == BY_POSITION ? "position from Spark's reader" : "key"));
    }
    long v = ((Long) value).longValue();
    if (kind == BY_KEY) {
      long k = v - file.first;
      if (k < 0 || k >= file.winners.length) {
        throw new IllegalStateException("Reading " + table() + ": " + path + " holds key "
            + v + ", which the driver did not read in it; the file changed under the read");
      }
      return file.winners[(int) k] == file.run ? Boolean.TRUE : Boolean.FALSE;
    }
    long word = v >>> 6;
    // a row past the bitmap's end (a file holding more rows than its manifest says) stays
    if (word >= file.words.length) {
      return Boolean.TRUE;
    }
    return ((file.words[(int) word] >>> (v & 63)) & 1L) == 0L ? Boolean.TRUE : Boolean.FALSE;
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
      return new Current(path, ((long[][]) value[2])[i], (byte) 0, null, 0L);
    }
    byte[][] domains = (byte[][]) value[3];
    return new Current(path, null, ((byte[]) value[5])[i], domains[((int[]) value[4])[i]],
        ((Long) value[2]).longValue());
  }
}
