"""Provider metadata read by Airflow's ProvidersManager (entry point ``apache_airflow_provider``).

Kept free of imports: Airflow calls it in every process that lists providers.
"""

from __future__ import annotations

from typing import Any

#: Every released version, newest first, as Airflow's own providers list theirs; the first
#: is ``airflow_provider_aihc.__version__`` and each has a section in CHANGELOG.md (``make
#: release-check`` holds both).
VERSIONS = ["0.1.0"]

#: The regions with a known endpoint (``hooks/_connection.py`` ``REGION_HOSTS``; a test keeps
#: the two equal, this module imports nothing).
REGIONS = ("cn-beijing", "cn-baoding", "cn-guangzhou", "cn-wuhan", "cn-suzhou", "cn-yangquan")
#: The connection's defaults (``hooks/_connection.py`` ``DEFAULT_*``), shown in the form.
DEFAULT_TIMEOUT_SECONDS = 60
DEFAULT_CONNECT_TIMEOUT_SECONDS = 10
DEFAULT_MAX_RETRIES = 5

#: Extra fields of the ``aihc`` connection (Airflow >= 3.2 renders these declaratively;
#: ``AIHCHook.get_connection_form_widgets`` builds Airflow 2's form from them).
CONN_FIELDS: dict[str, dict[str, Any]] = {
    "region": {
        "label": "Region",
        "description": "Picks the endpoint when Endpoint (Host) is empty",
        "schema": {"type": ["string", "null"], "enum": list(REGIONS)},
    },
    "resource_pool_id": {
        "label": "Default resource pool",
        "description": "For every call that names no pool, e.g. cce-xxxxxxxx or aihc-serverless",
        "schema": {"type": ["string", "null"]},
    },
    "security_token": {
        "label": "STS security token",
        "description": "Temporary credentials only; sent as x-bce-security-token",
        "schema": {"type": ["string", "null"], "format": "password"},
    },
    "api_version": {
        "label": "API version",
        "description": "v1 (default: the /api/v1 REST paths) or v2 (the action API)",
        "schema": {"type": ["string", "null"], "enum": ["v1", "v2"]},
    },
    "timeout": {
        "label": "Read timeout (seconds)",
        "description": "How long one attempt waits for AIHC's answer",
        "schema": {
            "type": ["number", "null"],
            "default": DEFAULT_TIMEOUT_SECONDS,
            "exclusiveMinimum": 0,
        },
    },
    "connect_timeout": {
        "label": "Connect timeout (seconds)",
        "description": "How long one attempt waits to connect",
        "schema": {
            "type": ["number", "null"],
            "default": DEFAULT_CONNECT_TIMEOUT_SECONDS,
            "exclusiveMinimum": 0,
        },
    },
    "max_retries": {
        "label": "Retries per call",
        "description": "Attempts after the first for calls that may be repeated (never a create)",
        "schema": {
            "type": ["integer", "null"],
            "default": DEFAULT_MAX_RETRIES,
            "minimum": 0,
            "maximum": 20,  # hooks/_connection.py MAX_RETRIES_LIMIT
        },
    },
}

UI_FIELD_BEHAVIOUR: dict[str, Any] = {
    "hidden-fields": ["schema", "port"],
    "relabeling": {
        "login": "Access Key ID",
        "password": "Secret Access Key",
        "host": "Endpoint",
    },
    "placeholders": {
        "host": "aihc.bj.baidubce.com (https implied) or http://127.0.0.1:8080 for the emulator",
        "extra": '{"region": "cn-beijing", "resource_pool_id": "cce-xxxxxxxx"}',
    },
}


#: Asset URI schemes of AIHC storage (``pfs://<instance>/<path>``, ...): a URI check, and the
#: converter that makes them OpenLineage datasets named as jobs' datasources are.  Airflow 3
#: reads ``asset-uris``, 2.11 ``dataset-uris``.  The module named is stdlib-only at import.
_LINEAGE = "airflow_provider_aihc.lineage.naming"
ASSET_URIS: list[dict[str, Any]] = [
    {
        "schemes": ["aihc-dataset", "bos", "cfs", "hostpath", "pfs"],
        "handler": f"{_LINEAGE}.sanitize_uri",
        "to_openlineage_converter": f"{_LINEAGE}.convert_asset_to_openlineage",
    }
]


#: ``@task.aihc`` and ``@task.aihc_python`` (``airflow_provider_aihc/decorators/``).
TASK_DECORATORS: list[dict[str, str]] = [
    {"name": "aihc", "class-name": "airflow_provider_aihc.decorators.aihc.aihc_task"},
    {
        "name": "aihc_python",
        "class-name": "airflow_provider_aihc.decorators.aihc_python.aihc_python_task",
    },
]


def get_provider_info() -> dict[str, Any]:
    """Return the provider's metadata for Airflow."""
    integration = "Baidu AIHC"
    return {
        "package-name": "airflow-provider-aihc",
        "name": "Baidu AI Cloud AIHC",
        "description": "Run and watch Baidu AI Cloud AIHC (百舸) GPU training jobs.",
        "versions": list(VERSIONS),
        "integrations": [
            {
                "integration-name": integration,
                "external-doc-url": "https://cloud.baidu.com/doc/AIHC/index.html",
                "tags": ["service"],
            }
        ],
        "hooks": [
            {
                "integration-name": integration,
                "python-modules": ["airflow_provider_aihc.hooks.aihc"],
            }
        ],
        "operators": [
            {
                "integration-name": integration,
                "python-modules": [
                    "airflow_provider_aihc.operators.aihc",
                    "airflow_provider_aihc.operators.model_registry",
                    "airflow_provider_aihc.operators.service",
                    "airflow_provider_aihc.operators.sweep",
                ],
            }
        ],
        "sensors": [
            {
                "integration-name": integration,
                "python-modules": [
                    "airflow_provider_aihc.sensors.aihc",
                    "airflow_provider_aihc.sensors.service",
                ],
            }
        ],
        "triggers": [
            {
                "integration-name": integration,
                "python-modules": [
                    "airflow_provider_aihc.triggers.aihc",
                    "airflow_provider_aihc.triggers.service",
                ],
            }
        ],
        "task-decorators": TASK_DECORATORS,
        "extra-links": ["airflow_provider_aihc.links.aihc.AIHCJobLink"],
        "asset-uris": ASSET_URIS,
        "dataset-uris": ASSET_URIS,
        "connection-types": [
            {
                "hook-class-name": "airflow_provider_aihc.hooks.aihc.AIHCHook",
                "hook-name": "Baidu AIHC",
                "connection-type": "aihc",
                "conn-fields": CONN_FIELDS,
                "ui-field-behaviour": UI_FIELD_BEHAVIOUR,
            }
        ],
    }
