"""Retraining written as TaskFlow: the training function itself runs in the AIHC job.

``plan`` picks the run's hyperparameters; ``train`` is ``@task.aihc_python``: its body runs
in the job on every replica (two here), with AIHC's distributed environment (``RANK``,
``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``), and what rank 0 returns is the task's
value; ``evaluate`` gets that value, and the ``metrics`` the operator read from the job's
log, like any TaskFlow value.

The training is deliberately small and stdlib only, so that it runs anywhere, the emulator
included (``python -m airflow_provider_aihc.emulator --execute`` runs each replica as a
local process; ``make demo`` does that): a linear model ``y = w·x + b`` fitted by gradient
descent on generated data, data-parallel: each replica makes its own shard, and every step
the replicas average their gradients through rank 0 over TCP (what ``torch.distributed``'s
all-reduce does over NCCL).  Replace the body with your own training; keep the imports
inside the function (it runs in the job's image, not on the worker).
"""

from __future__ import annotations

import os
from datetime import datetime

try:
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.11
    from airflow import DAG  # type: ignore[assignment,no-redef]
    from airflow.decorators import task  # type: ignore[no-redef]

#: How often to look at the job. Minutes are plenty for real training; the demo uses less.
POLL_SECONDS = float(os.environ.get("AIHC_EXAMPLE_POLL_SECONDS", "60"))
IMAGE = "registry.baidubce.com/aihc-aiak/aiak-training-llm:ubuntu22.04-cu12.3-torch2.2.0"

with DAG(
    dag_id="aihc_taskflow_retraining",
    schedule=None,
    start_date=datetime(2025, 1, 1),
    catchup=False,
    tags=["aihc", "example", "taskflow"],
):

    @task
    def plan() -> dict[str, float]:
        """The run's hyperparameters (a real DAG might read them from a tuning step)."""
        return {"lr": 0.5, "epochs": 30, "rows_per_replica": 200}

    @task.aihc_python(
        image=IMAGE,
        replicas=2,
        job_resources={"baidu.com/a800_80g_cgpu": 8},
        metrics={"loss": r"loss=([0-9.]+)", "w": r"w=(-?[0-9.]+)"},
        poll_interval=POLL_SECONDS,
    )
    def train(hyper: dict[str, float]) -> dict[str, float]:
        import json
        import os
        import random
        import socket
        import time

        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        address = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))

        # Each replica's own shard of y = 3x + 2 + noise.
        rng = random.Random(rank)
        xs = [rng.uniform(-1, 1) for _ in range(int(hyper["rows_per_replica"]))]
        data = [(x, 3.0 * x + 2.0 + rng.gauss(0, 0.1)) for x in xs]

        # Rendezvous: rank 0 accepts one connection per other rank.
        if rank == 0:
            server = socket.create_server(address)
            peers = [server.accept()[0].makefile("rw") for _ in range(world - 1)]
        else:
            for _ in range(300):
                try:
                    peers = [socket.create_connection(address).makefile("rw")]
                    break
                except ConnectionRefusedError:
                    time.sleep(0.1)

        def all_reduce(values: list[float]) -> list[float]:
            """The mean over replicas (rank 0 sums and sends the result back)."""
            if rank != 0:
                peers[0].write(json.dumps(values) + "\n")
                peers[0].flush()
                return json.loads(peers[0].readline())
            total = list(values)
            for peer in peers:
                theirs = json.loads(peer.readline())
                total = [total[i] + theirs[i] for i in range(len(total))]
            mean = [value / world for value in total]
            for peer in peers:
                peer.write(json.dumps(mean) + "\n")
                peer.flush()
            return mean

        w, b = 0.0, 0.0
        for epoch in range(1, int(hyper["epochs"]) + 1):
            grad_w = sum(2 * (w * x + b - y) * x for x, y in data) / len(data)
            grad_b = sum(2 * (w * x + b - y) for x, y in data) / len(data)
            grad_w, grad_b = all_reduce([grad_w, grad_b])
            w, b = w - hyper["lr"] * grad_w, b - hyper["lr"] * grad_b
            loss = all_reduce([sum((w * x + b - y) ** 2 for x, y in data) / len(data)])[0]
            if rank == 0:
                print(f"epoch {epoch:3d} loss={loss:.6f} w={w:.4f} b={b:.4f}", flush=True)
        return {"w": round(w, 4), "b": round(b, 4), "loss": round(loss, 6), "replicas": world}

    @task
    def evaluate(model: dict[str, float], **context: object) -> str:
        """Promote the model when it fits: the job's own return value and its metrics."""
        ti = context["ti"]
        metrics = ti.xcom_pull(task_ids="train", key="metrics")  # type: ignore[attr-defined]
        print(f"Trained model: {model}; metrics read from the job's log: {metrics}")
        if model["loss"] > 0.05:
            raise ValueError(f"loss {model['loss']} is too high to promote")
        return f"promoted w={model['w']} b={model['b']}"

    evaluate(train(plan()))
