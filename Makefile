# Two commands set up everything:  make lab  (JupyterLab on the tour)  and  make test.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: lab serve test test-fast test-spark test-browser test-install notebooks check-java lint clean

check-java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "schemalab needs Java 17 or newer for Spark, and no 'java' is on PATH."; \
	  echo "Install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless; conda: see environment.yml)."; exit 1; }
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	  if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then \
	    echo "schemalab needs Java 17 or newer for Spark; found: $$(java -version 2>&1 | head -1)"; exit 1; fi

$(STAMP): pyproject.toml
	@command -v python3.11 >/dev/null 2>&1 && PYBIN=python3.11 || PYBIN=python3; \
	  test -x $(PY) || $$PYBIN -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,lab]"
	@touch $(STAMP) $(LAB_STAMP)

# `make lab` needs only the runtime and the `lab` extra (JupyterLab, and pyiceberg for
# notebook 06): a few hundred MB, not the test tools. `make test` installs both.
LAB_STAMP := $(VENV)/.installed-lab
$(LAB_STAMP): pyproject.toml
	@command -v python3.11 >/dev/null 2>&1 && PYBIN=python3.11 || PYBIN=python3; \
	  test -x $(PY) || $$PYBIN -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[lab]"
	@touch $(LAB_STAMP)

# --- Java Paimon oracle (tests/oracles/, issue "Java Paimon fidelity, both ways") -----------
# Its own venv: paimon-python-ali bundles Java Paimon 1.0 (paimon-python-java-bridge.jar) and
# pins py4j 0.10.9.7, which must never meet PySpark's py4j in $(VENV). The interop tests start
# one worker from it per session; without it they fail and name this target.
JAVA_PAIMON_VENV := .venv-paimon-java
JAVA_PAIMON_STAMP := $(JAVA_PAIMON_VENV)/.installed
JAVA_PAIMON_REQS := tests/oracles/requirements-java-paimon.txt

.PHONY: $(JAVA_PAIMON_VENV) test-interop
$(JAVA_PAIMON_VENV): $(JAVA_PAIMON_STAMP)

$(JAVA_PAIMON_STAMP): $(JAVA_PAIMON_REQS)
	@command -v python3.11 >/dev/null 2>&1 && PYBIN=python3.11 || PYBIN=python3; \
	  test -x $(JAVA_PAIMON_VENV)/bin/python || $$PYBIN -m venv $(JAVA_PAIMON_VENV)
	$(JAVA_PAIMON_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(JAVA_PAIMON_VENV)/bin/python -m pip install --quiet -r $(JAVA_PAIMON_REQS)
	@touch $(JAVA_PAIMON_STAMP)

# Iceberg's own Spark SQL (tests/oracles/iceberg_spark.py): Iceberg 1.12.0's Spark runtime
# supports Spark 4.1 only, $(VENV) has PySpark 4.3, so its worker runs in a venv of its own;
# the runtime jar comes through spark.jars.packages into .cache/ivy on the worker's first start.
ICEBERG_SPARK_VENV := .venv-iceberg-spark
ICEBERG_SPARK_STAMP := $(ICEBERG_SPARK_VENV)/.installed
ICEBERG_SPARK_REQS := tests/oracles/requirements-iceberg-spark.txt

.PHONY: $(ICEBERG_SPARK_VENV)
$(ICEBERG_SPARK_VENV): $(ICEBERG_SPARK_STAMP)

$(ICEBERG_SPARK_STAMP): $(ICEBERG_SPARK_REQS)
	@command -v python3.11 >/dev/null 2>&1 && PYBIN=python3.11 || PYBIN=python3; \
	  test -x $(ICEBERG_SPARK_VENV)/bin/python || $$PYBIN -m venv $(ICEBERG_SPARK_VENV)
	$(ICEBERG_SPARK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(ICEBERG_SPARK_VENV)/bin/python -m pip install --quiet -r $(ICEBERG_SPARK_REQS)
	@touch $(ICEBERG_SPARK_STAMP)

# The newest releases as oracles, from Maven Central (tests/oracles/java/): Java Paimon 2.0.0
# and Java Iceberg 1.12.0, each a plain classpath (no build) that the py4j workers in
# $(JAVA_PAIMON_VENV) start a JVM on. Maven's repository stays under $(ORACLES) (ignored).
ORACLES := .oracles
# the real directory: a checkout that links .oracles to another's writes that one's paths
ORACLES_M2 := $(or $(realpath $(ORACLES)),$(abspath $(ORACLES)))/m2
MVN := mvn -q -B -Dmaven.repo.local=$(ORACLES_M2)
PAIMON2_VERSION := 2.0.0
PAIMON2_CP := $(ORACLES)/paimon-$(PAIMON2_VERSION).classpath
ICEBERG12_CP := $(ORACLES)/iceberg-1.12.0.classpath

# paimon-bundle 2.0.0 is not served; paimon-flink-2.0 2.0.0 shades it whole. Its POM's parent
# is not served either, so it is fetched alone (-Dtransitive=false) and put first.
$(PAIMON2_CP): tests/oracles/java/paimon-2.0/pom.xml
	@command -v mvn >/dev/null 2>&1 || { echo "the Java oracles need Maven (apt-get install maven)"; exit 1; }
	$(MVN) dependency:get -Dtransitive=false -Dartifact=org.apache.paimon:paimon-flink-2.0:$(PAIMON2_VERSION)
	$(MVN) -f $< dependency:build-classpath -Dmdep.outputFile=$(abspath $@).rest
	printf '%s:%s' "$(ORACLES_M2)/org/apache/paimon/paimon-flink-2.0/$(PAIMON2_VERSION)/paimon-flink-2.0-$(PAIMON2_VERSION).jar" \
	  "$$(cat $@.rest)" > $@ && rm -f $@.rest

$(ICEBERG12_CP): tests/oracles/java/iceberg-1.12/pom.xml
	@command -v mvn >/dev/null 2>&1 || { echo "the Java oracles need Maven (apt-get install maven)"; exit 1; }
	$(MVN) -f $< dependency:build-classpath -Dmdep.outputFile=$(abspath $@)

# Iceberg's own REST catalog server for `make test-catalogs` (tests/oracles/java/iceberg-rest/):
# the fixture classes of the apache/iceberg-rest-fixture image and what they run on.
ICEBERG_REST_CP := $(ORACLES)/iceberg-rest.classpath
$(ICEBERG_REST_CP): tests/oracles/java/iceberg-rest/pom.xml
	@command -v mvn >/dev/null 2>&1 || { echo "the Java oracles need Maven (apt-get install maven)"; exit 1; }
	$(MVN) -f $< dependency:build-classpath -Dmdep.outputFile=$(abspath $@)

# Paimon's own REST catalog server (paimon-core's tests jar; its parent POM is not served, so
# the jar is fetched alone) on Paimon 2.0.0's classpath, with okhttp's MockWebServer.
PAIMON_REST_CP := $(ORACLES)/paimon-rest.classpath
$(PAIMON_REST_CP): tests/oracles/java/paimon-rest/pom.xml $(PAIMON2_CP)
	$(MVN) dependency:get -Dtransitive=false -Dartifact=org.apache.paimon:paimon-core:$(PAIMON2_VERSION):jar:tests
	$(MVN) -f $< dependency:build-classpath -Dmdep.outputFile=$(abspath $@).rest
	printf '%s:%s:%s' "$$(cat $(PAIMON2_CP))" \
	  "$(ORACLES_M2)/org/apache/paimon/paimon-core/$(PAIMON2_VERSION)/paimon-core-$(PAIMON2_VERSION)-tests.jar" \
	  "$$(cat $@.rest)" > $@ && rm -f $@.rest

.PHONY: oracle-jars
oracle-jars: $(PAIMON2_CP) $(ICEBERG12_CP) $(ICEBERG_REST_CP) $(PAIMON_REST_CP)

# The Java cross-checks: Paimon 1.0 and 2.0.0 both ways, every snapshot, Java's real tables;
# Iceberg 1.12.0 reading the Iceberg 1.10.2 fixture tables at every snapshot; Iceberg 1.12.0's
# Spark SQL running the same ALTERs as schemalab.
INTEROP_TESTS := tests/test_interop_java_paimon.py tests/test_java_paimon_tables.py \
  tests/test_interop_paimon_2x.py tests/test_interop_paimon_refs.py tests/test_interop_paimon_blob.py \
  tests/test_parquet_encoding.py tests/test_partition_paths.py tests/test_interop_java_iceberg.py \
  tests/test_interop_iceberg_refs.py tests/test_interop_iceberg_write.py \
  tests/test_interop_iceberg_refs_write.py tests/test_interop_iceberg_alter_more.py \
  tests/test_interop_iceberg_leftovers.py tests/test_interop_time_travel_timestamp.py \
  tests/test_interop_iceberg_spark_sql.py
test-interop: check-java $(STAMP) $(JAVA_PAIMON_STAMP) $(PAIMON2_CP) $(ICEBERG12_CP) \
  $(ICEBERG_SPARK_STAMP)
	$(PY) -m pytest -q $(INTEROP_TESTS)
# Tables through catalogs: Iceberg's and Paimon's REST catalog servers (Java, on 127.0.0.1)
# and pyiceberg's SQL catalog on SQLite, read by schemalab (tests/test_catalogs.py).
.PHONY: test-catalogs
CATALOG_TESTS := tests/test_catalogs.py tests/test_catalog_writes.py tests/test_catalog_paimon_writes.py
test-catalogs: check-java $(STAMP) $(ICEBERG_REST_CP) $(PAIMON_REST_CP) $(ICEBERG12_CP)
	$(PY) -m pytest -q $(CATALOG_TESTS)
# --- end Java Paimon oracle ------------------------------------------------------------------

# JupyterLab on the tour. Jupyter refuses to run as root (containers, CI machines) unless
# told: --allow-root then. `python -m jupyterlab`: a copied venv's scripts point elsewhere.
LAB_ARGS ?=
lab: check-java $(LAB_STAMP)
	cd notebooks && $(abspath $(PY)) -m jupyterlab $$(test "$$(id -u)" -eq 0 && echo --allow-root) \
	  $(LAB_ARGS) 00_tour.ipynb

# The tour's table T as a read-only web page (`schemalab serve`, through Voila) at
# http://127.0.0.1:8866/ — metadata only; SERVE_ARGS="--allow-reads --port 9000" to change.
# The table is built once by the tour's script under .cache/ (ignored).
SERVE_WH := .cache/serve-warehouse
SERVE_ARGS ?=
serve: check-java $(LAB_STAMP)
	test -d $(SERVE_WH)/default.db/T || $(PY) -m schemalab.cli sql $(SERVE_WH) -f data/scenarios/flip226.sql
	$(PY) -m schemalab.cli serve $(SERVE_WH)/default.db/T $(SERVE_ARGS)

# Fast pure-Python tests, then Spark tests (one shared session), then every notebook (nbval).
# The Java Paimon cross-checks of every type, partition type and cast both ways, and of Java's
# tables of every kind (~250 tests, most of them JVM round trips: about half the suite's time)
# are `make test-interop`, which CI runs right after; merge engines, compaction and deletes
# are still checked against Java here.
test: check-java $(STAMP) $(JAVA_PAIMON_STAMP)
	$(PY) -m pytest -q tests notebooks --nbval $(addprefix --ignore=,$(INTEROP_TESTS) $(CATALOG_TESTS))

# The tour's widgets clicked in a real JupyterLab, in Debian's chromium (Playwright drives it;
# its own browser download is never used). Opt-in: `make test` skips tests/browser.
# Screenshots of every view at 900/1200/1600 px, and of `schemalab serve`'s page, are kept in
# tests/browser/screenshots/ (views/, serve/; ignored by git).
test-browser: check-java $(STAMP)
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$(test "$$(id -u)" -eq 0 || echo sudo); \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	SCHEMALAB_BROWSER=1 $(PY) -m pytest -q tests/browser

# Re-run notebooks and store their outputs for nbval (NB=notebooks/xx.ipynb for one). No widget
# state (plotly's FigureWidget would store its whole JS bundle: megabytes per figure) and no
# per-cell timings, so a re-run only changes what a reader sees. Widget outputs are then
# stored as their static views (schemalab.widgets.static), which GitHub and nbconvert render.
NB ?= notebooks/*.ipynb
notebooks: check-java $(STAMP)
	$(PY) -m nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.store_widget_state=False --ExecutePreprocessor.record_timing=False \
	  $(NB)
	$(PY) -m schemalab.widgets.static $(NB)

# A plain `pip install .` (runtime dependencies only, no extras) in a fresh venv runs the
# FLIP-226 example and a primary-key table: the dependency list alone makes a working install.
INSTALL_VENV ?= /tmp/schemalab-install-check
test-install: check-java
	# setuptools builds in ./build and never empties it: a module since moved (engine/merge.py
	# became a package) would be installed beside its successor
	rm -rf $(INSTALL_VENV) build
	@command -v python3.11 >/dev/null 2>&1 && PYBIN=python3.11 || PYBIN=python3; \
	  $$PYBIN -m venv $(INSTALL_VENV)
	$(INSTALL_VENV)/bin/python -m pip install --quiet .
	cd /tmp && $(INSTALL_VENV)/bin/python $(CURDIR)/tests/packaging/check_install.py

test-fast: $(STAMP)
	$(PY) -m pytest -q tests -m "not spark"

lint: $(STAMP)
	$(PY) -m ruff check src widgets tests bench
	$(PY) -m mypy src widgets

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info

# Reliability soak: 2000 random model sequences (make test runs 200), 400 on merge-engine
# tables with upserts, deletes and compactions (make test: 4), 100 + 60 pypaimon cross-checks
# and more crash / concurrency rounds. Tens of minutes; not part of make test.
.PHONY: soak
soak: check-java $(STAMP)
	SCHEMALAB_MODEL_EXAMPLES=2000 SCHEMALAB_MERGE_EXAMPLES=400 SCHEMALAB_PYPAIMON_SEQUENCES=100 \
	  SCHEMALAB_PYPAIMON_MERGE_SEQUENCES=60 SCHEMALAB_SOAK=1 \
	  $(PY) -m pytest -q -p no:cacheprovider tests/test_model_based.py \
	  tests/test_model_pypaimon.py tests/test_crash_safety.py tests/test_concurrency.py

# ---- issue 13: tables where they live (S3 on loopback, Spark Connect, standalone cluster) ----
# The executors' Python of the standalone-cluster tests: only pyarrow, pandas and numpy (at the
# driver venv's exact versions, on the driver's own base interpreter, as PySpark requires the
# same Python minor version on both sides), and no schemalab, so that the tests prove what a
# real cluster without schemalab installed does. PySpark itself reaches executors as
# pyspark.zip from the worker's SPARK_HOME.
EXEC_VENV ?= .venv-executor
EXEC_STAMP := $(EXEC_VENV)/.installed

$(EXEC_STAMP): $(STAMP)
	rm -rf $(EXEC_VENV)
	$$($(PY) -c 'import sys; print(sys._base_executable)') -m venv $(EXEC_VENV)
	$(EXEC_VENV)/bin/python -m pip install --quiet $$($(PY) -c \
	  'import numpy, pandas, pyarrow; print(*(f"{m.__name__}=={m.__version__}" for m in (numpy, pandas, pyarrow)))')
	@! $(EXEC_VENV)/bin/python -c 'import schemalab' 2>/dev/null || { echo "$(EXEC_VENV) must not see schemalab"; exit 1; }
	@touch $(EXEC_STAMP)

.PHONY: executor-venv test-cluster
executor-venv: $(EXEC_STAMP)

# Opt-in, like test-browser: `make test` collects tests/test_where_tables_live.py and skips it
# (SCHEMALAB_CLUSTER unset). Each server is started on 127.0.0.1 by the tests and stopped after.
# tests/test_spark_on_s3.py (Spark's data files on s3:// / s3a:// in moto) runs in a pytest of
# its own: its session needs hadoop-aws (spark.jars.packages) from the JVM's start, which the
# first run downloads with the AWS SDK bundle (~690 MB) into the ignored .cache/ivy
# (SCHEMALAB_IVY_DIR to share one cache between clones).
test-cluster: check-java $(STAMP) $(EXEC_STAMP)
	SCHEMALAB_CLUSTER=1 SCHEMALAB_EXECUTOR_PYTHON=$(abspath $(EXEC_VENV))/bin/python \
	  $(PY) -m pytest -q -m cluster tests/test_where_tables_live.py
	SCHEMALAB_CLUSTER=1 $(PY) -m pytest -q -m cluster tests/test_spark_on_s3.py \
	  tests/test_checkpoint.py tests/test_iceberg_spark_on_s3.py

# The benchmarks' optional third reader: pypaimon-rust (Rust + DataFusion) in its own venv.
BENCH_RUST_VENV := .venv-bench-rust
$(BENCH_RUST_VENV)/.installed:
	@command -v python3.11 >/dev/null 2>&1 && PYBIN=python3.11 || PYBIN=python3; \
	  test -x $(BENCH_RUST_VENV)/bin/python || $$PYBIN -m venv $(BENCH_RUST_VENV)
	$(BENCH_RUST_VENV)/bin/python -m pip install --quiet "pypaimon-rust==0.4.0" "pyarrow>=16"
	@touch $@
.PHONY: $(BENCH_RUST_VENV)
$(BENCH_RUST_VENV): $(BENCH_RUST_VENV)/.installed
