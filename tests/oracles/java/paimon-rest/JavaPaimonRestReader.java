// Java Paimon 2.0.0 (the oracle classpath, .oracles/paimon-2.0.0.classpath) reading tables
// through Paimon's REST catalog at every snapshot. Arguments: URI WAREHOUSE TOKEN TABLE...
// (db.t). Prints per table "TABLE <name>", then per snapshot (oldest first) "SNAPSHOT <id>
// <schemaId> <commitKind>" and one "ROW v1|v2|..." line per row of the snapshot read with
// its own schema (String.valueOf of each top-level field, "null" for NULL), then "SCHEMA
// <latest schema's column names, comma-separated>".
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.RowType;

public class JavaPaimonRestReader {
  public static void main(String[] args) throws Exception {
    Options options = new Options();
    options.set("metastore", "rest");
    options.set("uri", args[0]);
    options.set("warehouse", args[1]);
    options.set("token.provider", "bear");
    options.set("token", args[2]);
    try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options))) {
      for (int a = 3; a < args.length; a++) {
        FileStoreTable table = (FileStoreTable) catalog.getTable(Identifier.fromString(args[a]));
        System.out.println("TABLE " + args[a]);
        List<Snapshot> snapshots = new ArrayList<>();
        Iterator<Snapshot> it = table.snapshotManager().snapshots();
        it.forEachRemaining(snapshots::add);
        for (Snapshot s : snapshots) {
          System.out.println("SNAPSHOT " + s.id() + " " + s.schemaId() + " " + s.commitKind());
          FileStoreTable at = table.copy(
              Collections.singletonMap("scan.snapshot-id", String.valueOf(s.id())));
          print(at);
        }
        StringBuilder cols = new StringBuilder("SCHEMA ");
        for (DataField f : table.schema().fields()) {
          cols.append(cols.length() > 7 ? "," : "").append(f.name());
        }
        System.out.println(cols);
      }
    }
  }

  private static void print(FileStoreTable table) throws Exception {
    RowType type = table.rowType();
    List<InternalRow.FieldGetter> getters = new ArrayList<>();
    for (int i = 0; i < type.getFieldCount(); i++) {
      getters.add(InternalRow.createFieldGetter(type.getTypeAt(i), i));
    }
    ReadBuilder rb = table.newReadBuilder();
    try (RecordReader<InternalRow> reader =
        rb.newRead().createReader(rb.newScan().plan().splits())) {
      reader.forEachRemaining(row -> {
        StringBuilder line = new StringBuilder("ROW ");
        for (int i = 0; i < getters.size(); i++) {
          line.append(i == 0 ? "" : "|").append(String.valueOf(getters.get(i).getFieldOrNull(row)));
        }
        System.out.println(line);
      });
    }
  }
}
