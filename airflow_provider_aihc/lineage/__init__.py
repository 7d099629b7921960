"""OpenLineage for AIHC jobs.

* :mod:`.naming`: where a datasource or an asset URI lives, as an OpenLineage dataset
  ``(namespace, name)``; also the URI handler and converter Airflow calls for the ``pfs``,
  ``cfs``, ``bos``, ``hostpath`` and ``aihc-dataset`` asset schemes.  Stdlib only at import.
* :mod:`.job`: what an operator or sensor reports when the OpenLineage provider asks
  (``get_openlineage_facets_on_complete``).  Imported only then.
* :mod:`.facets`: the ``aihcJob`` run facet.  Imported only then.
"""
