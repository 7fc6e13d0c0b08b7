"""The replica's cloud-init user data (metadata key `user-data`): write the queue worker and its Pub/Sub
client, pull the weights from Cloud Storage and the server image, and run both as systemd units on
every boot (a standby VM boots once to prepare, then again when it is started)."""

from __future__ import annotations

from collections.abc import Sequence

from accelstack.components.base import ServingServiceArgs
from accelstack.components.node_syntax import shell_word
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.components.replica import proxy_files, worker_files
from accelstack.components.replica.cloud_config import MODEL_DIR, WORKER_DIR, ReplicaCloudConfig
from accelstack.components.replica.server import health_wait_command, server_arguments
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

QUEUE_CLIENT_MODULE = "pubsub_queue"
REPLICA_USER_DATA_FILE = "replica-user-data.yaml"
# Compute Engine metadata: 256 KB per value (https://cloud.google.com/compute/docs/metadata/setting-custom-metadata#limitations).
METADATA_VALUE_LIMIT_BYTES = 256 * 1024


def worker_environment(
    serving: ServingSpec, plan: ServingPlan, *, project: str, request_subscription: str, response_topic: str
) -> dict[str, str]:
    return {
        "QUEUE_CLIENT": QUEUE_CLIENT_MODULE,
        "GOOGLE_CLOUD_PROJECT": project,
        "REQUEST_SUBSCRIPTION": request_subscription,
        "RESPONSE_TOPIC": response_topic,
        "SERVER_PORT": str(plan.server_port),
        "TTL_SECONDS": str(serving.admission.ttl_seconds),
        "WORKER_CONCURRENCY": str(plan.concurrency),
        "LEASE_SECONDS": str(min(plan.visibility_timeout_seconds, 600)),  # Pub/Sub ack deadline max 600 s
        "GENERATION_TIMEOUT_SECONDS": str(plan.generation_timeout_seconds),
        "DRAIN_SECONDS": str(plan.worker_drain_seconds),
    }


# The global external Application Load Balancer appends "<client-ip>,<load-balancer-ip>" to X-Forwarded-For:
# the client's address is the second entry from the right (cloud.google.com/load-balancing/docs/https,
# "X-Forwarded-For header").
LOAD_BALANCER_CLIENT_HOP = 2


def replica_user_data(
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    project: str,
    request_subscription: str = "",
    response_topic: str = "",
    admission: ReplicaAdmission | None = None,
    fetch: Sequence[str] | None = None,
) -> str:
    """With `admission` the admission proxy fronts the server; otherwise the queue worker pulls the subscription
    (its Pub/Sub library from pip: apt has no package; the worker runs under the system python3). `fetch`: the
    commands that read the weights from another cloud (components.handoff.fetch), instead of gcloud's own."""
    model = serving.model
    syncs = [(model.weights_uri, f"{MODEL_DIR}/base")] + [
        (a.uri, f"{MODEL_DIR}/adapters/{a.name}") for a in model.adapters
    ]
    return ReplicaCloudConfig(
        comment=(
            "accelstack serving replica (Compute Engine): the queue worker and its Pub/Sub client, the model\n"
            "weights from Cloud Storage and the inference server, started on every boot by systemd."
        ),
        shipped=proxy_files() if admission else worker_files("accelstack.components.gcp.replica", QUEUE_CLIENT_MODULE),
        environment=(
            dict(admission.environment)
            if admission
            else worker_environment(
                serving, plan, project=project, request_subscription=request_subscription, response_topic=response_topic
            )
        ),
        prepare_setup="",
        syncs=list(fetch or [])
        or [f"gcloud storage rsync --recursive {shell_word(src)} {shell_word(dst)}" for src, dst in syncs],
        image=serving.replicas.server_image,
        server=server_arguments(serving, plan),
        health_wait=health_wait_command(serving, plan),
        stop_timeout=plan.worker_drain_seconds + 30,
        proxy=admission is not None,
        worker_description="accelstack admission-queue worker (Pub/Sub pull)",
        worker_command=["/usr/bin/python3", f"{WORKER_DIR}/queue_worker.py"],
        worker_packages=["python3-pip"],
        worker_install=[["/usr/bin/python3", "-m", "pip", "install", "--quiet", "google-cloud-pubsub"]],
    ).text()


PLACEHOLDERS = {"request_subscription": "${REQUEST_SUBSCRIPTION}", "response_topic": "${RESPONSE_TOPIC}"}


def render_replica_artifacts(args: ServingServiceArgs) -> dict[str, str]:
    """What `accelstack render` writes: the replica user data (from the plan the service deploys), the Pub/Sub
    names as `${NAME}` placeholders."""
    spec = args.spec
    project = getattr(spec.account, "project_id", "")
    admission = ReplicaAdmission.where_asked(spec.serving, args.plan, client_hop=LOAD_BALANCER_CLIENT_HOP)
    names = {} if admission else PLACEHOLDERS
    return {
        REPLICA_USER_DATA_FILE: replica_user_data(
            spec.serving, args.plan, project=project, **names, admission=admission
        )
    }
