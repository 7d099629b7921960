"""The seed job of Baidu's v1 create example (Megatron LLaMA2-7B), as a body and as parameters."""

from __future__ import annotations

from typing import Any

SEED_IMAGE = (
    "registry.baidubce.com/aihc-aiak/aiak-megatron:"
    "ubuntu20.04-cu11.8-torch1.14.0-py38_v1.2.7.12_release"
)
SEED_COMMAND = """#! /bin/bash
MEGATRON_PATH=${MEGATRON_PATH:-"/workspace/AIAK-Megatron"}
DATA_PATH=/mnt/cluster/llama2/pile_wikipedia_demo/pile_wikipedia_demo
TOKENIZER_PATH=/mnt/cluster/llama2/Llama-2-7b-hf/
CHECKPOINT_PATH=/mnt/cluster/llama2/mcore_llama2_7b_tp1_pp1

GPUS_PER_NODE=8

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $WORLD_SIZE \\
    --node_rank $RANK --master_addr $MASTER_ADDR --master_port $MASTER_PORT"

MODEL_ARGS="--model-name llama2-7b --rotary-position-embeddings-in-fp32"
DATA_ARGS="--tokenizer-type HFTokenizer --hf-tokenizer-path $TOKENIZER_PATH \\
    --data-path $DATA_PATH --split 949,50,1"
TRAINING_ARGS="--training-phase pretrain --seq-length 4096 --max-position-embeddings 4096 \\
    --init-method-std 0.01 --micro-batch-size 1 --global-batch-size 128 --lr 1.0e-5 \\
    --train-iters 5000 --bf16 --load $CHECKPOINT_PATH --save $CHECKPOINT_PATH"

PYTHONPATH=$MEGATRON_PATH:$PYTHONPATH \\
    python -m torch.distributed.launch $DISTRIBUTED_ARGS \\
    $MEGATRON_PATH/aiak_training_llm/train.py \\
    $MODEL_ARGS $DATA_ARGS $TRAINING_ARGS
"""

#: The official example request, in wire form, as AIHC documents it.
SEED_BODY: dict[str, Any] = {
    "queue": "default",
    "priority": "normal",
    "jobFramework": "PyTorchJob",
    "name": "test-api-llama2-7b-4",
    "jobSpec": {
        "command": SEED_COMMAND,
        "image": SEED_IMAGE,
        "replicas": 1,
        "resources": [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}],
        "enableRDMA": True,
        "envs": [{"name": "CUDA_DEVICE_MAX_CONNECTIONS", "value": "1"}],
    },
    "datasources": [{"type": "pfs", "name": "pfs-7xWeAt", "mountPath": "/mnt/cluster"}],
}

#: The same job as operator parameters, in their friendliest forms.
SEED_PARAMS: dict[str, Any] = {
    "name": "test-api-llama2-7b-4",
    "image": SEED_IMAGE,
    "command": SEED_COMMAND,
    "job_queue": "default",
    "replicas": 1,
    "job_resources": {"baidu.com/a800_80g_cgpu": 8},
    "envs": {"CUDA_DEVICE_MAX_CONNECTIONS": 1},
    "priority": "normal",
    "job_framework": "PyTorchJob",
    "enable_rdma": True,
    "datasources": [{"type": "pfs", "name": "pfs-7xWeAt", "mount_path": "/mnt/cluster"}],
}

#: The smallest valid request, for tests that change one thing.
MINIMAL_PARAMS: dict[str, Any] = {"name": "job-1", "image": "busybox", "command": "true"}
