"""Google Cloud's `NodePlatform`: the metadata server, Spot preemption and host maintenance notices, Secret
Manager and Cloud Storage with the VM's service account, persistent disks by device name.

Pure (no Pulumi): the Slurm generator renders with it. Every call to Google from a node uses the VM's attached
service account (an OAuth token from the metadata server), never a key file.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from accelstack.clouds.base import InstanceType
from accelstack.components.gcp import gpudirect
from accelstack.components.node_platform import (
    UBUNTU_ARCHIVE_SLURM,
    ContainerFabric,
    FabricHooks,
    LocalNvme,
    NodeFact,
    SlurmPackages,
)
from accelstack.spec.models import StackSpec

# The metadata server (cloud.google.com/compute/docs/metadata/querying-metadata): every request carries
# `Metadata-Flavor: Google` (the server refuses requests without it) and answers leaves as plain text.
# METADATA_ENDPOINT points it at a test double.
METADATA_FUNCTION = """\
gce_metadata() {
    curl -sf -m 2 --retry 2 -H Metadata-Flavor:Google \\
        "${METADATA_ENDPOINT:-http://metadata.google.internal}/computeMetadata/v1/instance/$1"
}
"""

# Spot VMs: `instance/preempted` turns TRUE when Compute Engine starts preempting the VM, which then gets
# 30 s before ACPI G2 soft-off (cloud.google.com/compute/docs/instances/spot#preemption-process,
# /create-use-spot#detecting_if_a_spot_vm_was_preempted). GPU VMs cannot live-migrate, so a host maintenance
# event stops them too: `instance/maintenance-event` names TERMINATE_ON_HOST_MAINTENANCE ahead of it
# (cloud.google.com/compute/docs/gpus/gpu-host-maintenance: "at least 60 minutes' notice" on A3 and later,
# shorter on older GPUs), so the watcher drains and checkpoints for that as well. Neither says when: the
# second line is empty.
PREEMPTION_FUNCTION = """\
preemption_notice() {
    local preempted maintenance
    preempted=$(gce_metadata preempted) || preempted=FALSE
    if [ "$preempted" = TRUE ]; then
        printf 'preempted\\n\\n'
        return 0
    fi
    maintenance=$(gce_metadata maintenance-event) || maintenance=NONE
    case "$maintenance" in
        TERMINATE_ON_HOST_MAINTENANCE) printf 'host-maintenance\\n\\n' ;;
    esac
}
"""
SPOT_NOTICE_SECONDS = 30

# An OAuth token for the VM's service account (instance/service-accounts/default/token: JSON with
# access_token) and Secret Manager's access method: GET v1/<version name>:access returns
# {"payload": {"data": <base64>}} (cloud.google.com/secret-manager/docs/reference/rest/v1/
# projects.secrets.versions/access). SECRET_MANAGER_ENDPOINT points it at a test double.
TOKEN_FUNCTION = """\
gce_token() {
    gce_metadata service-accounts/default/token | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])'
}
"""

# The Cloud SDK (gcloud storage) from Google's apt repository when the image lacks it
# (cloud.google.com/sdk/docs/install#deb); Google's and Canonical's GCE images carry it.
GCLOUD_FUNCTION = """\
ensure_gcloud() {
    command -v gcloud >/dev/null && return 0
    curl -fsSL https://packages.cloud.google.com/apt/doc/apt-key.gpg | gpg --dearmor > /usr/share/keyrings/cloud.google.gpg
    echo "deb [signed-by=/usr/share/keyrings/cloud.google.gpg] https://packages.cloud.google.com/apt cloud-sdk main" \\
        > /etc/apt/sources.list.d/google-cloud-sdk.list
    apt-get update && apt-get install -y google-cloud-cli
}
"""

# Managed Lustre's client for Ubuntu: Google's lustre-client apt repository on Artifact Registry, the module
# package built for the running kernel (cloud.google.com/managed-lustre/docs/connect-from-compute-engine,
# "Install the Lustre client"). The key, repository line and package names are those of Cluster Toolkit's
# modules/file-system/managed-lustre/scripts/install-managed-lustre-client.sh; the noble repository exists (GKE's
# Lustre CSI driver installs from lustre-client-ubuntu-noble). Prebuilt modules cover the kernels Google lists
# there: a kernel without one fails the install, and the node does not join. Images that carry the client
# (mount.lustre present) skip this.
LUSTRE_CLIENT_INSTALL = """\
. /etc/os-release
curl -fsSL https://us-apt.pkg.dev/doc/repo-signing-key.gpg | gpg --dearmor > /usr/share/keyrings/lustre-client.gpg
echo "deb [signed-by=/usr/share/keyrings/lustre-client.gpg] https://us-apt.pkg.dev/projects/lustre-client-binaries lustre-client-ubuntu-${VERSION_CODENAME} main" \\
    > /etc/apt/sources.list.d/lustre-client.list
apt-get update
apt-get install -y "lustre-client-modules-$(uname -r)" lustre-client-utils
"""

_METADATA_PATHS = {
    # The VM's name, not its numeric id: Google's DNS and the group's instance list use the name.
    NodeFact.INSTANCE_ID: "name",
    NodeFact.PRIVATE_ADDRESS: "network-interfaces/0/ip",
}
# Leaves answered as resource paths ("projects/123/machineTypes/a3-megagpu-8g", "projects/123/zones/us-central1-a"):
# the last segment is the name.
_LAST_SEGMENT = {NodeFact.INSTANCE_TYPE: "machine-type", NodeFact.ZONE: "zone"}


def secret_manager_command(version: str) -> str:
    """The secret version's raw bytes (payload.data is base64), read with the VM's service account."""
    url = f"${{SECRET_MANAGER_ENDPOINT:-https://secretmanager.googleapis.com}}/v1/{version}:access"
    return (
        f'curl -sf -m 10 --retry 3 -H "Authorization: Bearer $(gce_token)" "{url}" '
        '| python3 -c \'import json, sys; print(json.load(sys.stdin)["payload"]["data"])\' | base64 -d'
    )


def gcloud_rsync_command(source: str, destination: str) -> str:
    """`gcloud storage rsync` of new and changed files; without --delete-unmatched-destination-objects it never
    deletes at the destination (cloud.google.com/sdk/gcloud/reference/storage/rsync)."""
    return f"gcloud storage rsync --recursive --quiet {shlex.quote(source)} {shlex.quote(destination)}"


# --no-clobber skips an object that exists (it asks first; replacing one would also need storage.objects.delete,
# which the checkpoint writers do not hold). rsync's --exclude is a Python regex on the path under the source
# (cloud.google.com/sdk/gcloud/reference/storage/rsync, .../storage/cp).
CHECKPOINT_COPY_FUNCTIONS = """\
copy_new_files() { gcloud storage rsync --recursive --no-clobber --quiet --exclude="^$3\\$" "$1" "$2"; }
copy_new_file() { gcloud storage cp --no-clobber --quiet "$1" "$2"; }
"""


@dataclass(frozen=True)
class GcpNodePlatform:
    """VMs of one project, calling Google as their attached service account."""

    name: str = "gcp"
    metadata_functions: str = METADATA_FUNCTION
    preemption_notice_seconds: int = SPOT_NOTICE_SECONDS
    preemption_source: str = "GCE metadata instance/preempted and instance/maintenance-event"
    preemption_functions: str | None = PREEMPTION_FUNCTION
    object_uri_form: str = "gs://bucket[/prefix]"
    lustre_product: str = "Google Cloud Managed Lustre"
    lustre_client_source: str = "Google's lustre-client repository"
    lustre_client_install: str = LUSTRE_CLIENT_INSTALL
    slurm_packages: SlurmPackages = UBUNTU_ARCHIVE_SLURM
    # Self-contained: the token helper reads the metadata server, and a script that has the tools (the head's
    # setup) may have no metadata functions of its own.
    tool_functions: str = METADATA_FUNCTION + TOKEN_FUNCTION + GCLOUD_FUNCTION
    tool_setup: str | None = "ensure_gcloud"
    checkpoint_copy_functions: str = CHECKPOINT_COPY_FUNCTIONS

    def metadata_command(self, fact: NodeFact) -> str:
        if fact in _LAST_SEGMENT:
            return f"gce_metadata {_LAST_SEGMENT[fact]} | awk -F/ '{{printf \"%s\", $NF}}'"
        if fact is NodeFact.REGION:  # the zone minus its "-<letter>"
            return 'gce_metadata zone | awk -F/ \'{z=$NF; sub(/-[a-z]$/, "", z); printf "%s", z}\''
        return f"gce_metadata {_METADATA_PATHS[fact]}"

    def secret_command(self, reference: str) -> str:
        return secret_manager_command(reference)

    def config_object_command(self, reference: str) -> str:
        """A metadata key of this VM (instance/attributes/<key>), which `up` updates in place (setMetadata); the
        metadata server answers only the VM itself, so no grant is needed."""
        return f"gce_metadata attributes/{shlex.quote(reference)} | base64 -d"

    def is_object_uri(self, uri: str) -> bool:
        return uri.startswith("gs://") and len(uri) > len("gs://") and not uri[len("gs://") :].startswith("/")

    def object_sync_command(self, source: str, destination: str) -> str:
        return gcloud_rsync_command(source, destination)

    def units_before_slurmd(self, instance: InstanceType | None) -> tuple[str, ...]:
        """None: nothing on the image configures the GPUs or the fabric at boot after slurmd could start (the
        fabric's own unit, which slurmd requires, is the recipe's)."""
        return ()

    def fabric_hooks(self, instance: InstanceType | None) -> FabricHooks | None:
        """GPUDirect-TCPXO's receive-datapath manager and NCCL plugin on A3 Mega (components/gcp/gpudirect.py)."""
        return gpudirect.fabric_hooks(instance)

    def container_fabric(self, instance: InstanceType | None) -> ContainerFabric:
        """What the fabric's hooks say a container binds (TCPXO's plugin and devices, gIB's plugin and RDMA NICs)."""
        hooks = gpudirect.fabric_hooks(instance)
        return hooks.container if hooks is not None else ContainerFabric()

    def local_nvme(self, instance: InstanceType | None) -> LocalNvme | None:
        """The A3 and A4 machine types' local SSD (attached with the machine type, NVMe), discarded when the VM stops
        unless preserved; at /mnt/localssd as Cluster Toolkit's A3 blueprints mount it (the startup script's
        setup-raid.yml: one RAID 0 over /dev/disk/by-id/google-local-nvme-ssd-*, re-created at every boot)."""
        return LOCAL_SSD

    def block_device_path(self, volume: str) -> str:
        """A persistent disk attached with device name `volume` (Google's udev rules link /dev/disk/by-id/google-<name>)."""
        return f"/dev/disk/by-id/google-{volume}"


def node_platform(spec: StackSpec) -> GcpNodePlatform:
    """The platform of the spec's nodes (the registry's entry: `accelstack.components.node_platform`)."""
    return GcpNodePlatform()


LOCAL_SSD = LocalNvme(
    disks="/dev/disk/by-id/google-local-nvme-ssd-*",
    mount_point="/mnt/localssd",
    source="cloud.google.com/compute/docs/disks/local-ssd (google-local-nvme-ssd-N; discarded on stop); Cluster "
    "Toolkit modules/scripts/startup-script/files/setup-raid.yml",
)
