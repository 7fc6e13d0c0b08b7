"""OCI's `NodePlatform`: instance metadata v2, Vault secrets and Object Storage read with the instance principal,
paravirtualized block volumes at their consistent device paths.

Pure (no Pulumi): the Slurm generator renders with it. Every call to OCI from a node signs as the instance itself
(`--auth instance_principal`: the stack's dynamic group matches the compartment's instances and its policy grants
what they read), never an API key on the node.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelstack.clouds.base import InstanceType
from accelstack.components.node_platform import (
    UBUNTU_ARCHIVE_SLURM,
    ContainerFabric,
    FabricHooks,
    LocalNvme,
    NodeFact,
    SlurmPackages,
)
from accelstack.spec.models import StackSpec

# The Oracle Cloud Agent's unit on Ubuntu, where the agent is a snap: OCI's Ubuntu platform images (the head) and the
# HPC team's GPU builds the nodes boot, which install a pinned agent snap (components/oci/images.py).
OCA_UNIT = "snap.oracle-cloud-agent.oracle-cloud-agent.service"

# Instance metadata service v2 (docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm): every request
# carries `Authorization: Bearer Oracle` (v2 refuses requests without it) and answers leaves as plain text.
# METADATA_ENDPOINT points it at a test double.
METADATA_FUNCTION = """\
oci_metadata() {
    curl -sf -m 2 --retry 2 -H 'Authorization: Bearer Oracle' \\
        "${METADATA_ENDPOINT:-http://169.254.169.254}/opc/v2/$1"
}
"""

# Every call to the OCI CLI signs with the instance principal; OCI_CLI points the functions at a test double.
OBJECT_FUNCTIONS = """\
oci_cli() { "${OCI_CLI:-oci}" --auth instance_principal "$@"; }
oci_bucket() { local rest=${1#oci://}; printf '%s' "${rest%%/*}"; }
oci_prefix() { local rest=${1#oci://}; case "$rest" in */*) printf '%s' "${rest#*/}" ;; esac; }
"""

# The OCI CLI (pip's oci-cli) where the image lacks it.
OCI_CLI_FUNCTION = (
    """\
ensure_oci_cli() {
    command -v "${OCI_CLI:-oci}" >/dev/null && return 0
    apt-get update && apt-get install -y python3-venv
    python3 -m venv /opt/oci-cli && /opt/oci-cli/bin/pip install --quiet oci-cli
    ln -sf /opt/oci-cli/bin/oci /usr/local/bin/oci
}
"""
    + OBJECT_FUNCTIONS
)

# bulk-upload --no-overwrite skips an object that exists (the writers hold no OBJECT_OVERWRITE nor delete);
# --exclude takes a glob relative to --src-dir (docs.oracle.com/iaas/tools/oci-cli/latest/oci_cli_docs/cmdref/os/
# object/bulk-upload.html, put.html).
# The copier script carries the object functions it calls (it runs apart from the boot script that defines them).
CHECKPOINT_COPY_FUNCTIONS = (
    OBJECT_FUNCTIONS
    + """\
copy_new_files() {
    oci_cli os object bulk-upload --no-overwrite --bucket-name "$(oci_bucket "$2")" \\
        --object-prefix "$(oci_prefix "$2")" --src-dir "$1" --exclude "$3"
}
copy_new_file() {
    oci_cli os object put --no-overwrite --bucket-name "$(oci_bucket "$2")" --name "$(oci_prefix "$2")" --file "$1"
}
"""
)

# Whamcloud's public Lustre 2.16 client packages for Ubuntu 24.04 (downloads.whamcloud.com/public/lustre/), the
# kernel module built by DKMS for the running kernel; OCI's "Mounting a Lustre file system" page asks for a client
# of 2.15 or later. A kernel DKMS cannot build for fails the install, and the node does not join.
LUSTRE_CLIENT_INSTALL = """\
base=https://downloads.whamcloud.com/public/lustre/lustre-2.16.1/ubuntu2404/client
apt-get update && apt-get install -y dkms "linux-headers-$(uname -r)"
for package in lustre-client-modules-dkms_2.16.1-1_amd64.deb lustre-client-utils_2.16.1-1_amd64.deb; do
    curl -fsSLo "/tmp/$package" "$base/$package"
done
apt-get install -y /tmp/lustre-client-modules-dkms_2.16.1-1_amd64.deb /tmp/lustre-client-utils_2.16.1-1_amd64.deb
"""

_METADATA_LEAVES = {
    NodeFact.INSTANCE_ID: "instance/id",
    NodeFact.INSTANCE_TYPE: "instance/shape",
    NodeFact.REGION: "instance/canonicalRegionName",  # us-ashburn-1 ("region" is the short key, iad)
    NodeFact.ZONE: "instance/availabilityDomain",
}


def vault_secret_command(secret_ocid: str) -> str:
    """The secret's current version, raw bytes (the bundle's content is base64), read as the instance principal
    (`oci secrets secret-bundle get`, which reads the CURRENT version)."""
    return (
        f"oci_cli secrets secret-bundle get --secret-id {secret_ocid} "
        "--query 'data.\"secret-bundle-content\".content' --raw-output | base64 -d"
    )


def object_sync_command(source: str, destination: str) -> str:
    """`oci os object sync` of new and changed files: without --delete it never deletes at the destination
    (oci_cli_docs/cmdref/os/object/sync.html); either side is oci://bucket[/prefix] or a local directory."""
    if source.startswith("oci://"):
        return (
            f'oci_cli os object sync --bucket-name "$(oci_bucket {source})" --prefix "$(oci_prefix {source})" '
            f"--dest-dir {destination}"
        )
    return (
        f'oci_cli os object sync --bucket-name "$(oci_bucket {destination})" '
        f'--prefix "$(oci_prefix {destination})" --src-dir {source}'
    )


@dataclass(frozen=True)
class OciNodePlatform:
    """Instances of one compartment, calling OCI as their instance principal."""

    name: str = "oci"
    metadata_functions: str = METADATA_FUNCTION
    # OCI posts no preemption notice a node can read, and cluster networks take no preemptible capacity.
    preemption_notice_seconds: int = 0
    preemption_source: str = "none (cluster networks run no preemptible capacity)"
    preemption_functions: str | None = None
    object_uri_form: str = "oci://bucket[/prefix]"
    lustre_product: str = "OCI File Storage with Lustre"
    lustre_client_source: str = "Whamcloud's public Lustre client packages"
    lustre_client_install: str = LUSTRE_CLIENT_INSTALL
    slurm_packages: SlurmPackages = UBUNTU_ARCHIVE_SLURM
    tool_functions: str = METADATA_FUNCTION + OCI_CLI_FUNCTION
    tool_setup: str | None = "ensure_oci_cli"
    checkpoint_copy_functions: str = CHECKPOINT_COPY_FUNCTIONS

    def metadata_command(self, fact: NodeFact) -> str:
        if fact is NodeFact.PRIVATE_ADDRESS:  # the primary VNIC first in vnics/
            return 'oci_metadata vnics/ | python3 -c \'import json, sys; print(json.load(sys.stdin)[0]["privateIp"], end="")\''
        return f"oci_metadata {_METADATA_LEAVES[fact]}"

    def secret_command(self, reference: str) -> str:
        return vault_secret_command(reference)

    def config_object_command(self, reference: str) -> str:
        """A metadata key of this instance (instance/metadata/<key>), which `up` updates in place
        (UpdateInstance); the metadata service answers only the instance itself, so no grant is needed."""
        return f"oci_metadata instance/metadata/{reference} | base64 -d"

    def is_object_uri(self, uri: str) -> bool:
        return uri.startswith("oci://") and len(uri) > len("oci://") and not uri[len("oci://") :].startswith("/")

    def object_sync_command(self, source: str, destination: str) -> str:
        return object_sync_command(source, destination)

    def units_before_slurmd(self, instance: InstanceType | None) -> tuple[str, ...]:
        """The Oracle Cloud Agent configures the RDMA NICs (its HPC RDMA Auto-Configuration plugin): jobs start
        after it; on the head (no RDMA) nothing. On Ubuntu the agent is a snap, so its unit is the snap's
        (components/oci/images.py): Oracle Linux's `oracle-cloud-agent.service` does not exist there, and an
        After= on a missing unit orders nothing, silently."""
        return (OCA_UNIT,) if instance is not None and instance.has_fabric else ()

    def fabric_hooks(self, instance: InstanceType | None) -> FabricHooks | None:
        """None: the agent plugins authenticate and address the RoCE NICs (oci-hpc's rdma_subnet is the plugins'
        host configuration), and NCCL's IB transport uses them as they come up."""
        return None

    def container_fabric(self, instance: InstanceType | None) -> ContainerFabric:
        """RoCE in a container: the ConnectX NICs' verbs devices and mlx5 provider, bound by enroot's Mellanox hook."""
        if instance is None or instance.fabric != "roce":
            return ContainerFabric()
        return ContainerFabric(name="RoCE", environment=(("MELLANOX_VISIBLE_DEVICES", "all"),))

    def local_nvme(self, instance: InstanceType | None) -> LocalNvme | None:
        """The bare-metal GPU shapes' local NVMe (their boot and block volumes attach over iSCSI or paravirtualized,
        not NVMe); at /mnt/localdisk, as Oracle's oci-hpc stack mounts them. Kept across a reboot (the array is then
        assembled as it is), gone with the instance; a replaced or blank disk gets a new array."""
        return LOCAL_NVME

    def block_device_path(self, volume: str) -> str:
        """A paravirtualized attachment with a consistent device path (`device` on the attachment): the path is
        the reference itself (docs.oracle.com/iaas/Content/Block/References/consistentdevicepaths.htm)."""
        return volume


def node_platform(spec: StackSpec) -> OciNodePlatform:
    """The platform of the spec's nodes (the registry's entry: `accelstack.components.node_platform`)."""
    return OciNodePlatform()


LOCAL_NVME = LocalNvme(
    disks="/dev/nvme[0-9]*n1",
    mount_point="/mnt/localdisk",
    source="docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm (bare metal GPU shapes' local NVMe); "
    "oracle-quickstart/oci-hpc (localdisk at /mnt/localdisk)",
)
