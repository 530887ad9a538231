// Java Iceberg 1.12.0 (the oracle classpath, .oracles/iceberg-1.12.0.classpath) writing a table
// through a REST catalog: create java.NAME (id long, name string), append two Parquet files,
// add column score int, append one more, tag v1 at the first snapshot and branch dev at the
// second. Arguments: REST_URI TABLE_NAME. Prints "DONE <metadata location>".
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;

public class JavaRestWriter {
  public static void main(String[] args) throws Exception {
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new Configuration());
    catalog.initialize("java", Map.of("uri", args[0]));
    Namespace db = Namespace.of("java");
    if (!catalog.namespaceExists(db)) {
      catalog.createNamespace(db);
    }
    Schema schema = new Schema(
        Types.NestedField.required(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()));
    Table table = catalog.createTable(TableIdentifier.of(db, args[1]), schema,
        PartitionSpec.unpartitioned(), Map.of("format-version", "2"));
    append(table, new Object[][] {{1L, "a", null}, {2L, "b", null}});
    append(table, new Object[][] {{3L, "c", null}});
    table.updateSchema().addColumn("score", Types.IntegerType.get()).commit();
    table.refresh();
    append(table, new Object[][] {{4L, "d", 9}});
    table.refresh();
    List<Long> ids = new java.util.ArrayList<>();
    table.snapshots().forEach(s -> ids.add(s.snapshotId()));
    table.manageSnapshots().createTag("v1", ids.get(0)).createBranch("dev", ids.get(1)).commit();
    table.refresh();
    System.out.println("DONE " + ((org.apache.iceberg.HasTableOperations) table)
        .operations().current().metadataFileLocation());
    catalog.close();
  }

  private static void append(Table table, Object[][] rows) throws Exception {
    Schema schema = table.schema();
    String path = table.locationProvider().newDataLocation(UUID.randomUUID() + ".parquet");
    OutputFile out = table.io().newOutputFile(path);
    DataWriter<Record> writer = Parquet.writeData(out)
        .schema(schema)
        .createWriterFunc(GenericParquetWriter::create)
        .overwrite()
        .withSpec(table.spec())
        .build();
    for (Object[] row : rows) {
      GenericRecord r = GenericRecord.create(schema);
      r.setField("id", row[0]);
      r.setField("name", row[1]);
      if (schema.findField("score") != null) {
        r.setField("score", row[2]);
      }
      writer.write(r);
    }
    writer.close();
    DataFile file = writer.toDataFile();
    table.newAppend().appendFile(file).commit();
  }
}
