"""Hypothesis strategies shared by the property tests (models builder, operator, sensor)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12))
JSONISH = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=10), children, max_size=4),
    ),
    max_leaves=10,
)
#: Text as templating may render it: JSON, Python reprs, and the awkward cases.
TEXTS = st.one_of(
    JSONISH.map(json.dumps),
    JSONISH.map(repr),
    st.text(max_size=30),
    st.sampled_from(
        ["", " ", "None", "null", "true", "False", "yes", "8", "-1", "1.5", "[", "{'A': 1"]
    ),
)
ANYTHING = st.one_of(JSONISH, TEXTS)
NUMBERS = st.one_of(st.integers(-2, 16), st.floats(-1, 16), st.sampled_from(["8", "1.5", "x"]))

#: Plausible values per job parameter of the operator (some valid, some not).
PLAUSIBLE_JOB_PARAMETERS: dict[str, st.SearchStrategy[Any]] = {
    "name": st.from_regex(r"[a-z0-9-]{0,12}", fullmatch=True),
    "image": st.just("busybox"),
    "command": st.just("true"),
    "job_queue": st.sampled_from(["default", "", "q1"]),
    "replicas": NUMBERS,
    "job_resources": st.dictionaries(
        st.sampled_from(["cpu", "memory", "baidu.com/a800_80g_cgpu"]), NUMBERS, max_size=3
    ),
    "envs": st.dictionaries(st.text(max_size=6), SCALARS, max_size=3),
    "priority": st.sampled_from(["high", "normal", "low", "urgent"]),
    "job_framework": st.sampled_from(["PyTorchJob", "MPIJob", "TFJob"]),
    "enable_rdma": st.one_of(st.booleans(), st.sampled_from(["true", "0", "maybe"])),
    "datasources": st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["pfs", ""]), "mount_path": st.sampled_from(["/m", "m"])}
        ),
        max_size=2,
    ),
    "labels": st.dictionaries(st.text(max_size=6), SCALARS, max_size=3),
    "fault_tolerance": st.booleans(),
    "fault_tolerance_config": st.fixed_dictionaries({"faultToleranceLimit": NUMBERS}),
    "enable_bccl": st.booleans(),
    "image_config": st.fixed_dictionaries({"username": SCALARS, "password": SCALARS}),
    "tensorboard_config": st.fixed_dictionaries({"enableTensorboard": SCALARS}),
    "alert_config": st.fixed_dictionaries({"alertIds": JSONISH}),
    "retention_period": st.sampled_from(["1d", "12h", "forever", ""]),
    "max_running_time": st.sampled_from(["30m", "12h", "2d", "1w", ""]),
    "code_source": st.fixed_dictionaries(
        {"mountPath": st.sampled_from(["/workspace", ""]), "bosTemporaryToken": SCALARS}
    ),
    "log_collection_file_patterns": st.lists(st.sampled_from(["/w/*.log", ""]), max_size=2),
    "required_node_affinity": st.lists(st.sampled_from(["node-1", "10.0.0.2"]), max_size=2),
    "preferred_node_affinity": st.one_of(st.lists(SCALARS, max_size=2), SCALARS),
    "advanced_settings": st.fixed_dictionaries(
        {"runtimeEnv": SCALARS, "SubmitterBackoffLimit": NUMBERS}
    ),
}
