"""The replica boot script: cloud-init user data that prepares a replica (weights, image) for the warm
pool and starts the server and the admission-queue worker when it enters service."""

from __future__ import annotations

import base64
import bz2
import hashlib
import shlex
from importlib import resources

from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec
from components.aws.serving.hook import READY_HOOK, READY_HOOK_HEARTBEAT_EVERY_SECONDS
from components.slurm import aws_cli_function

MODEL_DIR = "/opt/accelstack/models"

def server_arguments(serving: ServingSpec, plan: ServingPlan) -> list[str]:
    """vLLM OpenAI-compatible server flags: one base model, every LoRA adapter served beside it."""
    model = serving.model
    args = [
        "--model", "/models/base",
        "--served-model-name", model.name,
        "--port", str(serving.load_balancer.port),
        "--max-model-len", str(model.context_length),
        "--tensor-parallel-size", str(plan.tensor_parallel),
    ]  # fmt: skip
    dtype = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}.get(model.precision)
    if dtype:
        args += ["--dtype", dtype]
    elif model.precision == "fp8":
        args += ["--quantization", "fp8"]  # dynamic FP8 on Ada/Hopper; pre-quantized checkpoints load as-is
    # int8/int4: the checkpoint itself is quantized (AWQ/GPTQ); vLLM reads the method from its config.
    if model.adapters:
        args += [
            "--enable-lora",
            "--max-loras", str(len(model.adapters)),
            "--max-lora-rank", str(max(a.rank for a in model.adapters)),
            "--lora-modules", *(f"{a.name}=/models/adapters/{a.name}" for a in model.adapters),
        ]  # fmt: skip
    return args


# The admission-queue worker is a real module (tested against a local SQS and inference server);
# it ships verbatim inside the user data, bzip2-compressed and base64-encoded: raw it would push the
# script past EC2's 16 KB user-data limit. Not gzip: zlib and zlib-ng (Fedora's zlib) compress the
# same bytes differently, and changed user data means a new launch template version and a rolling
# instance refresh of the whole fleet; bzip2's output has not changed in over a decade.
QUEUE_WORKER_SOURCE = resources.files("components.aws.replica").joinpath("queue_worker.py").read_bytes()
USER_DATA_LIMIT_BYTES = 16_384  # EC2: raw user data, before base64


def embedded_worker() -> str:
    """The worker's source as base64 lines of its bzip2 (deterministic: same source, same text)."""
    return base64.encodebytes(bz2.compress(QUEUE_WORKER_SOURCE, 9)).decode().rstrip("\n")


def worker_environment(
    serving: ServingSpec, plan: ServingPlan, *, region: str, request_queue_url: str, response_queue_url: str
) -> dict[str, str]:
    """What the worker reads (`components.aws.replica.queue_worker.Config.from_env`)."""
    return {
        "AWS_REGION": region,
        "REQUEST_QUEUE_URL": request_queue_url,
        "RESPONSE_QUEUE_URL": response_queue_url,
        "SERVER_PORT": str(serving.load_balancer.port),
        "TTL_SECONDS": str(serving.admission.ttl_seconds),
        "WORKER_CONCURRENCY": str(plan.concurrency),  # the same N the backlog target is multiplied by
        "VISIBILITY_TIMEOUT": str(plan.visibility_timeout_seconds),
        "GENERATION_TIMEOUT_SECONDS": str(plan.generation_timeout_seconds),
        "DRAIN_SECONDS": str(plan.worker_drain_seconds),
    }


def replica_user_data(
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    region: str,
    group_name: str,
    hook_name: str,
    request_queue_url: str,
    response_queue_url: str,
) -> str:
    """Cloud-init script. It installs a boot unit that runs on EVERY boot, because warm-pool
    instances boot twice: once to prepare (pull image and weights onto EBS, then stop) and again
    when they enter service (start the server). Each boot completes the launch lifecycle hook only
    when its job is done, so an instance never goes to the pool or into service half-prepared."""
    model = serving.model
    syncs = [f"aws s3 sync --only-show-errors {shlex.quote(model.weights_uri)} {MODEL_DIR}/base"]
    syncs += [
        f"aws s3 sync --only-show-errors {shlex.quote(a.uri)} {MODEL_DIR}/adapters/{a.name}" for a in model.adapters
    ]
    server = " ".join(shlex.quote(a) for a in server_arguments(serving, plan))
    image = shlex.quote(serving.replicas.server_image)
    port = serving.load_balancer.port
    health = shlex.quote(serving.load_balancer.health_path)
    sync_block = "\n".join(f"  {line}" for line in syncs)
    env = worker_environment(
        serving, plan, region=region, request_queue_url=request_queue_url, response_queue_url=response_queue_url
    )
    env_lines = "\n".join(f"Environment={key}={value}" for key, value in env.items())
    # systemd waits for: the last long poll (20 s), the drain, and the release of what is left.
    stop_timeout = plan.worker_drain_seconds + 30
    worker_sha256 = hashlib.sha256(QUEUE_WORKER_SOURCE).hexdigest()
    budget = plan.lifecycle_heartbeat_seconds
    heartbeat_every = READY_HOOK_HEARTBEAT_EVERY_SECONDS
    return f"""#!/bin/bash
set -euo pipefail
{aws_cli_function()}ensure_aws_cli  # the boot script syncs weights and completes the hook with it
mkdir -p /opt/accelstack {MODEL_DIR}
# components/aws/replica/queue_worker.py, sha256 {worker_sha256}
python3 -c 'import base64, bz2, sys; sys.stdout.buffer.write(bz2.decompress(base64.b64decode(sys.stdin.read())))' \\
  > /opt/accelstack/queue_worker.py <<'B64'
{embedded_worker()}
B64
cat > /etc/systemd/system/accelstack-inference.service <<'UNIT'
[Unit]
Description=accelstack inference server ({model.name})
After=docker.service
Requires=docker.service
[Service]
Restart=always
ExecStartPre=-/usr/bin/docker rm -f inference
ExecStart=/usr/bin/docker run --name inference --gpus all --network host --ipc host -v {MODEL_DIR}:/models:ro {image} {server}
[Install]
WantedBy=multi-user.target
UNIT
cat > /etc/systemd/system/accelstack-queue-worker.service <<'UNIT'
[Unit]
Description=accelstack admission-queue worker
After=accelstack-inference.service
[Service]
Restart=always
RestartSec=5
{env_lines}
ExecStart=/usr/bin/python3 /opt/accelstack/queue_worker.py
# SIGTERM: stop receiving, finish in-flight requests for DRAIN_SECONDS, release the rest.
KillSignal=SIGTERM
TimeoutStopSec={stop_timeout}
UNIT
cat > /opt/accelstack/boot.sh <<'BOOT'
#!/bin/bash
set -euo pipefail
imds() {{
  local token
  token=$(curl -sfX PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
  curl -sf -H "X-aws-ec2-metadata-token: $token" "http://169.254.169.254/latest/meta-data/$1"
}}
hook() {{
  aws autoscaling "$1" --region {region} --auto-scaling-group-name {group_name} \\
    --lifecycle-hook-name {hook_name} --instance-id "$(imds instance-id)" "${{@:2}}" || true
}}
# The hook's own timeout is short and fixed; a heartbeat every {heartbeat_every} s holds it open while
# weights and the image load, for at most the planner's budget. A replica still not ready then, or
# one that hangs, is abandoned (and replaced) one hook timeout later.
heartbeats() {{
  local sleeper
  trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  while [ "$SECONDS" -lt {budget} ]; do
    sleep {heartbeat_every} & sleeper=$!
    wait "$sleeper"
    hook record-lifecycle-action-heartbeat
  done
}}
heartbeats & heartbeat_pid=$!
complete() {{
  # Stop the heartbeats, and let one in flight finish, before the hook's result goes out.
  kill "$heartbeat_pid" 2>/dev/null || true
  wait "$heartbeat_pid" 2>/dev/null || true
  hook complete-lifecycle-action --lifecycle-action-result "$1"
}}
trap 'complete ABANDON' ERR
if [ ! -f {MODEL_DIR}/.complete ]; then
  # Weights live on the encrypted EBS root volume: instance-store NVMe is wiped when a warm-pool
  # instance stops, EBS keeps the download across the stop.
{sync_block}
  docker pull {image}
  # The worker's one dependency, installed while preparing: a warm start must not need the network.
  python3 -c 'import boto3' 2>/dev/null || python3 -m pip install --quiet boto3
  touch {MODEL_DIR}/.complete
fi
state=$(imds autoscaling/target-lifecycle-state || echo InService)
if [[ "$state" == Warmed:* ]]; then
  complete CONTINUE  # prepared: the group stops the instance into the warm pool
  exit 0
fi
systemctl start accelstack-inference.service
until curl -sf http://127.0.0.1:{port}{health} >/dev/null; do sleep 5; done
systemctl start accelstack-queue-worker.service
complete CONTINUE
BOOT
chmod +x /opt/accelstack/boot.sh
cat > /etc/systemd/system/accelstack-boot.service <<'UNIT'
[Unit]
Description=accelstack replica boot (prepare or serve)
After=network-online.target docker.service
Wants=network-online.target
[Service]
Type=oneshot
ExecStart=/opt/accelstack/boot.sh
[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable accelstack-boot.service
systemctl start --no-block accelstack-boot.service
"""


def user_data_size_problem(serving: ServingSpec, plan: ServingPlan, *, region: str, account_id: str, group_name: str) -> str | None:
    """The replica user data rendered with the longest queue URLs SQS can give (names <= 80
    characters) must stay under EC2's limit; each LoRA adapter adds a sync line and a server flag."""
    longest_url = f"https://sqs.{region}.amazonaws.com/{account_id}/{'q' * 80}"
    size = len(
        replica_user_data(
            serving, plan, region=region, group_name=group_name, hook_name=READY_HOOK,
            request_queue_url=longest_url, response_queue_url=longest_url,
        ).encode()
    )  # fmt: skip
    if size < USER_DATA_LIMIT_BYTES:
        return None
    return (
        f"serving.model.adapters: {len(serving.model.adapters)} adapter(s) make the replica user data {size} bytes, "
        f"over EC2's {USER_DATA_LIMIT_BYTES}-byte limit; serve fewer adapters per stack or shorten their names and URIs"
    )
