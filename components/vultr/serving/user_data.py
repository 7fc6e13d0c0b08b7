"""The replica's cloud-init user data on Vultr: the admission proxy in front of the inference server (Vultr has no
queue: admission is always on the replicas), Docker and the NVIDIA container toolkit when the image lacks them, the
weights from Vultr Object Storage (S3 API at the region's cluster), and the server image; both run as systemd units.

The weights are read with a read-only key scoped to the model's prefix that never appears here: the document carries
a presigned URL for the object holding it, which the prepare script fetches once into WEIGHTS_KEY_FILE
(components/vultr/serving/weights_key.py; docs/deploy-vultr.md, "The weights credential"). Weights on OCI or Google
Cloud are read with a short-lived credential per replica instead (components/handoff/per_replica.py), with no key."""

from __future__ import annotations

from accelstack.clouds.vultr import catalog
from accelstack.components.base import ServingServiceArgs
from accelstack.components.handoff.per_replica import replica_fetch
from accelstack.components.node_syntax import shell_word
from accelstack.components.recipes.serving import ReplicaAdmission
from accelstack.components.replica import proxy_files
from accelstack.components.replica.cloud_config import MODEL_DIR, ReplicaCloudConfig, write_file
from accelstack.components.replica.server import health_wait_command, server_arguments
from accelstack.components.vultr.serving.weights_key import (
    URL_PLACEHOLDER,
    WEIGHTS_KEY_FILE,
    WEIGHTS_KEY_URL_FILE,
    fetch_key_setup,
)
from accelstack.planner.serving_plan import ServingPlan
from accelstack.spec.handoff import PER_REPLICA_PAIRS, ArtifactHandoff, artifact_handoff
from accelstack.spec.models import ServingSpec

REPLICA_USER_DATA_FILE = "replica-user-data.yaml"
# Vultr's load balancer (HAProxy) appends the client's address to X-Forwarded-For on HTTP(S) forwarding rules:
# the client is the last entry (docs.vultr.com/products/load-balancer, "client IP": X-Forwarded-For).
LOAD_BALANCER_CLIENT_HOP = 1

# Ubuntu 22.04 on a Vultr GPU plan (components/vultr/images.py): the NVIDIA driver and Docker come with the plan's
# image, the AWS CLI the weights copy runs does not. Each is installed when its own command is missing, never one on
# behalf of another: an image that ships Docker still gets the AWS CLI (jammy's docker.io only where Docker is absent,
# so Docker's own packages are never replaced). The container toolkit comes from NVIDIA's apt repository where the
# image lacks it (nvidia-ctk wires Docker's runtime).
RUNTIME_SETUP = """\
missing=""
command -v docker >/dev/null || missing="$missing docker.io"
command -v aws >/dev/null || missing="$missing awscli"
command -v curl >/dev/null || missing="$missing curl"
command -v gpg >/dev/null || missing="$missing gnupg"
if [ -n "$missing" ]; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -yq $missing
fi
if ! command -v nvidia-ctk >/dev/null; then
  curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | gpg --dearmor --yes -o /usr/share/keyrings/nvidia-container-toolkit.gpg
  curl -fsSL https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list \\
    | sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit.gpg] https://#' \\
    > /etc/apt/sources.list.d/nvidia-container-toolkit.list
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -yq nvidia-container-toolkit
  nvidia-ctk runtime configure --runtime=docker && systemctl restart docker
fi
"""


def object_storage_endpoint(region: str) -> str:
    return "https://" + catalog.OBJECT_STORAGE_HOSTS.get(region, catalog.DEFAULT_OBJECT_STORAGE_HOST)


def weights_sync(source: str, destination: str, region: str) -> str:
    """One artifact onto the disk with the read-only key (sourced in a subshell: never in the environment of the
    server or the proxy)."""
    return (
        f"( set -a; . {WEIGHTS_KEY_FILE}; set +a; aws s3 sync --only-show-errors "
        f"--endpoint-url {shell_word(object_storage_endpoint(region))} {shell_word(source)} {shell_word(destination)} )"
    )


def replica_user_data(
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    region: str,
    admission: ReplicaAdmission,
    key_url: str = URL_PLACEHOLDER,
    handoff: ArtifactHandoff | None = None,
    credentials: list[str] | None = None,
) -> str:
    """The replica's cloud-config; `key_url` is its presigned URL for the weights key (root only on the replica).
    Weights on another cloud (`handoff`): no key, the replica's own credential instead (`credentials`, the lines of
    its credential file: a PAR URL per artifact location from OCI, an access token from Google Cloud)."""
    model = serving.model
    syncs = [(model.weights_uri, f"{MODEL_DIR}/base")] + [
        (a.uri, f"{MODEL_DIR}/adapters/{a.name}") for a in model.adapters
    ]
    if handoff is not None:
        fetch = replica_fetch(handoff, [dst for _, dst in syncs])
        lines_of = credentials if credentials is not None else fetch.placeholder
        prepare_setup, lines = "", fetch.lines
        credential = write_file(fetch.credential_file, "".join(f"{line}\n" for line in lines_of), "0600")
    else:
        prepare_setup, lines = fetch_key_setup(), [weights_sync(src, dst, region) for src, dst in syncs]
        credential = write_file(WEIGHTS_KEY_URL_FILE, key_url + "\n", "0600")
    return ReplicaCloudConfig(
        comment=(
            "accelstack serving replica (Vultr Cloud GPU): the admission proxy on the load balancer's port in front\n"
            f"of the inference server on loopback, the weights from {STORES.get(handoff.training_cloud if handoff else '', 'Vultr Object Storage')}"
            ", started on every boot."
        ),
        shipped=proxy_files(),
        environment=dict(admission.environment),
        prepare_setup=prepare_setup,
        syncs=lines,
        image=serving.replicas.server_image,
        server=server_arguments(serving, plan),
        health_wait=health_wait_command(serving, plan),
        stop_timeout=plan.worker_drain_seconds + 30,
        proxy=True,
        worker_description="",
        worker_command=[],
        settings={"ssh_pwauth": False},
        extra_files=[credential],
        # Before the units start (runcmd): the server unit Requires docker.service, which systemd resolves before the
        # unit's own ExecStartPre could install Docker (tests/boot runs this on the image without Docker).
        runtime_setup=RUNTIME_SETUP,
    ).text()


STORES = {"oci": "OCI Object Storage", "gcp": "Cloud Storage", "aws": "Amazon S3"}


def replica_handoff(spec: object) -> ArtifactHandoff | None:
    """The handoff of weights on another cloud, read with a credential per replica (accelstack.spec.handoff); None
    for Vultr's own store."""
    handoff = artifact_handoff(spec)
    return handoff if handoff is not None and (handoff.training_cloud, "vultr") in PER_REPLICA_PAIRS else None


def render_replica_artifacts(args: ServingServiceArgs) -> dict[str, str]:
    """What `accelstack render` writes: the replica user data, from the plan the service deploys."""
    spec = args.spec
    admission = ReplicaAdmission.planned(spec.serving, args.plan, client_hop=LOAD_BALANCER_CLIENT_HOP)
    return {
        REPLICA_USER_DATA_FILE: replica_user_data(
            spec.serving, args.plan, region=spec.account.region, admission=admission, handoff=replica_handoff(spec)
        )
    }
