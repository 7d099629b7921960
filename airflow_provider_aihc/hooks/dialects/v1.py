"""The v1 REST dialect: paths under ``/api/v1``, answers in an envelope (bce-sdk-go
``services/aihc/resource/client.go``).

Every job call carries query ``resourcePoolId``; ``queueID`` is added only for the managed
pools that need it (bce-sdk-go: ``aihc-serverless``, ``aihc-bhcmp``).  The transport already
unwraps ``{"requestId", "result"}``, so answers pass through unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks._endpoint import MANAGED_POOLS, QUEUE, ApiRequest, Endpoint, Params
from airflow_provider_aihc.hooks.dialects import (
    V2_ONLY_FIELDS,
    check_path_id,
    other_dialects_fields,
)

#: Pools whose job calls also need ``queueID`` (bce-sdk-go ``SERVERLESS_CLUSTER``/``BHCMP``).
QUEUE_ID_POOLS = MANAGED_POOLS
#: ``jobFramework`` values v1 accepts (the create page lists PyTorchJob; the CLI sends MPIJob).
V1_FRAMEWORKS = ("PyTorchJob", "MPIJob")


class V1Dialect:
    """``/api/v1/aijobs…`` and ``/api/v1/resourcepools…``."""

    name = "v1"

    def request(
        self,
        endpoint: Endpoint,
        pool: str | None,
        queue_id: str | None,
        params: Params,
        body: Any,
        path_args: Mapping[str, str],
    ) -> ApiRequest:
        """The endpoint's path with safe segments; ``resourcePoolId`` on job calls; not the
        arguments the endpoint says v1 drops (v1 lists cannot filter:
        :data:`~airflow_provider_aihc.hooks.dialects.LIST_FILTERS`)."""
        if not endpoint.v1:
            raise AIHCConfigError(
                f"{endpoint.operation} has no api_version v1 action (only v2 defines it); "
                "use a connection with api_version v2"
            )
        path = endpoint.path.format(**{k: check_path_id(k, v) for k, v in path_args.items()})
        query = [(k, v) for k, v in params if k not in endpoint.v1_drops]
        if pool is not None:
            query.insert(0, ("resourcePoolId", pool))
            if queue_id and pool in QUEUE_ID_POOLS and _sends_queue(endpoint):
                query.append(("queueID", queue_id))
        return ApiRequest(endpoint=endpoint, path=path, params=tuple(query), body=encode(body))

    def answer(self, endpoint: Endpoint, result: Any) -> Any:
        """v1 answers are already in v1 form."""
        return result

    def create_problems(self, body: Mapping[str, Any]) -> list[tuple[str, str]]:
        """What only v2 can say: other job types, ``advancedSettings``."""
        problems = []
        framework = body.get("jobFramework", "PyTorchJob")
        if framework not in V1_FRAMEWORKS:
            problems.append(
                (
                    "jobFramework (job_framework)",
                    f"{framework!r} needs the connection's api_version v2; "
                    f"api_version v1 takes {' or '.join(V1_FRAMEWORKS)}",
                )
            )
        problems += other_dialects_fields(body, V2_ONLY_FIELDS, "v2")
        return problems


def _sends_queue(endpoint: Endpoint) -> bool:
    """The create (``queueID`` from the body's queue) and the calls that need the queue."""
    return QUEUE in endpoint.needs or (endpoint.v2 is not None and endpoint.v2.shape == "create")


def encode(body: Any) -> bytes | None:
    """The JSON bytes of a body (``None`` for none)."""
    if body is None:
        return None
    return json.dumps(body, ensure_ascii=False).encode()


V1 = V1Dialect()
