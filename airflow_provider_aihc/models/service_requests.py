"""What the model, dataset and service requests must hold, checked before any request.

Plain functions over wire-form (camelCase) mappings: a ``ServiceConf`` has many optional
parts AIHC may extend, so it is checked field by field and sent as given, not rebuilt by a
strict model that would drop what it does not know.  Each problem is ``(field, what it
takes)``, reported together in one :class:`~airflow_provider_aihc.exceptions.AIHCValidationError`.

The rules, with their sources:

* model, dataset and service names: lowercase letters, digits and ``-``, starting with a
  letter, ending with a letter or digit, 1-50 characters (bce-openapi-meta
  ``i18n/zh-CN/aihc/CreateModel.json:3-15``, ``CreateDataset.json``; bce-python-sdk
  ``modules/service/service_model.py:425`` ``^[a-z][a-z0-9-]*[a-z0-9]$``, ≤50);
* ``instanceCount`` ≥ 0; ``containers`` 1-10, each with a DNS-label ``name`` (≤63),
  ``cpus`` > 0, ``memory`` > 0 (GiB), ``acceleratorCount`` ≥ 0 and an ``image.imageUrl``
  (``service_model.py:222-279``; bce-sdk-go ``inference/v2/models.go:339-357``);
* ``deploy.canaryStrategy.maxSurge``/``maxUnavailable``: percentages 0-100, "不能同时为0"
  (``service_model.py:335-354``);
* ``resourcePool.resourcePoolId`` and ``acceleratorType`` are required (``service_model.py:
  20-44, 426``);
* ``modelMetrics``: a JSON **string** ``{"Results":[{"Metrics":{...},"Dataset":{"DatasetId":
  ...}}]}`` (bce-openapi-meta ``i18n/zh-CN/aihc/CreateModelVersion.json:3-8``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from airflow_provider_aihc.exceptions import AIHCValidationError

__all__ = [
    "NAME_RULE",
    "STUCK_REASONS",
    "check_name",
    "check_percentages",
    "conf_digest",
    "conf_matches",
    "metrics_text",
    "raise_problems",
    "service_conf_problems",
    "with_secrets_of",
    "without_secrets",
]

NAME_PATTERN = re.compile(r"^[a-z](?:[a-z0-9-]{0,48}[a-z0-9])?$")
NAME_RULE = (
    "1 to 50 lowercase letters, digits and '-', starting with a letter and ending with a "
    "letter or digit"
)
_DNS_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
MAX_CONTAINERS = 10
#: Instance reasons that do not resolve by waiting (Kubernetes' container waiting reasons,
#: *inferred* to surface in ``InsStatus.reason`` and the containers' ``reason``).
STUCK_REASONS = (
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
)
Problems = list[tuple[str, str]]


def raise_problems(problems: Problems, subject: str) -> None:
    """Raise the problems, if any, as one :class:`AIHCValidationError` (nothing was sent).

    :param subject: what the parameters are of (``service``, ``model version``, ...).
    """
    if problems:
        raise AIHCValidationError(problems, subject)


def check_name(field: str, value: object) -> Problems:
    """A problem when ``value`` is not a valid model, dataset or service name."""
    if isinstance(value, str) and NAME_PATTERN.match(value):
        return []
    return [(field, f"must be {NAME_RULE}; got {value!r}")]


def _whole(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _count(field: str, value: object, least: int, most: int | None = None) -> Problems:
    number = _whole(value)
    if number is None or number < least or (most is not None and number > most):
        bounds = f"{least} to {most}" if most is not None else f"at least {least}"
        return [(field, f"must be a whole number, {bounds}; got {value!r}")]
    return []


def check_percentages(field: str, max_surge: object, max_unavailable: object) -> Problems:
    """``maxSurge``/``maxUnavailable``: whole percentages, 0-100, not both 0."""
    problems = _count(f"{field}.maxSurge", max_surge, 0, 100) if max_surge is not None else []
    if max_unavailable is not None:
        problems += _count(f"{field}.maxUnavailable", max_unavailable, 0, 100)
    if not problems and max_surge == 0 and max_unavailable == 0:
        problems.append((field, "maxSurge and maxUnavailable cannot both be 0 (不能同时为0)"))
    return problems


def _container_problems(index: int, container: object) -> Problems:
    at = f"containers[{index}]"
    if not isinstance(container, Mapping):
        return [(at, f"must be a mapping (a ContainerConf); got {type(container).__name__}")]
    problems: Problems = []
    name = container.get("name")
    if not (isinstance(name, str) and _DNS_LABEL.match(name)):
        problems.append((f"{at}.name", f"must be a DNS label (≤63, a-z0-9 and '-'); got {name!r}"))
    problems += _count(f"{at}.cpus", container.get("cpus"), 1)
    problems += _count(f"{at}.memory", container.get("memory"), 1)
    problems += _count(f"{at}.acceleratorCount", container.get("acceleratorCount", 0), 0)
    image = container.get("image")
    url = image.get("imageUrl") if isinstance(image, Mapping) else None
    if not (isinstance(url, str) and url.strip()):
        problems.append((f"{at}.image.imageUrl", "must name the container's image"))
    return problems


def service_conf_problems(conf: object) -> Problems:
    """Every problem of a ``ServiceConf`` (wire form), in one list."""
    if not isinstance(conf, Mapping):
        return [("service_conf", f"must be a mapping (a ServiceConf); got {type(conf).__name__}")]
    problems = check_name("service_conf.name", conf.get("name"))
    problems += _count("service_conf.instanceCount", conf.get("instanceCount"), 0)
    if not isinstance(conf.get("acceleratorType"), str):
        problems.append(("service_conf.acceleratorType", "is required (a string, e.g. 'A100')"))
    pool = conf.get("resourcePool")
    if not (isinstance(pool, Mapping) and pool.get("resourcePoolId")):
        problems.append(("service_conf.resourcePool.resourcePoolId", "is required"))
    containers = conf.get("containers")
    if not isinstance(containers, list) or not 1 <= len(containers) <= MAX_CONTAINERS:
        problems.append(
            ("service_conf.containers", f"must be a list of 1 to {MAX_CONTAINERS} containers")
        )
    else:
        for index, container in enumerate(containers):
            problems += [(f"service_conf.{f}", p) for f, p in _container_problems(index, container)]
    deploy = conf.get("deploy")
    canary = deploy.get("canaryStrategy") if isinstance(deploy, Mapping) else None
    if isinstance(canary, Mapping):
        problems += check_percentages(
            "service_conf.deploy.canaryStrategy",
            canary.get("maxSurge"),
            canary.get("maxUnavailable"),
        )
    return problems


def metrics_text(metrics: object, dataset_id: str | None = None) -> str | None:
    """``modelMetrics`` as the JSON string Baidu defines.

    :param metrics: ``None``; a mapping of metric names to values (e.g. a training task's
        ``metrics`` XCom), wrapped as ``{"Results": [{"Metrics": metrics}]}``; a mapping that
        already holds ``Results``, or a JSON string, sent as it is.
    :param dataset_id: the dataset (version) the metrics were measured on, added as
        ``Dataset.DatasetId`` when the metrics are wrapped here.
    :raises AIHCValidationError: metrics that are not JSON, naming ``model_metrics``.
    """
    if metrics is None or metrics == "":
        return None
    if isinstance(metrics, str):
        try:
            json.loads(metrics)
        except ValueError as err:
            raise AIHCValidationError(
                [("model_metrics", f"must be JSON text: {err}")], "model version"
            ) from None
        return metrics
    if not isinstance(metrics, Mapping):
        raise AIHCValidationError(
            [("model_metrics", f"must be a mapping or JSON text; got {type(metrics).__name__}")],
            "model version",
        )
    document: Any = dict(metrics)
    if "Results" not in document:
        result: dict[str, Any] = {"Metrics": document}
        if dataset_id:
            result["Dataset"] = {"DatasetId": dataset_id}
        document = {"Results": [result]}
    try:
        return json.dumps(document, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise AIHCValidationError(
            [("model_metrics", f"must hold JSON values only (numbers, text, lists): {err}")],
            "model version",
        ) from None


# -- comparing configurations ----------------------------------------------------------------
# AIHC answers the live ServiceConf with the fields it fills itself (defaults, ids): a
# configuration is live when every field the wanted one sets has that value in the live one
# (inferred: no source says which fields DescribeService fills).  Registry passwords are
# left out of the comparison and the digest: AIHC need not echo them.

#: Keys never compared nor digested (secrets AIHC need not answer back).
UNCOMPARED_KEYS = frozenset({"password"})


def conf_matches(wanted: object, live: object) -> bool:
    """Whether ``live`` holds every value ``wanted`` sets (mappings: a subset; lists: the
    same length, item by item; numbers: by value)."""
    if isinstance(wanted, Mapping):
        if not isinstance(live, Mapping):
            return False
        return all(
            key in UNCOMPARED_KEYS or value is None or conf_matches(value, live.get(key))
            for key, value in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        if not isinstance(live, list | tuple) or len(live) != len(wanted):
            return False
        return all(conf_matches(w, v) for w, v in zip(wanted, live, strict=True))
    if isinstance(wanted, bool) or isinstance(live, bool):
        return wanted == live
    if isinstance(wanted, int | float) and isinstance(live, int | float):
        return float(wanted) == float(live)
    return wanted == live


def _comparable(value: object) -> object:
    if isinstance(value, Mapping):
        return {
            str(k): _comparable(v)
            for k, v in value.items()
            if k not in UNCOMPARED_KEYS and v is not None
        }
    if isinstance(value, list | tuple):
        return [_comparable(v) for v in value]
    return value


def conf_digest(conf: Mapping[str, Any]) -> str:
    """A short digest of a configuration (sorted keys, no secrets, no ``None``), for XCom
    and logs: equal configurations have equal digests."""
    import hashlib

    text = json.dumps(_comparable(conf), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def without_secrets(conf: Mapping[str, Any]) -> dict[str, Any]:
    """``conf`` without its registry passwords (:data:`UNCOMPARED_KEYS`): what a trigger
    may carry (Airflow stores its arguments); the comparison never reads them anyway."""
    cleaned = _comparable(conf)
    assert isinstance(cleaned, dict)
    return cleaned


def with_secrets_of(conf: Mapping[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
    """``conf`` with each container's ``image.password`` taken from the container of the
    same name in ``source`` where ``conf`` has none (a configuration a trigger carried)."""
    filled: dict[str, Any] = json.loads(json.dumps(conf, default=str))
    passwords = {
        c.get("name"): c["image"]["password"]
        for c in source.get("containers") or []
        if isinstance(c, Mapping)
        and isinstance(c.get("image"), Mapping)
        and c["image"].get("password")
    }
    for container in filled.get("containers") or []:
        image = container.get("image") if isinstance(container, dict) else None
        if isinstance(image, dict) and not image.get("password"):
            password = passwords.get(container.get("name"))
            if password:
                image["password"] = password
    return filled
