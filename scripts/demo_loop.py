"""``make demo-loop``: the retraining example closing the loop on a local AIHC.

Starts the emulator (v2 actions) on a free port, creates the online service the example
rolls (as the one-off deploy would), runs ``airflow dags test aihc_scheduled_retraining``
with that service, stops the emulator, and prints what the loop left, read back through
the hook: the dataset version, the model version, the service's change and how many of
its instances serve the new version.  Exits non-zero on any failure.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from demo import BIN, HOME, _airflow_env, _emulator_url, _migrate_once

DAG_ID = "aihc_scheduled_retraining"
#: The online service the example rolls (it exists before the DAG runs).
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


def main() -> int:
    started = time.monotonic()
    env = _airflow_env()
    _migrate_once(env)
    secret = secrets.token_urlsafe(24)
    emulator = subprocess.Popen(
        [sys.executable, "-m", "airflow_provider_aihc.emulator", "--port", "0",
         "--secret-access-key", secret],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        url = _emulator_url(emulator)
        print(f"demo-loop: AIHC emulator at {url}", flush=True)
        from airflow_provider_aihc.emulator.connection import connection_to

        conn = connection_to(url, secret_access_key=secret, api_version="v2").json
        env["AIRFLOW_CONN_AIHC_DEFAULT"] = os.environ["AIRFLOW_CONN_AIHC_DEFAULT"] = conn
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        hook = AIHCHook()
        service_id = hook.create_service(SERVICE_CONF)
        print(f"demo-loop: airflow dags test {DAG_ID} (log: {HOME / 'demo-loop.log'})")
        run = subprocess.run(
            [str(BIN / "airflow"), "dags", "test", DAG_ID, "--conf",
             json.dumps({"service_id": service_id})],
            env={**env, "AIHC_EXAMPLE_POLL_SECONDS": "0.2"},
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        output = run.stdout + run.stderr
        (HOME / "demo-loop.log").write_text(output)
        ok = run.returncode == 0 and "state=success" in output
        ok = _summarise(hook, service_id, ok, time.monotonic() - started) and ok
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)
    if not ok:
        print(output[-4000:], file=sys.stderr)
        print("demo-loop: FAILED (full log above and in .airflow/demo-loop.log)", file=sys.stderr)
    return 0 if ok else 1


def _summarise(hook: object, service_id: str, dag_ok: bool, elapsed: float) -> bool:
    """Print the loop's end as AIHC answers it; whether it is one of each, serving."""
    from airflow_provider_aihc.hooks.aihc import AIHCHook

    assert isinstance(hook, AIHCHook)
    datasets = hook.list_datasets("clicks")
    data_versions = [v for d in datasets for v in hook.list_dataset_versions(d.id)]
    models = hook.list_models("clicks-ranker")
    versions = [(m.id, v) for m in models for v in hook.list_model_versions(m.id)]
    updates = hook.list_service_changelogs(service_id, change_type=2)
    detail = hook.get_service(service_id)
    envs = detail.service["containers"][0].get("envs", {})
    serving = [
        i for i in detail.instances
        if i.status.status == "Running" and i.status.available_containers > 0
        and i.status.available_containers == i.status.total_containers
    ]  # fmt: skip
    wanted = detail.service.get("instanceCount")
    print()
    print("=" * 72)
    print(f"DAG run          : {'success' if dag_ok else 'FAILED'} ({DAG_ID})")
    for version in data_versions:
        print(f"dataset version  : {version.id} (dataset clicks, {version.storage_path})")
    for model_id, version in versions:
        print(f"model version    : {version.id} (model {model_id}, {version.storage_path})")
    print(f"service          : {service_id} ({SERVICE_CONF['name']})")
    for change in updates:
        print(f"change           : {change.change_id} ({change.description})")
    print(f"serving          : AIHC_MODEL_VERSION={envs.get('AIHC_MODEL_VERSION', '-')}")
    print(f"instances serving: {len(serving)} of {wanted}")
    print(f"time taken       : {elapsed:.1f} s")
    print("=" * 72)
    one_each = len(data_versions) == len(versions) == len(updates) == 1
    return (
        one_each
        and bool(versions)
        and envs.get("AIHC_MODEL_VERSION", "").endswith(versions[0][1].id)
    )


if __name__ == "__main__":
    sys.exit(main())
