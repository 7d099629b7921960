"""Lineage of AIHC tasks: dataset naming, the asset schemes registered with Airflow, the
facets read from a job on the emulator over real HTTP, and no OpenLineage at DAG parse."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from aihc_jobs import job_body

from airflow_provider_aihc.emulator import DEFAULT_RESOURCE_POOL_ID
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.lineage.naming import (
    ASSET_SCHEMES,
    Location,
    asset_location,
    datasource_location,
)
from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS, Asset

POOL = DEFAULT_RESOURCE_POOL_ID


def _source(kind: str, name: str = "", source_path: str = "", **options: str) -> Location | None:
    return datasource_location(kind, name, source_path, options, POOL)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (("pfs", "pfs-7xWeAt"), ("pfs://pfs-7xWeAt", "/")),
        (("pfs", "pfs-7xWeAt", "/datasets/clicks/"), ("pfs://pfs-7xWeAt", "/datasets/clicks")),
        (("cfs", "cfs-a1", "data"), ("cfs://cfs-a1", "/data")),
        (("bos", "corpus", "/web/2025/"), ("bos://corpus", "web/2025")),
        (("bos", "", "corpus/web"), ("bos://corpus", "web")),
        (("bos", "corpus", "bos://corpus/web"), ("bos://corpus", "web")),
        (("hostPath", "ssd", "/mnt/ssd"), (f"hostpath://{POOL}", "/mnt/ssd")),
        (("dataset", "ds-42", "/v3"), ("aihc-dataset://ds-42", "/v3")),
        (("RapidFS", "rfs-1"), ("rapidfs://rfs-1", "/")),
    ],
)
def test_each_datasource_kind_has_a_stable_namespace_and_its_path_as_name(source, expected):
    assert _source(*source) == Location(*expected)


def test_a_host_path_given_as_an_option_is_named_by_it():
    assert _source("hostpath", "ssd", hostPath="/data/cache") == Location(
        f"hostpath://{POOL}", "/data/cache"
    )


def test_scratch_space_is_no_dataset():
    assert _source("emptyDir", "devshm") is None


@pytest.mark.parametrize(
    ("uri", "source"),
    [
        ("pfs://pfs-7xWeAt/datasets/clicks", ("pfs", "pfs-7xWeAt", "/datasets/clicks")),
        ("pfs://pfs-7xWeAt", ("pfs", "pfs-7xWeAt", "")),
        ("bos://corpus/web/2025", ("bos", "corpus", "web/2025")),
        ("cfs://cfs-a1/data/", ("cfs", "cfs-a1", "/data")),
        ("aihc-dataset://ds-42/v3", ("dataset", "ds-42", "/v3")),
        (f"hostpath://{POOL}/mnt/ssd", ("hostPath", "ssd", "/mnt/ssd")),
    ],
)
def test_an_asset_uri_names_the_same_dataset_as_the_datasource_that_mounts_it(uri, source):
    assert asset_location(uri) == _source(*source)


def test_airflow_converts_outlets_of_any_task_through_the_registered_schemes():
    from airflow.providers.common.compat.openlineage.utils.utils import translate_airflow_asset

    for scheme in ASSET_SCHEMES:
        dataset = translate_airflow_asset(Asset(f"{scheme}://store/a/b/"), None)
        assert dataset is not None, scheme
        assert (dataset.namespace, dataset.name) == (
            f"{scheme}://store",
            "a/b" if scheme == "bos" else "/a/b",
        )
    # Without a registered converter, Airflow drops an outlet from lineage.
    assert translate_airflow_asset(Asset("unregistered://store/a"), None) is None


def test_an_asset_uri_without_its_storage_is_refused_naming_the_form():
    expected = r"'pfs' must name its storage: pfs://<instance, bucket, dataset id or pool>/"
    if AIRFLOW_V_3_0_PLUS:
        with pytest.raises(ValueError, match=expected):
            Asset("pfs:///datasets/clicks")
    else:  # 2.11 warns (an error only with [core] strict_dataset_uri_validation)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Asset("pfs:///datasets/clicks")
        assert any("must name its storage" in str(w.message) for w in caught)


@pytest.fixture
def job_id(aihc_emulator) -> str:
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    datasources = [
        {"type": "pfs", "name": "pfs-7xWeAt", "sourcePath": "/d", "mountPath": "/a"},
        {"type": "pfs", "name": "pfs-7xWeAt", "sourcePath": "/d/", "mountPath": "/b"},
        {"type": "emptydir", "name": "devshm", "mountPath": "/dev/shm"},
    ]
    return AIHCHook().create_job(job_body("lineage-unit", datasources=datasources)).job_id


def _operator(job_id: str | None, **kwargs):
    from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

    operator = AIHCCreateJobOperator(task_id="train", image="img", command="true", **kwargs)
    operator.job_id = job_id
    return operator


def test_the_operator_reports_each_dataset_once_and_the_job_as_aihc_reports_it(
    aihc_emulator, job_id
):
    lineage = _operator(job_id).get_openlineage_facets_on_complete(None)

    assert [(d.namespace, d.name) for d in lineage.inputs] == [("pfs://pfs-7xWeAt", "/d")]
    facet = lineage.run_facets["aihcJob"]
    record = aihc_emulator.backend.job(job_id)
    assert (facet.jobId, facet.jobName, facet.status) == (job_id, "lineage-unit", record["status"])
    assert facet.reason is None


def test_the_sensor_reports_the_final_status_and_reason_but_no_inputs(aihc_emulator, job_id):
    from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

    aihc_emulator.backend.set_status(job_id, "Failed", reason="CUDA error: out of memory")
    sensor = AIHCJobSensor(task_id="wait", job_id=job_id, outlets=[Asset("pfs://pfs-x/m")])

    lineage = sensor.get_openlineage_facets_on_complete(None)

    assert lineage.inputs == []
    assert [(d.namespace, d.name) for d in lineage.outputs] == [("pfs://pfs-x", "/m")]
    facet = lineage.run_facets["aihcJob"]
    assert (facet.status, facet.reason) == ("Failed", "CUDA error: out of memory")


def test_a_job_that_cannot_be_read_is_reported_by_its_id_alone(aihc_emulator, job_id):
    aihc_emulator.backend.add_fault(scenarios.error(404, "ResourceNotFound", operation="GetJob"))
    operator = _operator(job_id, outlets=[Asset("bos://models/m")])

    lineage = operator.get_openlineage_facets_on_complete(None)

    assert lineage.inputs == []
    assert [(d.namespace, d.name) for d in lineage.outputs] == [("bos://models", "m")]
    assert set(lineage.run_facets) == {"externalQuery"}
    assert lineage.run_facets["externalQuery"].externalQueryId == job_id


def test_a_task_that_created_no_job_reports_its_outlets_only(aihc_emulator):
    lineage = _operator(None, outlets=[Asset("pfs://pfs-x/m")]).get_openlineage_facets_on_complete(
        None
    )

    assert (lineage.inputs, lineage.run_facets) == ([], {})
    assert [(d.namespace, d.name) for d in lineage.outputs] == [("pfs://pfs-x", "/m")]
    assert aihc_emulator.backend.requests == []


def test_dag_parsing_imports_no_openlineage():
    script = (
        "import sys\n"
        "import airflow_provider_aihc.operators.aihc, airflow_provider_aihc.sensors.aihc\n"
        "bad = ('openlineage.client', 'airflow.providers.openlineage.extractors',\n"
        "       'airflow_provider_aihc.lineage')\n"
        "print(sorted(m for m in sys.modules if m.startswith(bad)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
