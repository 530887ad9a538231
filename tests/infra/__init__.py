"""Real test infrastructure for tables where they live (issue 13): S3 on loopback (moto),
a Spark Connect server and a standalone cluster from the pip PySpark's own jars.

Modules: :mod:`infra.procs` (server processes), :mod:`infra.s3`, :mod:`infra.spark`,
:mod:`infra.fixtures` (the pytest fixtures; see its docstring).
"""
