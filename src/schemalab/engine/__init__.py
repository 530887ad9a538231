"""The one read engine both table formats plan into (plan → scan → evolve → merge), and the
Spark write path of Paimon tables."""
