"""The create-job fields, each declared once: what the operator, the request builder, the
dialects and the docs know about a field comes from its row in :data:`JOB_FIELDS`.

A row says the field's operator (or builder) parameter, its wire path in each dialect's
create body (``None``: that dialect has no such field), whether a text value is parsed as
JSON, how the rendered-template view shows it, whether it may carry a secret, and its doc.
Its type and validation are the :class:`~airflow_provider_aihc.models.request.CreateJobRequest`
field at its v1 path (a test holds every path to a model field).

Derived from the rows: the operator's job parameters, ``template_fields`` and
``template_fields_renderers``, its sealed attributes (operators/_sealed.py) and the
``:param:`` entries of its docstring (:func:`param_docs`, written out in the operator's
source so that no DAG parse makes them); the builder's parameters and wire paths
(models/build.py); the fields only one dialect can send and v2's moves of the others
(hooks/dialects).  Adding a field takes five edits: its row here, its line in the
operator's ``__init__`` signature, its docstring entry (the text
``tests/unit/test_parse_docs.py`` prints), its model field, and its bad values in
``tests/aihc_bad_values.py`` (``tests/unit/test_job_parameters.py`` holds the signature, the
docstring, the model and the bad values to the rows).

Stdlib only: the operator module imports this at DAG parse.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "BUILDER_PARAMETERS",
    "JOB_FIELDS",
    "JOB_FRAMEWORKS",
    "JOB_PARAMETERS",
    "MANAGED_POOL_IDS",
    "MAX_COUNT",
    "NAME_MAX_LENGTH",
    "PRIORITIES",
    "RETENTION_PERIOD_RULE",
    "SEALED_PARAMETERS",
    "JobField",
    "field",
    "name_problem",
    "param_docs",
    "period_problem",
    "show",
]

# The rules of single values, shared by the request model (models/request.py, at execute)
# and the operator's check of literal values (operators/_checks.py, at DAG parse): one
# text for each, so that a mistake reads the same whenever it is found.

NAME_MAX_LENGTH = 50
"""Longest job name: the name becomes a Kubernetes object name with pod suffixes."""
NAME_RULE = (
    f"1-{NAME_MAX_LENGTH} lowercase letters, digits and '-', "
    "starting and ending with a letter or digit"
)
_NAME_PATTERN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
PRIORITIES = ("high", "normal", "low")
"""Allowed ``priority`` values."""
JOB_FRAMEWORKS = ("PyTorchJob", "MPIJob", "TFJob", "RayJob")
"""Allowed job types: ``jobFramework`` in v1 (``PyTorchJob``, ``MPIJob``), ``jobType`` in v2
(all four; ``hooks/dialects`` refuses what the connection's API generation cannot send)."""
RETENTION_PERIOD_RULE = "a whole number followed by m, h or d (minutes, hours, days), e.g. 1d"
_PERIOD_PATTERN = r"[1-9][0-9]*[mhd]"
#: The managed pools: their job calls need the queue id (bce-sdk-go
#: ``services/aihc/resource/client.go:20-21`` ``SERVERLESS_CLUSTER``/``BHCMP``, refused
#: without ``queueID`` at ``:175-177``, ``:201-203``, ``:264-266``, ``:291-293``, ``:466-468``;
#: "托管资源池须填入队列Id": bce-openapi-meta ``i18n/zh-CN/aihc/StopJob.json:4``).
MANAGED_POOL_IDS = frozenset({"aihc-serverless", "aihc-bhcmp"})
MAX_COUNT = 2**31 - 1
"""Largest count AIHC can read (``replicas`` is an int32 in the Go API)."""
_MAX_SHOWN = 80


def show(value: object) -> str:
    """Render a user-given value for an error message: ``repr``, shortened.

    :param value: any value; never raises, whatever it is.
    """
    try:
        text = repr(value)
    except Exception:  # e.g. an int too long to print
        text = f"<{type(value).__name__}>"
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def name_problem(value: str) -> str | None:
    """What is wrong with a job name, or ``None``."""
    if len(value) > NAME_MAX_LENGTH:
        return f"must be {NAME_RULE}; got {len(value)} characters: {show(value)}"
    if not re.fullmatch(_NAME_PATTERN, value):
        return f"must be {NAME_RULE}; got {show(value)}"
    return None


def period_problem(value: str) -> str | None:
    """What is wrong with a ``retentionPeriod``-like duration (``1d``), or ``None``."""
    if not re.fullmatch(_PERIOD_PATTERN, value):
        return f"must be {RETENTION_PERIOD_RULE}; got {show(value)}"
    return None


class JobField:
    """One field of the create request: a plain class with slots, made at every DAG parse,
    where a named tuple's generated ``__new__`` costs ~0.25 ms and a frozen dataclass's
    methods a millisecond.  Rows are not changed after they are made.

    :param name: the operator's or builder's parameter (snake_case; for a ``body``-only
        field the model's field name).
    :param v1: its path in the v1 create body (also the model's path: the request is
        validated in v1 form).
    :param v2: its path in the v2 create body; ``None`` when v2 has no such field.
    :param doc: one line (or a few) on what it means, shared by every docstring that lists it.
    :param kind: whose parameter it is: ``operator``, of the operator and the builder;
        ``builder``, of the builder (``build_create_request``) only; ``body``, no one's
        (given in a ``body`` only).
    :param structured: a dict or list; text (a rendered template) is parsed as JSON or a
        Python literal.
    :param renderer: how Airflow's Rendered Templates view shows it (``json``, ``bash``).
    :param sealed: may carry a secret: kept out of the instance ``__dict__``
        (operators/_sealed.py says why).
    :param refusal: what the dialect without the field says when a body sets it (default:
        "needs the connection's api_version ...").
    :param operator_doc: said only in the operator's docstring (defaults, names it avoids).
    """

    __slots__ = (
        "doc", "kind", "name", "operator_doc", "refusal", "renderer", "sealed", "structured",
        "v1", "v2",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        v1: tuple[str, ...] | None,
        v2: tuple[str, ...] | None,
        doc: str,
        kind: Literal["operator", "builder", "body"] = "operator",
        structured: bool = False,
        renderer: str | None = None,
        sealed: bool = False,
        refusal: str | None = None,
        operator_doc: str = "",
    ) -> None:
        self.name = name
        self.v1 = v1
        self.v2 = v2
        self.doc = doc
        self.kind = kind
        self.structured = structured
        self.renderer = renderer
        self.sealed = sealed
        self.refusal = refusal
        self.operator_doc = operator_doc

    def __repr__(self) -> str:
        return f"JobField({self.name!r}, v1={self.v1!r}, v2={self.v2!r}, kind={self.kind!r})"

    @property
    def templated(self) -> bool:
        """Every operator parameter of the job is templated."""
        return self.kind == "operator"

    @property
    def path(self) -> tuple[str, ...]:
        """Its path in the request as validated (v1 form): ``v1``, or ``v2`` for a field
        only v2 has (the model holds it there; the v1 dialect refuses it)."""
        return self.v1 or self.v2 or ()

    @property
    def wire(self) -> str:
        """:attr:`path` as text, ``jobSpec.image``."""
        return ".".join(self.path)


_JSON = "json"

# Which dialect has which field: v1 bce-sdk-go ``services/aihc/api/v1/aiJob.go`` (the fields
# only v1 has: lines 172-182), v2 bce-openapi-meta ``schema/aihc/CreateJob.json`` (the one
# only v2 has: 246-261; no ``faultToleranceConfig``); the model's fields cite the others.

JOB_FIELDS: tuple[JobField, ...] = (
    JobField(
        "name",
        ("name",),
        ("name",),
        "job name; lowercase letters, digits and ``-``, at most 50",
        operator_doc="Default: ``<task id>-<hash of the task instance>``, unique per task "
        "instance.  A given name must be unique per run too (e.g. derived from ``run_id``): "
        "``ds`` is missing from runs without a logical date (manual, API and asset-triggered "
        "runs on Airflow 3).",
    ),
    JobField("image", ("jobSpec", "image"), ("jobSpec", "image"), "container image"),
    JobField(
        "command",
        ("jobSpec", "command"),
        ("command",),
        "command every replica runs",
        renderer="bash",
    ),
    JobField(
        "job_queue",
        ("queue",),
        ("queue",),
        "AIHC queue, AIHC's ``queue``; ``default`` unless ``body`` sets it",
        operator_doc="Not ``queue``: that is the Celery queue of the task itself.",
    ),
    JobField(
        "replicas",
        ("jobSpec", "replicas"),
        ("jobSpec", "replicas"),
        "number of replicas, >= 1; 1 unless ``body`` sets it",
    ),
    JobField(
        "job_resources",
        ("jobSpec", "resources"),
        ("jobSpec", "resources"),
        'resources per replica, AIHC\'s ``resources``, e.g. ``{"baidu.com/a800_80g_cgpu": 8}`` '
        'or ``[{"name", "quantity"}]``',
        structured=True,
        renderer=_JSON,
        operator_doc="Not ``resources``: that is Airflow's own task resources.",
    ),
    JobField(
        "envs",
        ("jobSpec", "envs"),
        ("jobSpec", "envs"),
        'environment, ``{"NAME": "value"}`` or ``[{"name", "value"}]``; number and '
        "boolean values are sent as strings",
        structured=True,
        renderer=_JSON,
        sealed=True,
    ),
    JobField(
        "priority",
        ("priority",),
        ("priority",),
        "``high``, ``normal`` or ``low``; ``normal`` unless ``body`` sets it",
    ),
    JobField(
        "job_framework",
        ("jobFramework",),
        ("jobType",),
        "``PyTorchJob`` or ``MPIJob``; with the connection's ``api_version`` v2 also "
        "``TFJob`` or ``RayJob``; ``PyTorchJob`` unless ``body`` sets it",
    ),
    JobField("enable_rdma", ("jobSpec", "enableRDMA"), ("jobSpec", "enableRDMA"), "use RDMA"),
    JobField(
        "datasources",
        ("datasources",),
        ("datasources",),
        'volumes, e.g. ``[{"type": "pfs", "name": "pfs-x", "mountPath": '
        '"/mnt/cluster"}]`` (camelCase or snake_case keys)',
        structured=True,
        renderer=_JSON,
    ),
    JobField(
        "labels",
        ("labels",),
        ("labels",),
        'job labels, ``{"team": "nlp"}`` or ``[{"key", "value"}]``',
        structured=True,
        renderer=_JSON,
        operator_doc="The task instance's identity labels (``airflow-*``) are added.",
    ),
    JobField("fault_tolerance", ("faultTolerance",), ("faultTolerance",), "restart on faults"),
    JobField(
        "fault_tolerance_config",
        ("faultToleranceConfig",),
        None,
        "advanced fault tolerance; v2 takes ``faultToleranceArgs`` (in ``body``) instead",
        structured=True,
        renderer=_JSON,
        refusal="api_version v2 has no faultToleranceConfig; give faultToleranceArgs "
        "(--flag=value text) in body, or use api_version v1",
    ),
    JobField(
        "enable_bccl",
        ("enableBccl",),
        ("enableBccl",),
        "inject BCCL; needs >= 2 replicas, RDMA, 8 GPUs each",
    ),
    JobField(
        "image_config",
        ("jobSpec", "imageConfig"),
        ("jobSpec", "imageConfig"),
        'private registry credentials ``{"username", "password"}``',
        structured=True,
        renderer=_JSON,
        sealed=True,
        operator_doc="The password is masked like the secret key.",
    ),
    JobField(
        "tensorboard_config",
        ("tensorboardConfig",),
        ("tensorboardConfig",),
        '``{"enableTensorboard", "logPath"}``',
        structured=True,
        renderer=_JSON,
    ),
    JobField(
        "alert_config",
        ("alertConfig",),
        ("alertConfig",),
        "an alert rule created with the job",
        structured=True,
        renderer=_JSON,
    ),
    JobField(
        "retention_period",
        ("retentionPeriod",),
        ("retentionPeriod",),
        "how long AIHC keeps the ended job, e.g. ``1d``",
    ),
    JobField(
        "max_running_time",
        ("runningTimeoutStopTimeUnit",),
        None,
        "the longest the job may run before AIHC stops it, ``<n>m``, ``<n>h`` or ``<n>d`` "
        "(e.g. ``12h``); v1 only",
        operator_doc="AIHC's ``runningTimeoutStopTimeUnit`` (bce-sdk-go ``aiJob.go:182``): "
        "AIHC stops the job itself, whether or not a task still waits for it.",
    ),
    JobField(
        "code_source",
        ("codeSource",),
        None,
        'code mounted into the job, e.g. ``{"filePath": ..., "mountPath": "/workspace"}`` '
        "or a BOS object (``bosBucket``, ``bosObjectName``, ``bosEndpoint``, "
        "``bosTemporaryToken``); v1 only",
        structured=True,
        renderer=_JSON,
        sealed=True,
        operator_doc="The BOS temporary token is masked like the secret key.",
    ),
    JobField(
        "log_collection_file_patterns",
        ("logCollectionFilePatterns",),
        None,
        'files whose lines AIHC collects as the job\'s log, e.g. ``["/workspace/logs/*.log"]``; '
        "v1 only",
        structured=True,
        renderer=_JSON,
    ),
    JobField(
        "required_node_affinity",
        ("requiredNodeAffinity",),
        None,
        "nodes the job must run on (a list of node names); v1 only",
        structured=True,
        renderer=_JSON,
    ),
    JobField(
        "preferred_node_affinity",
        ("preferredNodeAffinity",),
        None,
        "nodes the job prefers to run on (a list of node names); v1 only",
        structured=True,
        renderer=_JSON,
    ),
    JobField(
        "advanced_settings",
        None,
        ("advancedSettings",),
        'a RayJob\'s ``{"runtimeEnv": "<Ray runtime env JSON>", "SubmitterBackoffLimit": n}``; '
        "api_version v2 only",
        structured=True,
        renderer=_JSON,
    ),
    JobField(
        "host_network",
        ("jobSpec", "hostNetwork"),
        ("jobSpec", "hostNetwork"),
        "use the host network",
        kind="builder",
    ),
    JobField(
        "privileged",
        ("jobSpec", "privileged"),
        ("jobSpec", "privileged"),
        "run privileged",
        kind="builder",
    ),
    JobField(
        "fault_tolerance_args",
        ("faultToleranceArgs",),
        ("faultToleranceArgs",),
        "fault tolerance as ``--flag=value`` text",
        kind="body",
    ),
)
"""Every create field: the operator's parameters first, in their signature's order."""

_BY_NAME = {row.name: row for row in JOB_FIELDS}

JOB_PARAMETERS: tuple[str, ...] = tuple(r.name for r in JOB_FIELDS if r.kind == "operator")
"""The operator's parameters that are fields of the create request (all templated)."""
BUILDER_PARAMETERS: tuple[str, ...] = tuple(r.name for r in JOB_FIELDS if r.kind != "body")
"""``build_create_request``'s named parameters."""
SEALED_PARAMETERS: tuple[str, ...] = tuple(r.name for r in JOB_FIELDS if r.sealed)
"""The operator's job parameters that may carry a secret (``body`` may too: it is sealed
as well, by the operator)."""


def field(name: str) -> JobField:
    """The row of a parameter or field.

    :raises KeyError: no such row.
    """
    return _BY_NAME[name]


def param_docs(names: tuple[str, ...], *, operator: bool, indent: str = "    ") -> str:
    """``:param x:`` entries of ``names`` for a docstring: the operator's say "templated"
    and their operator notes, the builder's give the wire path.

    :param indent: the docstring's indentation (continuation lines get four more spaces).
    """
    lines = []
    for name in names:
        row = _BY_NAME[name]
        if operator:
            text = f"{row.doc} (templated)."
            if row.operator_doc:
                text += f"  {row.operator_doc}"
        else:
            text = f"{row.doc} (``{row.wire}``)."
        lines.append(fill(f":param {name}: {text}", 92, indent, indent + "    "))
    return "\n".join(lines)


def fill(text: str, width: int, initial_indent: str, subsequent_indent: str) -> str:
    """``textwrap.fill(text, width, initial_indent=..., subsequent_indent=...,
    break_on_hyphens=False)``, the same text (a test holds it so) at a fifth of the cost
    (the builder's docstring is made when models/build.py is imported)."""
    chunks = [chunk for chunk in re.split(r"(\s+)", text) if chunk]
    chunks = [" " * len(chunk) if not chunk.strip() else chunk for chunk in chunks]
    chunks.reverse()
    lines: list[str] = []
    while chunks:
        indent = subsequent_indent if lines else initial_indent
        room = width - len(indent)
        if lines and not chunks[-1].strip():
            chunks.pop()
        line: list[str] = []
        used = 0
        while chunks and used + len(chunks[-1]) <= room:
            used += len(chunks[-1])
            line.append(chunks.pop())
        if chunks and len(chunks[-1]) > room:  # a word longer than a line: cut it
            cut = room - used if room >= 1 else 1
            line.append(chunks[-1][:cut])
            chunks[-1] = chunks[-1][cut:]
        if line and not line[-1].strip():
            line.pop()
        if line:
            lines.append(indent + "".join(line))
    return "\n".join(lines)
