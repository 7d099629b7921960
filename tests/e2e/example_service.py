"""What the retraining example needs before it runs, shared by the tests that run it.

``aihc_scheduled_retraining`` rolls a long-lived online service that exists before the
DAG runs (its ``service_id`` param), and its model registry, dataset and service
operators speak only AIHC's v2 action API: they refuse a v1 connection before sending.
"""

from __future__ import annotations

from typing import Any

#: Examples that run on a v2 connection only, and why (each is left out of the v1 runs).
V2_ONLY_EXAMPLES = {
    "aihc_scheduled_retraining": (
        "datasets, the model registry and online services exist only in AIHC's v2 API: "
        "its operators refuse a v1 connection before sending"
    ),
}

#: The online service the retraining example rolls (it exists before the DAG runs).
SERVICE_CONF = {
    "name": "clicks-ranker",
    "acceleratorType": "A100",
    "workloadType": "",
    "instanceCount": 2,
    "resourcePool": {"resourcePoolId": "cce-emulator0", "queueName": "default"},
    "containers": [
        {"name": "server", "cpus": 4, "memory": 16, "acceleratorCount": 1,
         "image": {"imageType": 2, "imageUrl": "registry.example/ranker-server:1"}}
    ],
}  # fmt: skip


def retraining_conf() -> dict[str, Any]:
    """Create the service through ``aihc_default`` (which must speak v2) and return the
    retraining example's run conf naming it."""
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    return {"service_id": AIHCHook().create_service(SERVICE_CONF)}
