"""The rule ids an error can carry: one list, each id with what it means and the engine rule
it follows (Paimon, Iceberg or Spark), or ``schemalab`` where the limit is schemalab's own.

The ids are the public identifiers: a notebook or a script tests ``error.rule``, the CLI
prints ``rule: <id>``. The README's errors section is :func:`readme_table`; a test keeps the
two, and the ids written in the code, in step. Under ``SCHEMALAB_TEST`` an error built with
an id missing here fails at once (see :class:`schemalab.errors.SchemaLabError`).

>>> RULES["column-must-exist"].follows
"Paimon SchemaManager (ColumnNotExistException); Spark's UNRESOLVED_COLUMN"
>>> is_known("no-such-rule")
False
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One rule id: ``meaning`` says what was refused, ``follows`` whose rule it is."""

    id: str
    meaning: str
    follows: str


_SM = "Paimon SchemaManager"
_SV = "Paimon SchemaValidation"
_ICEBERG = "Iceberg table spec"
_OWN = "schemalab"

_ALL = (
    # --- SQL text --------------------------------------------------------------------------
    Rule("sql-syntax", "The SQL text cannot be parsed (or is empty, several statements where "
         "one is expected, nested too deeply).", "Spark SQL grammar"),
    Rule("unsupported-sql", "A clause or form schemalab's SQL does not run (catalogs, INSERT "
         "options, DELETE aliases, ...); the message says what to write instead.", _OWN),
    Rule("unsupported-statement", "A statement or CALL procedure schemalab does not run.",
         _OWN),
    Rule("unknown-type", "A type name or JSON type node that is not a Paimon type.",
         "Paimon DataTypes / Spark type syntax"),
    Rule("unsupported-type", "A Paimon type schemalab does not read or write yet (VARIANT, "
         "BLOB, VECTOR, ...).", _OWN),
    Rule("internal-error", "A bug in schemalab: anything that is not one of the rules here; "
         "please report it with the statement.", _OWN),
    # --- tables and identifiers -------------------------------------------------------------
    Rule("table-must-exist", "The table (or its schema/ or Iceberg metadata/ directory) does "
         "not exist.", "Spark TABLE_OR_VIEW_NOT_FOUND"),
    Rule("table-must-be-new", "CREATE TABLE or RENAME TO of a name that is taken.",
         "Spark TABLE_OR_VIEW_ALREADY_EXISTS"),
    Rule("valid-identifier", "A database or table name that is empty, has a character Paimon "
         "paths cannot hold, or would leave the warehouse.", "Paimon Identifier"),
    Rule("valid-ref-name", "A branch or tag name that is empty, too long, or has a character "
         "that could name another path ('/', '..', '$', control characters).",
         "Paimon BranchManager / TagManager"),
    Rule("tag-must-be-new", "CALL sys.create_tag (Paimon) or ALTER TABLE .. CREATE TAG "
         "(Iceberg) of a name the table has.",
         "Paimon TagManager.createTag; Iceberg UpdateSnapshotReferencesOperation"),
    Rule("branch-must-be-new", "CALL sys.create_branch (Paimon) or ALTER TABLE .. CREATE "
         "BRANCH (Iceberg) of a name the table has.",
         "Paimon FileSystemBranchManager.validateBranch; Iceberg "
         "UpdateSnapshotReferencesOperation"),
    Rule("main-branch-is-fixed", "Creating, deleting or fast-forwarding the branch 'main'.",
         "Paimon BranchManager.validateBranch / fastForwardValidate"),
    Rule("fast-forward-needs-descendant", "CALL sys.fast_forward of a branch without snapshots "
         "or whose history does not hold main's head (it would drop main's snapshots).",
         "Paimon FileSystemBranchManager.fastForward; schemalab (the descendant check)"),
    Rule("file-schema-rewritten", "A data file whose columns are not those of the schema "
         "file its schema id names (a fast-forward rewrote the history).", _OWN),
    Rule("procedure-arguments", "A CALL of a tag, branch, rollback or expire procedure with "
         "an argument missing, unknown or malformed.", "Paimon's Spark procedures"),
    Rule("ref-must-exist", "A branch or tag name the table does not have (the message lists "
         "those it has).", "Paimon BranchManager / TagManager; Iceberg SnapshotRef"),
    Rule("one-read-target", "A read given both a snapshot id and a branch or tag.",
         "Spark time travel (one of VERSION AS OF / TIMESTAMP AS OF)"),
    Rule("stepper-formats", "An ALTER stepper asked for formats other than distinct names of "
         "'paimon' and 'iceberg'.", _OWN),
    Rule("rename-needs-local-disk", "RENAME of a table on an object store (no atomic rename).",
         _OWN),
    Rule("schema-must-exist", "A schema id the table does not have.",
         "Paimon SchemaManager / Iceberg TableMetadata"),
    Rule("snapshot-must-exist", "A snapshot id the table does not have.",
         "Paimon SnapshotManager / Iceberg TableMetadata"),
    Rule("snapshot-as-of-time", "TIMESTAMP AS OF a time before the table's first snapshot "
         "(or of a table without snapshots).", "Paimon StaticFromTimestampStartingScanner; "
         "Iceberg SnapshotUtil.snapshotIdAsOfTime"),
    Rule("time-travel-timestamp", "A TIMESTAMP AS OF expression Spark cannot fold to one "
         "timestamp: a column, subquery, aggregate, non-deterministic function, or a value "
         "that does not cast to TIMESTAMP.", "Spark TimeTravelSpec "
         "(INVALID_TIME_TRAVEL_TIMESTAMP_EXPR)"),
    Rule("field-must-exist", "A field (name or id) the table never had.", _OWN),
    Rule("unknown-system-table", "A system table ($snapshots, $files, ...) the format does "
         "not have or schemalab does not read.", "Paimon / Iceberg system tables"),
    Rule("checkpoint-restorable", "A checkpoint that cannot be restored exactly: a file it "
         "needs changed or vanished outside schemalab; nothing was changed.", _OWN),
    Rule("checkpoint-of-this-warehouse", "A checkpoint token taken on another warehouse (or "
         "released) given to restore.", _OWN),
    Rule("spark-packages", "A Spark package (e.g. hadoop-aws for s3a://) could not be "
         "fetched from Maven Central into the Ivy cache when the session started.",
         "Spark spark.jars.packages"),
    Rule("system-table-time-travel", "A system table listing the whole history, read as of "
         "a snapshot.", "Iceberg metadata tables"),
    Rule("read-schema", "The schema= of a read is not 'snapshot', 'current' or a schema id.",
         _OWN),
    Rule("file-format", "A Paimon data file in a format other than Parquet, ORC or Avro.",
         "Paimon CoreOptions file.format"),
    Rule("unsupported-feature", "A table feature (deletion vectors of a newer layout, row "
         "tracking, blob fields, ...) schemalab cannot read or maintain: refused, never "
         "ignored.", _OWN),
    Rule("row-id-ranges", "A data-evolution table whose files of one row-id range do not all "
         "cover the same row ids (they cannot be merged column by column).",
         "Paimon DataEvolutionSplitRead (mergeRangesAndSort)"),
    Rule("row-id-read", "Row ids (_ROW_ID, a data-evolution merge) read from a file Spark "
         "cannot give row positions for (Avro, ORC with deletes).", _OWN),
    Rule("row-tracking-columns", "_ROW_ID or _SEQUENCE_NUMBER read from a table without row "
         "tracking (row-tracking.enabled).", "Paimon SpecialFields / row tracking"),
    Rule("corrupt-file", "A metadata or data file that cannot be parsed, or whose format "
         "version is not one schemalab understands.", "Paimon / Iceberg file formats"),
    # --- schema changes (CREATE / ALTER) -----------------------------------------------------
    Rule("column-must-exist", "A column (or nested field) that the table or the read does "
         "not have.", f"{_SM} (ColumnNotExistException); Spark's UNRESOLVED_COLUMN"),
    Rule("column-must-be-new", "ADD COLUMN or RENAME TO a name the table has.",
         f"{_SM} (ColumnAlreadyExistException)"),
    Rule("blob-column-rename", "RENAME of a BLOB column (its .blob files name it by name).",
         f"{_SM} assertNotRenamingBlobColumn"),
    Rule("added-column-must-be-nullable", "ADD COLUMN .. NOT NULL.", f"{_SM} addColumn"),
    Rule("partition-keys-immutable", "Rename or change the type of a partition column.",
         f"{_SM} renameColumn / updateColumnType"),
    Rule("primary-keys-immutable", "Change the type or nullability of a primary-key column.",
         f"{_SM} updateColumnType / updateColumnNullability"),
    Rule("keys-cannot-be-dropped", "DROP COLUMN of a partition or primary-key column.",
         f"{_SM} dropColumn"),
    Rule("table-needs-a-column", "A table without columns (CREATE with none, DROP of the "
         "last).", f"{_SM} dropColumn"),
    Rule("move-needs-another-column", "FIRST / AFTER that moves a column relative to itself.",
         f"{_SM} applyMove"),
    Rule("nullable-to-not-null", "SET NOT NULL on a nullable column while "
         "'alter-column-null-to-not-null.disabled' is true (the default).",
         f"{_SM} assertNullabilityChange"),
    Rule("type-change", "A column type change that could lose information (or an explicit "
         "cast under cast.mode = implicit).", "Paimon DataTypeCasts.supportsCompatibleCast"),
    Rule("unique-column-names", "Two columns (or two fields of one ROW) with the same name.",
         "Paimon TableSchema / RowType"),
    Rule("unique-key-columns", "A primary or partition key naming one column twice.",
         "Paimon Schema"),
    Rule("keys-must-exist", "A primary or partition key naming a column the table does not "
         "have.", "Paimon Schema"),
    Rule("partition-keys-must-be-columns", "PARTITIONED BY a name that is not a column "
         "(and has no type that would add one).", "Spark CREATE TABLE"),
    Rule("keys-defined-once", "A primary or partition key given both in the DDL and in the "
         "table options, differently.", "Paimon Schema"),
    Rule("primary-keys-not-null", "A nullable primary-key column.", "Paimon Schema"),
    Rule("unique-field-ids", "Two fields with one field id.", "Paimon TableSchema"),
    Rule("highest-field-id", "A field id above the schema's highestFieldId.",
         "Paimon TableSchema"),
    Rule("immutable-option", "SET or RESET of an option Paimon does not let change ('type', "
         "keys, and bucket-layout options once the table has data).",
         f"{_SM} checkAlterTableOption / checkResetTableOption"),
    Rule("bucket-is-integer", "A 'bucket' value that is not -1, -2 or a positive integer.",
         f"{_SM} checkAlterTableOption"),
    Rule("bucket-mode-fixed", "Changing or resetting 'bucket' between -1 and fixed buckets "
         "once the table has data.", f"{_SM} checkAlterTableOption / checkResetTableOption"),
    Rule("option-value", "A table option that must be an integer and is not (in a schema "
         "another writer made).", "Paimon CoreOptions (option types)"),
    Rule("cast-mode", "A 'cast.mode' value that is not one of schemalab's read modes.", _OWN),
    Rule("unsupported-change", "A schema change value apply_changes does not know.", _OWN),
    Rule("default-value", "A column default that is not a literal of the column's type.",
         "Paimon 1.2+ SchemaManager (updateColumnDefaultValue)"),
    Rule("change-value", "A schema change or column built in Python whose fields hold the "
         "wrong types (a type name as text where a DataType goes, an empty path, ...).",
         _OWN),
    Rule("primary-key-partition", "A primary key that does not include every partition key, "
         "or equals the partition keys.", "Paimon TableSchema.trimmedPrimaryKeys"),
    # --- writes ------------------------------------------------------------------------------
    Rule("insert-arity", "An INSERT whose rows do not give one value per named column.",
         "Spark INSERT_COLUMN_ARITY_MISMATCH"),
    Rule("insert-cast", "An inserted value the column's type cannot hold.",
         "Spark ANSI store assignment (CAST_OVERFLOW, CAST_INVALID_INPUT)"),
    Rule("not-null", "NULL (or no value) for a NOT NULL column.",
         "Paimon NOT NULL write check; Spark NOT_NULL_ASSERT_VIOLATION"),
    Rule("vector-length", "A VECTOR value whose number of elements is not the declared "
         "length.", "Paimon ParquetRowDataWriter (Vector length mismatch)"),
    Rule("vector-element-not-null", "A VECTOR value with a NULL element.",
         "Paimon BinaryVector (refuses null elements)"),
    Rule("case-insensitive-names", "Two columns that differ only in case, written by a "
         "case-insensitive Spark session.", "Spark spark.sql.caseSensitive"),
    Rule("bucket", "A 'bucket' option that is 0 or below -2 on write.", "Paimon CoreOptions"),
    Rule("bucket-key", "Fixed buckets without a bucket key, or a bucket key that is not a "
         "column.", f"{_SV} validateBucket"),
    Rule("bucket-key-type", "A bucket key type whose Paimon hash schemalab does not compute "
         "on Spark.", _OWN),
    Rule("primary-key-bucket", "A primary-key table with dynamic or postpone buckets "
         "(schemalab writes fixed buckets only).", _OWN),
    Rule("primary-key-sequence-conflict", "Another commit wrote higher sequence numbers to "
         "a bucket this write also wrote; nothing of it is visible.",
         "Paimon FileStoreCommit conflict check"),
    Rule("delete-needs-primary-key", "DELETE FROM an append table.",
         "Paimon DeleteFromPaimonTableCommand"),
    Rule("commit-conflict", "A commit lost every race to other writers and gave up.",
         "Paimon FileStoreCommit / SchemaManager retries"),
    Rule("atomic-commit", "A write to a store without an atomic create-if-absent (or S3 "
         "without boto3).", "Paimon FileIO.tryToWriteAtomic"),
    Rule("store-unavailable", "A store URI pyarrow cannot open.", _OWN),
    Rule("spark-store", "A Spark session without a file system for the warehouse's scheme.",
         "Spark / Hadoop FileSystem"),
    # --- merge engines (primary-key tables) --------------------------------------------------
    Rule("merge-engine", "An unknown 'merge-engine'.", "Paimon CoreOptions.MergeEngine"),
    Rule("merge-options", "A merge option that is not 'true' or 'false', or otherwise "
         "malformed.", "Paimon CoreOptions"),
    Rule("sequence.field", "A 'sequence.field' that is missing, repeated, aggregated, used "
         "with first-row, or has a bad sort order.", f"{_SV} validateSequenceField"),
    Rule("rowkind.field", "A 'rowkind.field' that is not a column.", f"{_SV}"),
    Rule("sequence-group", "A partial-update sequence group naming a missing column or a "
         "column of another group.", "Paimon PartialUpdateMergeFunction"),
    Rule("aggregate-function", "An aggregate function that is unknown, removed, not merged "
         "by schemalab, wrong for the column's type, or used without a sequence group.",
         "Paimon FieldAggregatorFactory"),
    # --- reads and explanations --------------------------------------------------------------
    Rule("delete-position", "A deletion vector or position delete naming a row past the end "
         "of its data file.", "Paimon deletion vectors / Iceberg position deletes"),
    Rule("primary-key", "explain_read(key=...) on a table without a primary key, or a key "
         "that does not give every primary-key column.", _OWN),
    Rule("why-merge-engine", "why() on a table whose merge engine assembles a row from "
         "several versions.", _OWN),
    Rule("where-condition", "A where= condition Spark cannot apply to the read.",
         "Spark SQL expressions"),
    Rule("iceberg-file-format", "An Iceberg data file in a format schemalab does not read.",
         _ICEBERG),
    Rule("iceberg-name-mapping", "Iceberg data files without field ids and no usable "
         "'schema.name-mapping.default'.", f"{_ICEBERG} (column projection)"),
    Rule("iceberg-equality-deletes", "An Iceberg equality delete on a nested field.", _OWN),
    Rule("iceberg-deletion-vectors", "More than one Iceberg deletion vector for one data "
         "file.", f"{_ICEBERG} v3"),
    # --- writing Iceberg tables --------------------------------------------------------------
    Rule("iceberg-format-version", "A 'format-version' other than 1, 2 or 3, or a downgrade.",
         "Iceberg TableMetadata"),
    Rule("iceberg-type-unsupported", "A column type schemalab does not write to Iceberg "
         "tables (TIME, VARIANT, nanosecond timestamps before v3 ...).", _OWN),
    Rule("iceberg-partition-transform", "A partition transform Iceberg does not allow on the "
         "source column's type (or schemalab does not compute on Spark), or a redundant "
         "one.", "Iceberg Transforms / PartitionSpec"),
    Rule("iceberg-schema-update", "A schema change Iceberg refuses: a missing column, a name "
         "taken, a required column without default, a type change that is no promotion, "
         "optional → required, dropping an identifier field.",
         "Iceberg SchemaUpdate / TypeUtil.isPromotionAllowed"),
    Rule("iceberg-source-column-in-use", "Dropping a column the current partition spec or "
         "sort order is built on.", "Iceberg PartitionSpec / SortOrder.checkCompatibility "
         "(TableMetadata.Builder.build)"),
    Rule("iceberg-distribution-mode", "A write.distribution-mode (or Spark's "
         "distribution-mode option) other than none, hash or range.",
         "Iceberg DistributionMode.fromName (SparkWriteConf)"),
    Rule("iceberg-update-format", "UPDATE of an Iceberg format v1 table (no delete files "
         "for merge-on-read) or v3 table (schemalab does not keep row lineage yet).",
         "Iceberg spec (row-level deletes, row lineage)"),
    Rule("iceberg-column-default", "A column DEFAULT on an Iceberg table before format v3, "
         "or in CREATE TABLE.", f"{_ICEBERG} v3 (initial-default, write-default)"),
    Rule("iceberg-delete-needs-delete-files", "A DELETE that removes only some rows of a "
         "data file of an Iceberg format v1 table (v1 has no delete files).",
         "Iceberg spec (format v2 row-level deletes)"),
    Rule("duplicate-column", "CREATE TABLE naming a column twice.", "Spark / Iceberg Schema"),
    Rule("iceberg-ref-kind", "DROP/REPLACE BRANCH of a tag, or DROP/REPLACE TAG of a branch.",
         "Iceberg UpdateSnapshotReferencesOperation"),
    Rule("iceberg-ref-snapshot", "A branch or tag AS OF VERSION of a snapshot the table does "
         "not have, or a tag (or a branch replaced) on a table without snapshots.",
         "Iceberg TableMetadata.Builder.setRef; CreateOrReplaceTagExec"),
    Rule("iceberg-ref-retention", "A RETAIN or WITH SNAPSHOT RETENTION value that is not above "
         "0, or snapshot retention on a tag.", "Iceberg SnapshotRef.Builder"),
    Rule("iceberg-write-target", "A write to a tag or snapshot selection (t.tag_v1), or to a "
         "ref that is a tag.", "Iceberg SparkTable (time travel) / SnapshotProducer"),
    Rule("iceberg-write-order", "WRITE ORDERED BY a column the table does not have, a nested "
         "column, or a transform its type does not allow.",
         "Iceberg SortOrder.Builder / SortOrder.checkCompatibility"),
    # --- maintenance (compaction, orphan files) ---------------------------------------------
    Rule("compact-arguments", "A CALL sys.compact argument that is unknown, missing or not "
         "supported.", "Paimon CompactProcedure"),
    Rule("compact-partitions", "A partitions= filter that is malformed or names a column that "
         "is not a partition key.", "Paimon CompactProcedure"),
    Rule("compact-order", "An order_strategy / order_by that Paimon refuses or schemalab does "
         "not implement.", "Paimon CompactProcedure (sort compaction)"),
    Rule("serve-target", "schemalab serve given a path that is neither a table directory nor a "
         "warehouse of tables (or without Voilà installed).", _OWN),
    Rule("compact-deletion-vectors", "Compacting some partitions of a table whose other files "
         "carry deletion vectors.", _OWN),
    Rule("compact-bucket-key", "Compacting a table whose bucket key changed type.", _OWN),
    Rule("compaction-conflict", "A compaction whose input files another commit replaced; "
         "nothing of it is visible.", "Paimon FileStoreCommit conflict check"),
    Rule("orphans-branches", "clean_orphans on a table with a branch or tag directory "
         "whose name schemalab does not follow.", _OWN),
    # --- catalogs ----------------------------------------------------------------------------
    Rule("catalog-config", "A catalog named nowhere (~/.schemalab.yaml, .pyiceberg.yaml, "
         "PYICEBERG_CATALOG__* environment) or configured without what it needs.", _OWN),
    Rule("catalog-unavailable", "A catalog that cannot be reached or refused a request "
         "(listing, loading a table).", "Iceberg REST catalog spec / pyiceberg"),
    Rule("catalog-read-only", "A write through Paimon's REST catalog that its REST API has no "
         "call for (tags, branches, procedures other than compact, data-token tables): "
         "writing the files behind the catalog would fork the table.",
         "Paimon RESTCatalog (createTable, alterTable, commitSnapshot)"),
    Rule("catalog-no-checkpoint", "A checkpoint or restore of a warehouse opened on a catalog: "
         "the catalog's state lives in its server, not in files.", _OWN),
    Rule("catalog-commit-refused", "A commit the catalog refused (an update it rejects, a "
         "change that has no update in the REST spec); the message gives its reason.",
         "Iceberg REST catalog spec (updateTable) / pyiceberg commit_table"),
    Rule("catalog-commit-unknown", "A catalog that failed while committing (HTTP 500, 502, "
         "504): the commit may have landed, so the files written for it are kept.",
         "Iceberg REST catalog spec (CommitStateUnknownException)"),
    Rule("commit-through-catalog", "A Hadoop-layout commit to a table whose metadata is a "
         "catalog's (NNNNN-<uuid>.metadata.json): only its catalog knows its current "
         "version.", "Iceberg HadoopTableOperations"),
    # --- command line ------------------------------------------------------------------------
    Rule("explain-arguments", "schemalab explain --where without --column.", _OWN),
    Rule("older-than", "schemalab clean-orphans --older-than below 0.", _OWN),
    Rule("since-time", "schemalab inspect --since that is not a date, time or epoch "
         "milliseconds.", _OWN),
)

#: Every rule id, in the order of the README's table.
RULES: dict[str, Rule] = {r.id: r for r in _ALL}
assert len(RULES) == len(_ALL), "a rule id is listed twice"


def is_known(rule: str | None) -> bool:
    """Whether ``rule`` is one of :data:`RULES`."""
    return rule in RULES


def readme_table() -> str:
    """The README's table of rule ids (Markdown), generated from :data:`RULES`."""
    lines = ["| rule | refused | follows |", "|---|---|---|"]
    for r in _ALL:
        lines.append(f"| `{r.id}` | {r.meaning} | {r.follows} |")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(readme_table())
