// Java Iceberg 1.12.0 (the oracle classpath, .oracles/iceberg-1.12.0.classpath) reading a table
// through a REST catalog at every snapshot, with its generic Parquet reader. Arguments:
// REST_URI TABLE_NAME (db.t). Prints, per snapshot in the table's order, "SNAPSHOT <id>"
// then one "ROW v1|v2|..." line per record (String.valueOf of each top-level field of the
// snapshot's schema), then "SCHEMA <current schema's column names, comma-separated>".
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;

public class JavaRestReader {
  public static void main(String[] args) throws Exception {
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new Configuration());
    catalog.initialize("java", Map.of("uri", args[0]));
    Table table = catalog.loadTable(TableIdentifier.parse(args[1]));
    for (Snapshot s : table.snapshots()) {
      System.out.println("SNAPSHOT " + s.snapshotId());
      try (CloseableIterable<Record> rows =
          IcebergGenerics.read(table).useSnapshot(s.snapshotId()).build()) {
        for (Record r : rows) {
          StringBuilder line = new StringBuilder("ROW ");
          for (int i = 0; i < r.size(); i++) {
            line.append(i == 0 ? "" : "|").append(String.valueOf(r.get(i)));
          }
          System.out.println(line);
        }
      }
    }
    System.out.println("SCHEMA " + table.schema().columns().stream()
        .map(Types.NestedField::name).collect(Collectors.joining(",")));
    catalog.close();
  }
}
