"""One bad value per operator parameter, and a piece of the field name its error must carry.

A create field's fourth edit (``airflow_provider_aihc/job_parameters.py``, "Adding a field"):
a new operator parameter gets its bad values here. ``tests/unit/test_job_parameters.py``
checks in the unit lane that every parameter has some; ``tests/reliability/test_bad_input.py``
tries each through a real ``execute`` against the emulator (refused by name, nothing sent).
"""

from __future__ import annotations

import math
from typing import Any

NAN, INF = math.nan, math.inf
#: ``(operator parameter, bad value, part of the field name the error carries)``.
BAD_VALUES: list[tuple[str, Any, str]] = [
    *(("name", v, "name") for v in ("Bad_Name", "-x", "x" * 51, "", 5, "a b", "ü")),
    *(("image", v, "jobSpec.image") for v in ("", 5, [], {})),
    *(("command", v, "jobSpec.command") for v in ("", 7, ["ls"])),
    *(("job_queue", v, "queue") for v in ("", 5, [])),
    *(("replicas", v, "replicas") for v in (0, -1, "abc", 1.5, "1.5", 2**31, [1])),
    *(
        ("job_resources", v, "resources")
        for v in ({"gpu": -1}, {"cpu": "x"}, [1, 2], "{not json", [{"quantity": 1}], {"": 1})
    ),
    *(
        ("envs", v, "envs")
        for v in ([{"value": "x"}], "{bad", 5, [{"name": ""}], [{"name": "A"}, {"name": "A"}])
    ),
    *(("priority", v, "priority") for v in ("urgent", "HIGH", "", 1)),
    *(("job_framework", v, "jobFramework") for v in ("TFJob", "pytorchjob", "", 0)),
    *(("enable_rdma", v, "enableRDMA") for v in ("maybe", 2, [1], {})),
    *(
        ("datasources", v, "datasources")
        for v in ([{"type": "pfs", "mountPath": "rel"}], "x{", [1], [{"mountPath": "/m"}])
    ),
    *(("labels", v, "labels") for v in ([{"key": ""}], [{"value": "x"}], "[", 7)),
    *(("fault_tolerance", v, "faultTolerance") for v in ("maybe", 3, [])),
    *(
        ("fault_tolerance_config", v, "faultToleranceConfig")
        for v in ("{x", [1], {"faultToleranceLimit": -1}, {"unknownKey": 1})
    ),
    *(("enable_bccl", v, "enableBccl") for v in (True, "maybe")),
    *(("image_config", v, "imageConfig") for v in ("{x", [1], {"username": "u"}, {"pw": 1})),
    *(("tensorboard_config", v, "tensorboardConfig") for v in ("{x", [1], {"unknown": 1})),
    *(("alert_config", v, "alertConfig") for v in ("{x", [1], {"unknown": 1})),
    # retentionPeriod: malformed (both API versions take a well-formed one: bce-sdk-go
    # api/v1/aiJob.go:183, bce-openapi-meta CreateJob.json:240).
    *(("retention_period", v, "retentionPeriod") for v in ("forever", "0d", 5)),
    # The official v1 fields (bce-sdk-go api/v1/aiJob.go:175-190) and v2's advancedSettings
    # (bce-openapi-meta CreateJob.json); a valid advancedSettings is still refused on v1.
    *(("max_running_time", v, "runningTimeoutStopTimeUnit") for v in ("12x", "", "-1h", 5, [1])),
    *(("code_source", v, "codeSource") for v in ("{x", [1], {"unknown": 1}, 5)),
    *(
        (param, v, wire)
        for param, wire in (
            ("log_collection_file_patterns", "logCollectionFilePatterns"),
            ("required_node_affinity", "requiredNodeAffinity"),
            ("preferred_node_affinity", "preferredNodeAffinity"),
        )
        for v in ("[x", {"a": 1}, [1], 5)
    ),
    *(
        ("advanced_settings", v, "advancedSettings")
        for v in ("{x", [1], {"unknown": 1}, 5, {"runtimeEnv": "{}"})
    ),
    *(("resource_pool_id", v, "resource_pool_id") for v in ("a/b", "..", ".", " ", "x\\y")),
    ("body", "{bad json", "body"),
    ("body", "[1]", "body"),
    ("body", 5, "body"),
    ("body", {"jobSpec": "x"}, "jobSpec"),
    ("body", {"replicas": 2}, "replicas"),
    ("body", {"enableRdma": True}, "enableRdma"),
    ("body", {"jobSpec": {"replicas": 0}}, "jobSpec.replicas"),
    *(("poll_interval", v, "poll_interval") for v in (0, -1, "abc", NAN, INF, True, None)),
    *(("timeout", v, "timeout") for v in (-1, "x", NAN, INF, True, -0.001)),
    *(("aihc_conn_id", v, "aihc_conn_id") for v in ("aihc_broken", "aihc_hostless")),
]
