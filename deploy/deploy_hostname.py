"""``[core] hostname_callable`` of the two triggerers: each reports its own host name.

Both run on this one machine; giving each a different name (two names of the loopback)
is what two hosts would have, so the REST API's ``triggerer_job.hostname`` of a deferred
task says which triggerer holds its trigger.
"""

from __future__ import annotations

import os


def of_this_process() -> str:
    """The name set for this process in ``AIHC_DEPLOY_HOSTNAME``."""
    return os.environ["AIHC_DEPLOY_HOSTNAME"]
