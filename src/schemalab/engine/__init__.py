"""The one read engine both table formats plan into (plan → scan → evolve → deletes →
merge → execute). It knows no table format: a format package lists its files and plans
them into a :class:`~schemalab.engine.plan.ReadPlan`."""
