"""Baidu's definitions of the v2 model and dataset actions, and the checks they imply.

:data:`ACTIONS` is bce-openapi-meta HEAD ``11913e343072`` ``schema/aihc/*.json`` (the
model and dataset actions: method, and each parameter's name, type, required-ness and
place; the ``Version`` header left out), copied by a script, not typed in.  The enums and
the name rule are the definitions' Chinese descriptions (``i18n/zh-CN/aihc/*.json``):
``storageType`` "可选项：PFS、BOS", ``importFormat`` "FILE：文件 FOLDER：文件夹",
``visibilityScope`` "ALL_PEOPLE … ONLY_OWNER … USER_GROUP", ``permission`` "r：只读rw：读写",
``name`` "支持小写字母、数字和-，必须以小写字母开头，必须以小写字母或数字结尾，长度限制1-50",
``modelMetrics`` "JSON格式".

Where an official client sends less than the definitions require, the emulator accepts
what the client sends (:data:`LENIENT`, with the source): a server that refused it would
refuse Baidu's own SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from airflow_provider_aihc.emulator.state.errors import invalid_param, malformed_json


class Param(NamedTuple):
    """One parameter of a definition."""

    name: str
    type: str
    required: bool
    position: str


#: action -> (method, parameters), from bce-openapi-meta `schema/aihc/<action>.json`.
ACTIONS: dict[str, tuple[str, tuple[Param, ...]]] = {
    "CreateDataset": (
        "POST",
        (
            Param("name", "String", True, "BODY"),
            Param("storageType", "String", True, "BODY"),
            Param("storageInstance", "String", True, "BODY"),
            Param("importFormat", "String", True, "BODY"),
            Param("description", "String", False, "BODY"),
            Param("owner", "String", False, "BODY"),
            Param("visibilityScope", "String", True, "BODY"),
            Param("visibilityUser", "List", False, "BODY"),
            Param("visibilityGroup", "List", False, "BODY"),
            Param("initVersionEntry", "Object", True, "BODY"),
        ),
    ),
    "CreateDatasetVersion": (
        "POST",
        (
            Param("datasetId", "String", True, "QUERY"),
            Param("description", "String", False, "BODY"),
            Param("storagePath", "String", True, "BODY"),
            Param("mountPath", "String", True, "BODY"),
        ),
    ),
    "CreateModel": (
        "POST",
        (
            Param("name", "String", True, "BODY"),
            Param("description", "String", False, "BODY"),
            Param("modelFormat", "String", True, "BODY"),
            Param("owner", "String", False, "BODY"),
            Param("visibilityScope", "String", False, "BODY"),
            Param("initVersionEntry", "Object", True, "BODY"),
        ),
    ),
    "CreateModelVersion": (
        "POST",
        (
            Param("modelId", "String", True, "QUERY"),
            Param("storageBucket", "String", True, "BODY"),
            Param("storagePath", "String", True, "BODY"),
            Param("description", "String", False, "BODY"),
            Param("source", "String", True, "BODY"),
            Param("modelMetrics", "String", False, "BODY"),
        ),
    ),
    "DeleteDataset": ("POST", (Param("datasetId", "String", True, "QUERY"),)),
    "DeleteDatasetVersion": (
        "POST",
        (
            Param("datasetId", "String", True, "QUERY"),
            Param("versionId", "String", True, "QUERY"),
        ),
    ),
    "DeleteModel": ("POST", (Param("modelId", "String", True, "QUERY"),)),
    "DeleteModelVersion": (
        "POST",
        (
            Param("modelId", "String", True, "QUERY"),
            Param("versionId", "String", True, "QUERY"),
        ),
    ),
    "DescribeDataset": ("GET", (Param("datasetId", "String", True, "QUERY"),)),
    "DescribeDatasetVersion": (
        "GET",
        (
            Param("datasetId", "String", True, "QUERY"),
            Param("versionId", "String", True, "QUERY"),
        ),
    ),
    "DescribeDatasetVersions": (
        "GET",
        (
            Param("datasetId", "String", True, "QUERY"),
            Param("pageNumber", "Integer", False, "QUERY"),
            Param("pageSize", "Integer", False, "QUERY"),
        ),
    ),
    "DescribeDatasets": (
        "GET",
        (
            Param("keyword", "String", False, "QUERY"),
            Param("storageType", "String", False, "QUERY"),
            Param("storageInstances", "String", False, "QUERY"),
            Param("importFormat", "String", False, "QUERY"),
            Param("pageNumber", "Integer", False, "QUERY"),
            Param("pageSize", "Integer", False, "QUERY"),
        ),
    ),
    "DescribeModel": ("GET", (Param("modelId", "String", True, "QUERY"),)),
    "DescribeModelVersion": (
        "GET",
        (
            Param("modelId", "String", True, "QUERY"),
            Param("versionId", "String", True, "QUERY"),
        ),
    ),
    "DescribeModelVersions": (
        "GET",
        (
            Param("modelId", "String", True, "QUERY"),
            Param("pageNumber", "Integer", False, "QUERY"),
            Param("pageSize", "Integer", False, "QUERY"),
        ),
    ),
    "DescribeModels": (
        "GET",
        (
            Param("keyword", "String", False, "QUERY"),
            Param("pageNumber", "Integer", False, "QUERY"),
            Param("pageSize", "Integer", False, "QUERY"),
        ),
    ),
    "ModifyDataset": (
        "POST",
        (
            Param("datasetId", "String", True, "QUERY"),
            Param("name", "String", False, "BODY"),
            Param("description", "String", False, "BODY"),
            Param("visibilityScope", "String", False, "BODY"),
            Param("visibilityUser", "List", False, "BODY"),
            Param("visibilityGroup", "List", False, "BODY"),
        ),
    ),
    "ModifyModel": (
        "POST",
        (
            Param("modelId", "String", True, "QUERY"),
            Param("name", "String", True, "BODY"),
            Param("description", "String", True, "BODY"),
        ),
    ),
}

#: Required by the definitions, optional here because an official client omits it.
LENIENT: dict[tuple[str, str], str] = {
    ("CreateModel", "initVersionEntry"): (
        "bce-python-sdk 0.9.79 model_client.py:72 (可选), sent only if given (L91-92)"
    ),
}
_VISIBILITY = ("ALL_PEOPLE", "ONLY_OWNER", "USER_GROUP")
#: (action, parameter) -> allowed values (the zh-CN descriptions).
ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("CreateDataset", "storageType"): ("PFS", "BOS"),
    ("CreateDataset", "importFormat"): ("FILE", "FOLDER"),
    ("CreateDataset", "visibilityScope"): _VISIBILITY,
    ("ModifyDataset", "visibilityScope"): _VISIBILITY,
    ("DescribeDatasets", "storageType"): ("PFS", "BOS"),
    ("DescribeDatasets", "importFormat"): ("FILE", "FOLDER"),
}
PERMISSIONS = ("r", "rw")
#: The name rule of CreateModel and CreateDataset (zh-CN ``name``), also ``ServiceConf.name``.
NAME_RULE = re.compile(r"^[a-z]([a-z0-9-]{0,48}[a-z0-9])?$")
NAMED = ("CreateModel", "CreateDataset")


def check(action: str, query: Mapping[str, str], body: Mapping[str, Any]) -> None:
    """Refuse a request the definition of ``action`` refuses, naming the parameter.

    :raises EmulatorError: ``400 InvalidParam`` (missing, bad value) or ``400
        MalformedJSON`` (a body field of the wrong JSON type).
    """
    for param in ACTIONS[action][1]:
        where = query if param.position == "QUERY" else body
        value = where.get(param.name)
        if value is None or value == "":
            if param.required and (action, param.name) not in LENIENT:
                raise invalid_param(f"{param.name} is required")
            continue
        if param.position == "QUERY":
            _check_query(param, str(value))
        else:
            _check_body(param, value)
        allowed = ENUMS.get((action, param.name))
        if allowed is not None and value not in allowed:
            raise invalid_param(f"{param.name} must be one of {', '.join(allowed)}, got {value!r}")
    if action in NAMED and not NAME_RULE.match(str(body.get("name", ""))):
        raise invalid_param(
            "name must be 1-50 lowercase letters, digits and '-', starting with a letter and "
            f"ending with a letter or digit; got {body.get('name')!r}"
        )
    for key in ("visibilityUser", "visibilityGroup"):
        for item in body.get(key) or []:
            if not isinstance(item, dict) or item.get("permission") not in (None, *PERMISSIONS):
                raise invalid_param(f"{key}[].permission must be one of r, rw")


def _check_query(param: Param, value: str) -> None:
    if param.type == "Integer":
        try:
            number = int(value)
        except ValueError:
            raise invalid_param(f"{param.name} must be an integer, got {value!r}") from None
        if number < 1:
            raise invalid_param(f"{param.name} must be at least 1, got {number}")


_JSON_TYPES: dict[str, type] = {"String": str, "Object": dict, "List": list}


def _check_body(param: Param, value: Any) -> None:
    wanted = _JSON_TYPES.get(param.type)
    if wanted is not None and not isinstance(value, wanted):
        raise malformed_json(f"{param.name} must be a JSON {param.type}, got {value!r}")


def strings(name: str, value: Any) -> dict[str, Any]:
    """An object whose set fields are all strings (``initVersionEntry``: every
    sub-parameter is ``String`` in the definitions)."""
    if value is None:
        return {}
    for key, item in value.items():
        if item is not None and not isinstance(item, str):
            raise malformed_json(f"{name}.{key} must be a JSON String, got {item!r}")
    return {k: v for k, v in value.items() if v is not None}


def metrics_text(name: str, value: Any) -> None:
    """``modelMetrics`` is JSON text ("模型指标，JSON格式")."""
    if value in (None, ""):
        return
    try:
        json.loads(value)
    except ValueError:
        raise invalid_param(f"{name} must be JSON text, got {value!r}") from None
