"""The replica's cloud-init custom data: write the queue worker and its Service Bus client, pull the weights
from Blob Storage with the replica's managed identity, pull the server image, and run both as systemd units
on every boot (a standby VM boots once to prepare, is deallocated, then boots again when it joins the group).

Ubuntu-HPC 24.04 carries the NVIDIA driver and AzCopy; Docker and the NVIDIA container toolkit are installed at
first boot when the image lacks them. The Service Bus client (azure-servicebus, azure-identity) goes into a
venv: Ubuntu 24.04's system Python refuses pip installs (PEP 668).
"""

from __future__ import annotations

from collections.abc import Sequence

from accelstack.components.azure.node_platform import (
    AZCOPY_FUNCTION,
    SCHEDULED_EVENTS_API_VERSION,
    azcopy_sync_command,
)
from accelstack.components.base import ServingServiceArgs
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.components.replica import proxy_files, worker_files
from accelstack.components.replica.cloud_config import (
    ADMISSION_UNIT,
    MODEL_DIR,
    WORKER_DIR,
    WORKER_UNIT,
    ReplicaCloudConfig,
    write_file,
)
from accelstack.components.replica.server import health_wait_command, server_arguments
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

QUEUE_CLIENT_MODULE = "servicebus_queue"
REPLICA_USER_DATA_FILE = "replica-user-data.yaml"
# Azure custom data: at most 64 KB once base64-encoded (learn.microsoft.com/azure/virtual-machines/custom-data).
CUSTOM_DATA_LIMIT_BYTES = 65535
SERVICE_BUS_PACKAGES = ("azure-servicebus==7.14.2", "azure-identity==1.23.0")

CONTAINER_RUNTIME_PATH = "/usr/local/bin/accelstack-container-runtime"
CONTAINER_RUNTIME_SCRIPT = """\
#!/bin/bash
# Docker and the NVIDIA container toolkit, when the image has none (NVIDIA's apt repository:
# docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html).
set -euo pipefail
command -v docker >/dev/null || apt-get install -y docker.io
if ! command -v nvidia-ctk >/dev/null; then
  curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | gpg --dearmor -o /usr/share/keyrings/nvidia-container-toolkit.gpg
  curl -fsSL https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list \\
    | sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit.gpg] https://#' \\
    > /etc/apt/sources.list.d/nvidia-container-toolkit.list
  apt-get update && apt-get install -y nvidia-container-toolkit
fi
nvidia-ctk runtime configure --runtime=docker
systemctl restart docker
"""


# The replica's side of the scale set's terminate notification (replicas.py): poll Scheduled Events for a Terminate
# event naming this VM, stop the unit in front of the server (SIGTERM: it drains for DRAIN_SECONDS; systemctl waits
# for it), then approve the event so the deletion goes ahead (POST StartRequests; learn.microsoft.com/azure/
# virtual-machines/linux/scheduled-events). The event lists VMs by their IMDS compute/name.
TERMINATE_WATCH_PATH = "/usr/local/bin/accelstack-terminate-watch"
TERMINATE_WATCH_UNIT = "accelstack-terminate-watch.service"
TERMINATE_WATCH_SCRIPT = f"""\
#!/bin/bash
set -uo pipefail
FRONT=$1
IMDS=${{IMDS_ENDPOINT:-http://169.254.169.254}}/metadata
EVENTS="$IMDS/scheduledevents?api-version={SCHEDULED_EVENTS_API_VERSION}"
me=$(curl -sf -m 5 -H Metadata:true "$IMDS/instance/compute/name?api-version=2021-02-01&format=text") || exit 1
while true; do
    id=$(curl -sf -m 5 -H Metadata:true "$EVENTS" | ME="$me" python3 -c '
import json, os, sys
for event in json.load(sys.stdin).get("Events", []):
    if event.get("EventType") == "Terminate" and os.environ["ME"] in event.get("Resources", []):
        print(event["EventId"])
        break
' 2>/dev/null)
    if [ -n "$id" ]; then
        echo "accelstack: Terminate event $id for $me: draining $FRONT"
        systemctl stop "$FRONT"
        curl -sf -m 5 -H Metadata:true -X POST -d "{{\\"StartRequests\\": [{{\\"EventId\\": \\"$id\\"}}]}}" "$EVENTS"
        exit 0
    fi
    sleep 5
done
"""


def front_stop_seconds(plan: ServingPlan) -> int:
    """How long systemd lets the unit in front of the server stop: its drain, then releasing what is left."""
    return plan.worker_drain_seconds + 30


def terminate_watch_unit(front_unit: str) -> str:
    return (
        "[Unit]\n"
        "Description=accelstack: drain this replica before a scale-in deletes it (Scheduled Events, Terminate)\n"
        f"After={front_unit}\n"
        "[Service]\n"
        f"ExecStart={TERMINATE_WATCH_PATH} {front_unit}\n"
        "Restart=always\n"
        "RestartSec=5\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n"
    )


def worker_environment(serving: ServingSpec, plan: ServingPlan, *, namespace: str, client_id: str) -> dict[str, str]:
    from accelstack.components.azure.serving.queue import REQUESTS, RESPONSES, lock_seconds

    return {
        "QUEUE_CLIENT": QUEUE_CLIENT_MODULE,
        "SERVICE_BUS_NAMESPACE": namespace,
        "REQUEST_QUEUE": REQUESTS,
        "RESPONSE_QUEUE": RESPONSES,
        "AZURE_CLIENT_ID": client_id,  # the replicas' user-assigned identity (azure-identity reads it)
        "SERVER_PORT": str(plan.server_port),
        "TTL_SECONDS": str(serving.admission.ttl_seconds),
        "WORKER_CONCURRENCY": str(plan.concurrency),
        # The queue's lock duration: Service Bus renews a lock by that much, whatever the caller asks.
        "LEASE_SECONDS": str(lock_seconds(plan.visibility_timeout_seconds)),
        "GENERATION_TIMEOUT_SECONDS": str(plan.generation_timeout_seconds),
        "DRAIN_SECONDS": str(plan.worker_drain_seconds),
    }


# Application Gateway v2 appends the client's address (with its port) to X-Forwarded-For: the last entry
# (learn.microsoft.com/azure/application-gateway/how-application-gateway-works, "Modifications to the request").
GATEWAY_CLIENT_HOP = 1


def replica_user_data(
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    namespace: str = "",
    client_id: str,
    admission: ReplicaAdmission | None = None,
    fetch: Sequence[str] | None = None,
) -> str:
    """With `admission` the admission proxy fronts the server; otherwise the queue worker drains `namespace`.
    `fetch`: the lines that read the weights from another cloud (components.handoff.fetch), instead of AzCopy's."""
    model = serving.model
    front = ADMISSION_UNIT if admission else WORKER_UNIT
    syncs = [(model.weights_uri, f"{MODEL_DIR}/base")] + [
        (a.uri, f"{MODEL_DIR}/adapters/{a.name}") for a in model.adapters
    ]
    return ReplicaCloudConfig(
        comment=(
            "accelstack serving replica (Azure): the queue worker and its Service Bus client, the model weights from\n"
            "Blob Storage (AzCopy with the replica's managed identity) and the inference server, started on every boot."
        ),
        settings={"ssh_pwauth": False},
        shipped=(
            proxy_files() if admission else worker_files("accelstack.components.azure.replica", QUEUE_CLIENT_MODULE)
        ),
        environment=(
            dict(admission.environment)
            if admission
            else worker_environment(serving, plan, namespace=namespace, client_id=client_id)
        ),
        prepare_setup="" if fetch else f"{AZCOPY_FUNCTION}\nensure_azcopy\n",
        syncs=list(fetch or []) or [azcopy_sync_command(src, dst, client_id) for src, dst in syncs],
        image=serving.replicas.server_image,
        server=server_arguments(serving, plan),
        health_wait=health_wait_command(serving, plan),
        stop_timeout=front_stop_seconds(plan),
        proxy=admission is not None,
        worker_description="accelstack admission-queue worker (Service Bus peek-lock)",
        worker_command=[f"{WORKER_DIR}/venv/bin/python", f"{WORKER_DIR}/queue_worker.py"],
        worker_packages=["python3-venv"],
        worker_install=[
            ["/usr/bin/python3", "-m", "venv", f"{WORKER_DIR}/venv"],
            [f"{WORKER_DIR}/venv/bin/pip", "install", "--quiet", *SERVICE_BUS_PACKAGES],
        ],
        extra_files=[
            write_file(CONTAINER_RUNTIME_PATH, CONTAINER_RUNTIME_SCRIPT, "0755"),
            write_file(TERMINATE_WATCH_PATH, TERMINATE_WATCH_SCRIPT, "0755"),
            write_file(f"/etc/systemd/system/{TERMINATE_WATCH_UNIT}", terminate_watch_unit(front)),
        ],
        extra_units=[TERMINATE_WATCH_UNIT],
        first_commands=[[CONTAINER_RUNTIME_PATH]],
    ).text()


PLACEHOLDERS = {"namespace": "${SERVICE_BUS_NAMESPACE}", "client_id": "${AZURE_CLIENT_ID}"}


def render_replica_artifacts(args: ServingServiceArgs) -> dict[str, str]:
    """What `accelstack render` writes: the replica custom data (from the plan the service deploys), deploy-time
    names as `${NAME}` placeholders."""
    serving = args.spec.serving
    admission = ReplicaAdmission.where_asked(serving, args.plan, client_hop=GATEWAY_CLIENT_HOP)
    names = {"client_id": PLACEHOLDERS["client_id"]} if admission else PLACEHOLDERS
    return {REPLICA_USER_DATA_FILE: replica_user_data(serving, args.plan, **names, admission=admission)}
