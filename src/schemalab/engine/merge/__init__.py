"""The merge of a keyed table's rows (Paimon's merge engines), on Spark: evolution first, the
merge after. The table's merge options come in the read plan (``options``).

``records``   every version of every key, evolved, with its sequence number and row kind
``order``     the order Paimon merges a key's versions in (``sequence.field``, then sequence)
``runs``      which files of a bucket need merging at all (sorted runs, the newest-run rule)
``deduplicate``, ``first_row``, ``partial_update``, ``aggregation``  one module per merge
              function, as Paimon's ``MergeFunction`` classes
``aggregators``  Paimon's field aggregators as Spark expressions
``keyed_read``  the merge read: the plan per bucket, then one DataFrame
``options``   the merge options as values (a format reads its own into them)
"""
