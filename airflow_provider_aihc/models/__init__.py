"""Typed AIHC wire models; import the submodules, this package imports nothing.

* :mod:`.status`: ``JobStatus`` and the terminal/success predicates (stdlib only, cheap to
  import from triggers and sensors).
* :mod:`.request`: the v1 create-job request (strict).
* :mod:`.build`: ``build_create_request``, which merges operator parameters over a body.
* :mod:`.job`: job, list, event and log responses (lenient); :mod:`.pool`: pools and queues;
  :mod:`.job_tools`: metrics, nodes, the web terminal, batch stop, a pool's nodes.
"""
