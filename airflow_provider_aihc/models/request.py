"""The v1 create-job request: the body of ``POST /api/v1/aijobs`` (bce-sdk-go
``services/aihc/api/v1/aiJob.go``).

Strict where a mistake would waste a GPU job (names, allowed values, counts, unknown fields),
lax where a templated value arrives as text: ``"8"``, ``"1.5"``, ``"true"`` and ``"0"`` are
coerced; booleans also accept ``yes``/``no``/``on``/``off`` (pydantic's lax rules).  A few
friendly input forms are accepted and stored in wire form: ``envs={"A": "1"}``,
``resources={"cpu": 1.5}``, ``labels={"team": "nlp"}``; env and label values that are
numbers or booleans become strings (``1`` → ``"1"``, ``True`` → ``"true"``).

:meth:`CreateJobRequest.to_wire` (``model_dump(mode="json", exclude_none=True)``) gives the
JSON body; unset optional fields (e.g. ``hostNetwork``) are left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from airflow_provider_aihc.job_parameters import (
    JOB_FRAMEWORKS,
    MAX_COUNT,
    NAME_MAX_LENGTH,
    PRIORITIES,
    RETENTION_PERIOD_RULE,
    name_problem,
    period_problem,
)
from airflow_provider_aihc.models._base import (
    _RequestModel,
    show,
    stringify_scalar,
    to_int,
    to_number,
    wrap_single,
)
from airflow_provider_aihc.models.create_extras import AdvancedSettings, CodeSource

__all__ = [
    "BCCL_GPUS_PER_REPLICA",
    "JOB_FRAMEWORKS",
    "MAX_COUNT",
    "NAME_MAX_LENGTH",
    "PRIORITIES",
    "RETENTION_PERIOD_RULE",
    "AdvancedSettings",
    "AlertConfig",
    "CodeSource",
    "CreateJobRequest",
    "Datasource",
    "DatasourceOptions",
    "EnvVar",
    "FaultToleranceConfig",
    "ImageConfig",
    "JobSpec",
    "Label",
    "Resource",
    "TensorboardConfig",
]

BCCL_GPUS_PER_REPLICA = 8
"""``enableBccl`` needs every replica to use a whole 8-GPU machine."""
CROSS_FIELD_ERROR = "aihc_cross_field"
"""pydantic error type whose ``ctx["problems"]`` lists ``(field, problem)`` pairs."""


def _check_name(value: str) -> str:
    problem = name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _check_retention(value: str | None) -> str | None:
    problem = None if value is None else period_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _one_of(allowed: tuple[str, ...]) -> BeforeValidator:
    def check(value: object) -> object:
        if isinstance(value, str) and value in allowed:
            return value
        raise ValueError(f"must be one of {', '.join(allowed)}; got {show(value)}")

    return BeforeValidator(check)


def _optional(convert: Callable[[object], object]) -> BeforeValidator:
    return BeforeValidator(lambda value: value if value is None else convert(value))


def _absolute(value: str) -> str:
    if not value.startswith("/"):
        raise ValueError(f"must be an absolute path (starting with '/'), got {show(value)}")
    return value


def _quantity(value: object) -> int | float:
    number = to_number(value, what="a number >= 0")
    if number < 0:
        raise ValueError(f"must be a number >= 0, got {show(value)}")
    return number


def _pairs(key: str, value_key: str) -> BeforeValidator:
    """Accept ``{k: v, ...}`` (or one wire item) for a list of ``{key: k, value_key: v}``."""

    def convert(value: object) -> object:
        value = wrap_single(value, frozenset({key, value_key}), key)
        if isinstance(value, Mapping):
            return [{key: k, value_key: v} for k, v in value.items()]
        return value

    return BeforeValidator(convert)


def _unique(what: str, names: Iterable[str]) -> None:
    repeated = [name for name, count in Counter(names).items() if count > 1]
    if repeated:
        raise ValueError(f"{what} must be unique; repeated: {', '.join(map(show, repeated))}")


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError(f"must not be empty or blank, got {show(value)}")
    return value


NonEmptyStr = Annotated[str, AfterValidator(_not_blank)]
FlexibleStr = Annotated[str, BeforeValidator(stringify_scalar)]
OptionalCount = Annotated[int | None, _optional(to_int), Field(ge=0, le=MAX_COUNT)]


class ImageConfig(_RequestModel):
    """Credentials for a private image registry."""

    username: FlexibleStr
    """Registry user name."""
    password: Annotated[SecretStr, BeforeValidator(stringify_scalar)]
    """Registry password; masked in ``repr`` and logs, sent in clear only in the JSON body."""

    @field_serializer("password", when_used="json")
    def _reveal_password(self, value: SecretStr) -> str:
        return value.get_secret_value()


class Resource(_RequestModel):
    """One resource every replica requests."""

    name: NonEmptyStr
    """Resource name: ``baidu.com/a800_80g_cgpu`` (GPUs), ``cpu``, ``memory`` (GB),
    ``sharedMemory``, ``rdma/hca``, ..."""
    quantity: Annotated[int | float, BeforeValidator(_quantity)]
    """Amount per replica, >= 0; may be fractional (``cpu`` 1.5)."""


class EnvVar(_RequestModel):
    """An environment variable set in every container."""

    name: NonEmptyStr
    """Variable name; unique within the job."""
    value: FlexibleStr = ""
    """Value; numbers and booleans are sent as strings."""


class Label(_RequestModel):
    """A label attached to the job."""

    key: NonEmptyStr
    """Label key; unique within the job."""
    value: FlexibleStr = ""
    """Label value; numbers and booleans are sent as strings."""


class DatasourceOptions(_RequestModel):
    """Mount options of a data source; keys beyond these are passed through as given."""

    model_config = ConfigDict(extra="allow")

    medium: str | None = None
    """``emptydir`` medium, e.g. ``Memory``."""
    size_limit: OptionalCount = None
    """``emptydir`` size limit (GB)."""
    read_only: bool | None = None
    """Mount read-only (default: read-write)."""
    host_path: str | None = None
    """Node path for ``hostpath`` sources."""
    host_path_type: str | None = None
    """Kubernetes hostPath type, e.g. ``DirectoryOrCreate``."""


class Datasource(_RequestModel):
    """A volume mounted into every replica."""

    type: NonEmptyStr
    """Source type: ``pfs`` (documented), ``emptydir``, ``hostpath``, ``dataset``, ..."""
    id: str | None = None
    """A ``dataset`` source's id (v1 only: bce-sdk-go ``aiJob.go:84-85``)."""
    name: str | None = None
    """For ``pfs`` the PFS instance id (``pfs-7xWeAt``); for ``emptydir`` a volume name."""
    mount_path: Annotated[str, AfterValidator(_absolute)]
    """Absolute path inside the container."""
    source_path: str | None = None
    """Path inside the source (a PFS directory, or a node path for ``hostpath``)."""
    options: DatasourceOptions | None = None
    """Mount options (``medium``, ``sizeLimit``, ``readOnly``, ...)."""


class FaultToleranceConfig(_RequestModel):
    """Advanced fault tolerance (容错高级配置): hang detection and restart limits."""

    enabled_hang_detection: bool | None = None
    """Detect hung training and treat it as a fault."""
    hang_detection_timeout_minutes: OptionalCount = None
    """Minutes without progress before a job counts as hung."""
    fault_tolerance_limit: OptionalCount = None
    """How many times the job may be restarted."""
    custom_fault_tolerance_pattern: list[str] | None = None
    """Log patterns that count as a fault."""


class TensorboardConfig(_RequestModel):
    """TensorBoard for the job."""

    enable_tensorboard: bool | None = None
    """Start a TensorBoard service for the job."""
    log_path: str | None = None
    """Directory the training writes TensorBoard logs to."""


class AlertConfig(_RequestModel):
    """Alert rule created with the job (bce-sdk-go ``AlertRuleReq``)."""

    alert_ids: list[str] | None = None
    """Ids of existing alert rules."""
    instance_id: str | None = None
    """CProm instance id the alert rule belongs to."""
    alert_name: str | None = None
    """Alert rule name."""
    alert_items: list[Any] | None = None
    """Alert items (metric conditions), as the console defines them."""
    for_: str | None = Field(default=None, validation_alias="for", serialization_alias="for")
    """How long a condition must hold before alerting, e.g. ``5m``."""
    description: str | None = None
    """Free-text description."""
    notify_rule_id: str | None = None
    """Notification policy id."""
    severity: str | None = None
    """Alert severity."""


class JobSpec(_RequestModel):
    """What every replica runs (``jobSpec``; in v1 ``command`` lives here)."""

    command: NonEmptyStr
    """Shell command the container runs (may be a multi-line script)."""
    image: NonEmptyStr
    """Container image, e.g. ``registry.baidubce.com/aihc-aiak/aiak-megatron:...``."""
    image_config: ImageConfig | None = None
    """Registry credentials for a private image."""
    replicas: Annotated[int, BeforeValidator(to_int), Field(ge=1, le=MAX_COUNT)] = 1
    """Number of instances (pods), >= 1."""
    resources: Annotated[list[Resource] | None, _pairs("name", "quantity")] = None
    """Resources per replica; also accepts ``{"cpu": 1.5, "baidu.com/a800_80g_cgpu": 8}``."""
    envs: Annotated[list[EnvVar] | None, _pairs("name", "value")] = None
    """Environment variables; also accepts ``{"NAME": "value"}``."""
    enable_rdma: bool | None = Field(
        default=None, validation_alias="enableRDMA", serialization_alias="enableRDMA"
    )
    """Use RDMA networking between replicas."""
    host_network: bool | None = None
    """Run pods in the host network namespace (omitted when unset)."""
    privileged: bool | None = None
    """Run containers privileged (omitted when unset)."""

    @field_validator("resources")
    @classmethod
    def _unique_resources(cls, value: list[Resource] | None) -> list[Resource] | None:
        _unique("resource names", (item.name for item in value or ()))
        return value

    @field_validator("envs")
    @classmethod
    def _unique_envs(cls, value: list[EnvVar] | None) -> list[EnvVar] | None:
        _unique("env var names", (item.name for item in value or ()))
        return value

    def gpus_per_replica(self) -> int | float:
        """Total quantity of GPU resources (names containing ``gpu``) per replica."""
        return sum(r.quantity for r in self.resources or () if "gpu" in r.name.lower())


class CreateJobRequest(_RequestModel):
    """Body of ``POST /api/v1/aijobs`` (``resourcePoolId`` goes in the query, not here)."""

    name: Annotated[str, AfterValidator(_check_name)]
    """Job name; becomes the Kubernetes object name (pods are ``<name>-master-0``)."""
    queue: NonEmptyStr = "default"
    """Queue name (self-managed pool) or queue id ``aihcq-...`` (managed pool)."""
    job_framework: Annotated[
        Literal["PyTorchJob", "MPIJob", "TFJob", "RayJob"], _one_of(JOB_FRAMEWORKS)
    ] = "PyTorchJob"
    """Training framework operator: ``PyTorchJob`` or ``MPIJob``; with ``api_version`` v2
    also ``TFJob`` or ``RayJob`` (sent as v2's ``jobType``)."""
    job_spec: JobSpec
    """What every replica runs."""
    fault_tolerance: bool | None = None
    """Restart the job automatically on faults (default off)."""
    fault_tolerance_config: FaultToleranceConfig | None = None
    """Advanced fault tolerance; give this or ``faultToleranceArgs``, not both."""
    fault_tolerance_args: str | None = None
    """Fault tolerance as ``--flag=value`` text; give this or ``faultToleranceConfig``."""
    labels: Annotated[list[Label] | None, _pairs("key", "value")] = None
    """Job labels; also accepts ``{"key": "value"}``.  AIHC adds its own
    ``aijob.cce.baidubce.com/*`` labels."""
    priority: Annotated[Literal["high", "normal", "low"], _one_of(PRIORITIES)] = "normal"
    """Scheduling priority: ``high``, ``normal`` or ``low``."""
    datasources: Annotated[
        list[Datasource] | None,
        BeforeValidator(lambda value: [value] if isinstance(value, Mapping) else value),
    ] = None
    """Volumes mounted into every replica (PFS, emptydir, ...)."""
    enable_bccl: bool | None = None
    """Inject BCCL; needs >= 2 replicas, RDMA and 8 GPUs (A800/HPAS) per replica."""
    tensorboard_config: TensorboardConfig | None = None
    """TensorBoard for the job."""
    alert_config: AlertConfig | None = None
    """Alert rule created with the job."""
    retention_period: Annotated[str | None, AfterValidator(_check_retention)] = None
    """How long AIHC keeps the ended job, e.g. ``1d`` (``retentionPeriod``; both dialects:
    bce-sdk-go ``aiJob.go:183``, bce-openapi-meta ``CreateJob.json:240``)."""
    running_timeout_stop_time_unit: Annotated[str | None, AfterValidator(_check_retention)] = None
    """The longest the job may run before AIHC stops it, e.g. ``12h`` (v1 only)."""
    code_source: CodeSource | None = None
    """Code mounted into the job (v1 only)."""
    log_collection_file_patterns: list[str] | None = None
    """Files whose lines AIHC collects as the job's log (v1 only)."""
    required_node_affinity: list[str] | None = None
    """Nodes the job must run on (v1 only)."""
    preferred_node_affinity: list[str] | None = None
    """Nodes the job prefers to run on (v1 only)."""
    advanced_settings: AdvancedSettings | None = None
    """A RayJob's runtime environment and submitter retries (v2 only)."""

    @field_validator("labels")
    @classmethod
    def _unique_labels(cls, value: list[Label] | None) -> list[Label] | None:
        _unique("label keys", (item.key for item in value or ()))
        return value

    @model_validator(mode="after")
    def _cross_field_rules(self) -> CreateJobRequest:
        problems = self.cross_field_problems()
        if problems:
            summary = "; ".join(f"{field}: {problem}" for field, problem in problems)
            raise PydanticCustomError(
                CROSS_FIELD_ERROR, "{summary}", {"summary": summary, "problems": problems}
            )
        return self

    def cross_field_problems(self) -> list[tuple[str, str]]:
        """Rules that involve several fields, as ``(wire field, problem)`` pairs."""
        problems: list[tuple[str, str]] = []
        if self.fault_tolerance_config is not None and self.fault_tolerance_args is not None:
            problems.append(
                (
                    "faultToleranceConfig",
                    "give faultToleranceConfig or faultToleranceArgs, not both",
                )
            )
        if self.enable_bccl:
            spec = self.job_spec
            unmet = []
            if spec.replicas < 2:
                unmet.append(f"jobSpec.replicas >= 2 (got {spec.replicas})")
            if not spec.enable_rdma:
                rdma = "unset" if spec.enable_rdma is None else show(spec.enable_rdma)
                unmet.append(f"jobSpec.enableRDMA true (got {rdma})")
            gpus = spec.gpus_per_replica()
            if gpus != BCCL_GPUS_PER_REPLICA:
                unmet.append(
                    f"{BCCL_GPUS_PER_REPLICA} GPUs per replica in jobSpec.resources "
                    f"(e.g. baidu.com/a800_80g_cgpu: 8; got {gpus})"
                )
            if unmet:
                problems.append(("enableBccl", "true requires " + ", ".join(unmet)))
        return problems
