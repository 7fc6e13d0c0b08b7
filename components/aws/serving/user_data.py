"""The replica boot script: cloud-init user data that prepares a replica (weights, image) for the warm
pool and starts the server and the admission-queue worker when it enters service."""

from __future__ import annotations

import base64
import bz2
from collections.abc import Sequence
from importlib import resources

from accelstack.clouds.aws.catalog import EC2_USER_DATA_MAX_BYTES
from accelstack.components.aws.node_platform import AWS_CLI_FUNCTION, IMDS_FUNCTION
from accelstack.components.aws.serving.hook import READY_HOOK, READY_HOOK_HEARTBEAT_EVERY_SECONDS, replica_group_name
from accelstack.components.base import ServingServiceArgs
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.components.replica import ADMISSION_PROXY, admission_proxy_source
from accelstack.components.replica.boot_status import STATUS_COMMAND, STATUS_SCRIPT
from accelstack.components.replica.server import health_url, server_arguments
from accelstack.components.templates import template_environment
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

MODEL_DIR = "/opt/accelstack/models"

_templates = template_environment("accelstack.components.aws.serving")


# The admission-queue worker is a real module (tested against a local SQS and inference server): the
# neutral worker and its SQS client, side by side in WORKER_DIR on the replica. They ship verbatim
# inside the user data, as one bzip2 stream (each file after a "NAME SIZE" line; one stream
# compresses both better than two) in base85 (a quarter larger, where base64 is a third): raw they
# would push the script past EC2's 16 KB user-data limit. Not gzip: zlib and zlib-ng (Fedora's zlib) compress the same bytes differently,
# and changed user data means a new launch template version and a rolling instance refresh of the
# whole fleet; bzip2's output has not changed in over a decade.
WORKER_DIR = "/opt/accelstack"
QUEUE_CLIENT_MODULE = "sqs_queue"
# The replica's boot-status recorder (components/replica/boot_status.py) travels in the same stream; the boot
# script installs it as STATUS_COMMAND.
STATUS_FILE_NAME = "replica-status.py"
_STATUS_FILE = {STATUS_FILE_NAME: ("components/replica/boot_status.py", STATUS_SCRIPT.encode())}
WORKER_FILES: dict[str, tuple[str, bytes]] = {  # file name on the replica -> (repository path, source)
    "queue_worker.py": (
        "components/replica/queue_worker.py",
        resources.files("accelstack.components.replica").joinpath("queue_worker.py").read_bytes(),
    ),
    f"{QUEUE_CLIENT_MODULE}.py": (
        f"components/aws/replica/{QUEUE_CLIENT_MODULE}.py",
        resources.files("accelstack.components.aws.replica").joinpath(f"{QUEUE_CLIENT_MODULE}.py").read_bytes(),
    ),
    **_STATUS_FILE,
}
# With admission on the replicas (serving.admission.kind replica): the admission proxy alone, stdlib only.
PROXY_FILES: dict[str, tuple[str, bytes]] = {
    ADMISSION_PROXY: (f"components/replica/{ADMISSION_PROXY}", admission_proxy_source()),
    **_STATUS_FILE,
}
USER_DATA_LIMIT_BYTES = EC2_USER_DATA_MAX_BYTES  # raw user data, before base64
# The ALB appends the address it received the request from to X-Forwarded-For: the last entry is the client's
# ("HTTP headers and Application Load Balancers", X-Forwarded-For, append mode: the default).
ALB_CLIENT_HOP = 1


EMBEDDED_LINE_LENGTH = 100


def embedded_worker(files: dict[str, tuple[str, bytes]] = WORKER_FILES) -> str:
    """The worker's files as base85 lines of one bzip2 stream (deterministic: same sources, same text).
    The base85 alphabet has no quote or backslash; the quoted heredoc takes `$` and backquotes literally."""
    bundle = b"".join(f"{name} {len(source)}\n".encode() + source for name, (_, source) in files.items())
    text = base64.b85encode(bz2.compress(bundle, 9)).decode()
    return "\n".join(text[i : i + EMBEDDED_LINE_LENGTH] for i in range(0, len(text), EMBEDDED_LINE_LENGTH))


def worker_manifest(files: dict[str, tuple[str, bytes]] = WORKER_FILES) -> str:
    """The shipped files' repository paths, for the boot script's comment."""
    return " and ".join(origin for origin, _ in files.values())


def worker_environment(
    serving: ServingSpec, plan: ServingPlan, *, region: str, request_queue_url: str, response_queue_url: str
) -> dict[str, str]:
    """What the worker reads (`accelstack.components.replica.queue_worker.Config.from_env`) and its SQS
    client (`accelstack.components.aws.replica.sqs_queue.from_env`)."""
    return {
        "QUEUE_CLIENT": QUEUE_CLIENT_MODULE,
        "AWS_REGION": region,
        "REQUEST_QUEUE_URL": request_queue_url,
        "RESPONSE_QUEUE_URL": response_queue_url,
        "SERVER_PORT": str(plan.server_port),
        "TTL_SECONDS": str(serving.admission.ttl_seconds),
        "WORKER_CONCURRENCY": str(plan.concurrency),  # the same N the backlog target is multiplied by
        # The lease is SQS's visibility timeout: the queue's default, and what each extension renews.
        "LEASE_SECONDS": str(plan.visibility_timeout_seconds),
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
    request_queue_url: str = "",
    response_queue_url: str = "",
    admission: ReplicaAdmission | None = None,
    fetch: Sequence[str] | None = None,
) -> str:
    """Cloud-init script. `fetch`: the lines that read the weights from another cloud (components.handoff.fetch),
    instead of `aws s3 sync`. It installs a boot unit that runs on EVERY boot, because warm-pool
    instances boot twice: once to prepare (pull image and weights onto EBS, then stop) and again
    when they enter service (start the server). Each boot completes the launch lifecycle hook only
    when its job is done, so an instance never goes to the pool or into service half-prepared.
    With `admission` (admission on the replicas) the admission proxy runs in front of the server;
    otherwise the queue worker drains the request queue."""
    model = serving.model
    syncs = [
        (model.weights_uri, f"{MODEL_DIR}/base"),
        *((a.uri, f"{MODEL_DIR}/adapters/{a.name}") for a in model.adapters),
    ]
    files = PROXY_FILES if admission else WORKER_FILES
    environment = (
        dict(admission.environment)
        if admission
        else worker_environment(
            serving, plan, region=region, request_queue_url=request_queue_url, response_queue_url=response_queue_url
        )
    )
    script = _templates.get_template("replica-boot.sh.j2").render(
        aws_cli=AWS_CLI_FUNCTION,
        imds=IMDS_FUNCTION,
        model_dir=MODEL_DIR,
        worker_dir=WORKER_DIR,
        worker_manifest=worker_manifest(files),
        worker_b85=embedded_worker(files),
        model_name=model.name,
        image=serving.replicas.server_image,
        server=server_arguments(serving, plan),
        environment=environment,
        proxy=admission is not None,
        # systemd waits for: the last long poll (20 s), the drain, and the release of what is left.
        stop_timeout=plan.worker_drain_seconds + 30,
        region=region,
        group_name=group_name,
        hook_name=hook_name,
        heartbeat_every=READY_HOOK_HEARTBEAT_EVERY_SECONDS,
        budget=plan.lifecycle_heartbeat_seconds,
        syncs=syncs,
        fetch=list(fetch or []),
        server_port=plan.server_port,
        health=health_url(serving, plan),
        status_file=STATUS_FILE_NAME,
        status_command=STATUS_COMMAND,
    )
    return _without_comment_lines(script)


def user_data_size_problem(
    serving: ServingSpec, plan: ServingPlan, *, region: str, account_id: str, group_name: str
) -> str | None:
    """The replica user data rendered with the longest queue URLs SQS can give (names <= 80
    characters) must stay under EC2's limit; each LoRA adapter adds a sync line and a server flag."""
    longest_url = f"https://sqs.{region}.amazonaws.com/{account_id}/{'q' * 80}"
    size = len(
        replica_user_data(
            serving, plan, region=region, group_name=group_name, hook_name=READY_HOOK,
            request_queue_url=longest_url, response_queue_url=longest_url,
            admission=ReplicaAdmission.where_asked(serving, plan, client_hop=ALB_CLIENT_HOP),
        ).encode()
    )  # fmt: skip
    if size < USER_DATA_LIMIT_BYTES:
        return None
    return (
        f"serving.model.adapters: {len(serving.model.adapters)} adapter(s) make the replica user data {size} bytes, "
        f"over EC2's {USER_DATA_LIMIT_BYTES}-byte limit; serve fewer adapters per stack or shorten their names and URIs"
    )


# What exists only once the queues do; the deployed user data gets their URLs from Pulumi outputs.
QUEUE_URL_PLACEHOLDERS = {"request_queue_url": "${REQUEST_QUEUE_URL}", "response_queue_url": "${RESPONSE_QUEUE_URL}"}
REPLICA_USER_DATA_FILE = "replica-user-data.sh"


def _without_comment_lines(script: str) -> str:
    """`script` without its comment-only lines (user data is capped at 16 KiB; the template keeps the comments),
    the shebang and the base85 block (whose alphabet has '#') untouched."""
    kept, in_b85 = [], False
    for line in script.splitlines(keepends=True):
        if line.rstrip("\n") == "B85":
            in_b85 = False
        comment = line.lstrip().startswith("#") and not line.startswith("#!")
        if in_b85 or not comment:
            kept.append(line)
        in_b85 = in_b85 or line.rstrip().endswith("<<'B85'")
    return "".join(kept)


def render_replica_artifacts(args: ServingServiceArgs) -> dict[str, str]:
    """What `accelstack render` writes for a serving stack: the replica user data as it will boot (from the
    plan the service deploys), the queue URLs as `${NAME}` placeholders (none without a queue)."""
    spec, serving = args.spec, args.spec.serving
    script = replica_user_data(
        serving, args.plan, region=spec.account.region, group_name=replica_group_name(spec.stack),
        hook_name=READY_HOOK, **QUEUE_URL_PLACEHOLDERS, admission=ReplicaAdmission.where_asked(serving, args.plan, client_hop=ALB_CLIENT_HOP),
    )  # fmt: skip
    return {REPLICA_USER_DATA_FILE: script}
