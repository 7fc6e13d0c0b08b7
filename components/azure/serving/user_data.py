"""The replica's cloud-init custom data: write the queue worker and its Service Bus client, pull the weights
from Blob Storage with the replica's managed identity, pull the server image, and run both as systemd units
on every boot (a standby VM boots once to prepare, is deallocated, then boots again when it joins the group).

Ubuntu-HPC 24.04 carries the NVIDIA driver and AzCopy; Docker and the NVIDIA container toolkit are installed at
first boot when the image lacks them. The Service Bus client (azure-servicebus, azure-identity) goes into a
venv: Ubuntu 24.04's system Python refuses pip installs (PEP 668).
"""

from __future__ import annotations

from accelstack.components.azure.node_platform import AZCOPY_FUNCTION, azcopy_sync_command
from accelstack.components.base import ServingServiceArgs
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.components.replica import proxy_files, worker_files
from accelstack.components.replica.server import health_wait_command, server_arguments
from accelstack.components.templates import template_environment
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.models import ServingSpec

MODEL_DIR = "/opt/accelstack/models"
WORKER_DIR = "/opt/accelstack"
QUEUE_CLIENT_MODULE = "servicebus_queue"
REPLICA_USER_DATA_FILE = "replica-user-data.yaml"
# Azure custom data: at most 64 KB once base64-encoded (learn.microsoft.com/azure/virtual-machines/custom-data).
CUSTOM_DATA_LIMIT_BYTES = 65535
SERVICE_BUS_PACKAGES = ("azure-servicebus==7.14.2", "azure-identity==1.23.0")

_templates = template_environment("accelstack.components.azure.serving")


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
) -> str:
    """With `admission` the admission proxy fronts the server; otherwise the queue worker drains `namespace`."""
    model = serving.model
    syncs = [(model.weights_uri, f"{MODEL_DIR}/base")] + [
        (a.uri, f"{MODEL_DIR}/adapters/{a.name}") for a in model.adapters
    ]
    return _templates.get_template("replica-cloud-config.yaml.j2").render(
        worker_dir=WORKER_DIR,
        worker_files=proxy_files()
        if admission
        else worker_files("accelstack.components.azure.replica", QUEUE_CLIENT_MODULE),
        model_dir=MODEL_DIR,
        azcopy_function=AZCOPY_FUNCTION,
        syncs=[azcopy_sync_command(src, dst, client_id) for src, dst in syncs],
        image=serving.replicas.server_image,
        server=server_arguments(serving, plan),
        environment=(
            dict(admission.environment)
            if admission
            else worker_environment(serving, plan, namespace=namespace, client_id=client_id)
        ),
        proxy=admission is not None,
        server_port=plan.server_port,
        packages=" ".join(SERVICE_BUS_PACKAGES),
        stop_timeout=plan.worker_drain_seconds + 30,
        health_wait=health_wait_command(serving, plan),
    )


PLACEHOLDERS = {"namespace": "${SERVICE_BUS_NAMESPACE}", "client_id": "${AZURE_CLIENT_ID}"}


def render_replica_artifacts(args: ServingServiceArgs) -> dict[str, str]:
    """What `accelstack render` writes: the replica custom data (from the plan the service deploys), deploy-time
    names as `${NAME}` placeholders."""
    serving = args.spec.serving
    admission = ReplicaAdmission.where_asked(serving, args.plan, client_hop=GATEWAY_CLIENT_HOP)
    names = {"client_id": PLACEHOLDERS["client_id"]} if admission else PLACEHOLDERS
    return {REPLICA_USER_DATA_FILE: replica_user_data(serving, args.plan, **names, admission=admission)}
