"""Azure's `NodePlatform`: IMDS, Scheduled Events, Key Vault and Blob Storage with the VM's managed
identity, `azcopy`, data disks by LUN.

Pure (no Pulumi): the Slurm generator renders with it. Every call to Azure from a node uses the VM's
user-assigned managed identity (a token from IMDS), never a key: the identity's client id is handed
over by the components (`identity_client_id`); without one (`accelstack render`), IMDS answers for the
VM's only identity (the nodes carry exactly one).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from accelstack.clouds.base import InstanceType
from accelstack.components.node_platform import ContainerFabric, FabricHooks, LocalNvme, NodeFact, SlurmPackages
from accelstack.spec.models import StackSpec

# Azure Instance Metadata Service: http://169.254.169.254/metadata/... with the `Metadata: true` header and
# an api-version on every request; `format=text` answers a leaf as plain text
# (learn.microsoft.com/azure/virtual-machines/instance-metadata-service). IMDS_ENDPOINT points it at a
# test double.
IMDS_API_VERSION = "2021-02-01"
IMDS_FUNCTION = f"""\
imds() {{
    curl -sf -m 2 --retry 2 -H Metadata:true \\
        "${{IMDS_ENDPOINT:-http://169.254.169.254}}/metadata/instance/$1?api-version={IMDS_API_VERSION}&format=text"
}}
"""

# Scheduled Events (learn.microsoft.com/azure/virtual-machines/linux/scheduled-events): GET
# /metadata/scheduledevents?api-version=2020-07-01 lists the events pending for the VMs of the same scale
# set placement group, so only an event naming this VM (its IMDS compute/name) counts. A Spot eviction is
# EventType "Preempt", posted at least 30 s ahead, its NotBefore an RFC 1123 time ("Mon, 19 Sep 2016
# 18:29:47 GMT", which `date -d` reads). python3 parses the JSON: the HPC and Ubuntu images carry it.
SCHEDULED_EVENTS_API_VERSION = "2020-07-01"
SCHEDULED_EVENTS_FUNCTION = f"""\
preemption_notice() {{
    local events me
    me=$(imds compute/name) || return 0
    events=$(curl -sf -m 2 --retry 2 -H Metadata:true \\
        "${{IMDS_ENDPOINT:-http://169.254.169.254}}/metadata/scheduledevents?api-version={SCHEDULED_EVENTS_API_VERSION}") \\
        || return 0
    ME="$me" python3 -c '
import json, os, sys
for event in json.load(sys.stdin).get("Events", []):
    if event.get("EventType") == "Preempt" and os.environ["ME"] in event.get("Resources", []):
        print("Preempt")
        print(event.get("NotBefore", ""))
        break
' <<<"$events"
}}
"""
SPOT_NOTICE_SECONDS = 30  # Scheduled Events: Preempt's minimum notice is 30 seconds

# A managed identity token from IMDS for `resource` (learn.microsoft.com/entra/identity/managed-identities-
# azure-resources/how-to-use-vm-token): GET /metadata/identity/oauth2/token?api-version=2018-02-01&resource=...
# [&client_id=...]. Key Vault's REST API returns a secret as {"value": ...} (api-version 7.4).
KEY_VAULT_API_VERSION = "7.4"
TOKEN_FUNCTION = """\
azure_token() {
    local resource="$1" client="${AZURE_CLIENT_ID:-}"
    curl -sf -m 5 --retry 3 -H Metadata:true \\
        "${IMDS_ENDPOINT:-http://169.254.169.254}/metadata/identity/oauth2/token?api-version=2018-02-01&resource=${resource}${client:+&client_id=$client}" \\
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])'
}
"""

# AzCopy v10 from Microsoft's download link when the image lacks it (the HPC images carry it; plain Ubuntu
# does not): learn.microsoft.com/azure/storage/common/storage-use-azcopy-v10 ("Download AzCopy").
AZCOPY_FUNCTION = """\
# AzCopy v10 from Microsoft's download link when the image has none (learn.microsoft.com/azure/storage/
# common/storage-use-azcopy-v10); it logs in with the VM's managed identity (AZCOPY_AUTO_LOGIN_TYPE=MSI).
ensure_azcopy() {
    command -v azcopy >/dev/null && return 0
    local dir
    dir=$(mktemp -d)
    curl -fsSL --retry 5 https://aka.ms/downloadazcopy-v10-linux -o "$dir/azcopy.tar.gz"
    tar -xzf "$dir/azcopy.tar.gz" -C "$dir" --strip-components=1
    install -m 0755 "$dir/azcopy" /usr/local/bin/azcopy
    rm -rf "$dir"
}
"""

# Azure Managed Lustre's client for Ubuntu: Microsoft's amlfs-<codename> repository, the package built for
# the running kernel (learn.microsoft.com/azure/azure-managed-lustre/client-install?pivots=ubuntu-24).
# The package name carries the Lustre version and its version the kernel it is built for. The newest Lustre
# version is not always built for this kernel yet, so the versions are tried newest first; none built for it
# fails the boot with the kernel named (its caller, mount_lustre, runs under `set -e`).
AMLFS_CLIENT_INSTALL = """\
. /etc/os-release
curl -fsSL https://packages.microsoft.com/keys/microsoft.asc | gpg --dearmor > /usr/share/keyrings/microsoft-amlfs.gpg
echo "deb [arch=amd64 signed-by=/usr/share/keyrings/microsoft-amlfs.gpg] https://packages.microsoft.com/repos/amlfs-${VERSION_CODENAME}/ ${VERSION_CODENAME} main" \\
    > /etc/apt/sources.list.d/amlfs.list
apt-get update
amlfs_client=""
for candidate in $(apt-cache search --names-only '^amlfs-lustre-client-' | awk '{print $1}' | sort -rV); do
    if apt-get install -y "$candidate=$(uname -r)"; then amlfs_client=$candidate; break; fi
done
if [ -z "$amlfs_client" ]; then
    echo "no amlfs-lustre-client-* of amlfs-${VERSION_CODENAME} is built for kernel $(uname -r)" >&2
    return 1
fi
"""

# Slurm from Microsoft's packages.microsoft.com (PMC), as CycleCloud Slurm installs it on its scheduler and
# execute nodes alike (Azure/cyclecloud-slurm azure-slurm-install/ubuntu.sh: slurm-smd, slurm-smd-client and
# slurm-smd-slurmctld / slurm-smd-slurmd, each `=<version>*`, from repos/slurm-ubuntu-<codename> "stable"). Not
# Ubuntu's slurmd: the Ubuntu-HPC image pins every `slurm*` package of origin *ubuntu.com* to priority -1
# (Azure/azhpc-images components/slurm-repo/slurm-u.pin, copied to /etc/apt/preferences.d/slurm-repository-pin-990
# by components/install_pmix.sh), so `apt-get install slurmd` has no candidate there. One version on the head
# (Canonical's image, no pin) and the nodes: CycleCloud Slurm's default release. munge is Ubuntu's (slurm-smd
# depends on it; the pin leaves it alone). The repository line replaces the image's own slurm.list (its
# "insiders" suite), as CycleCloud's script does; the key is PMC's signing key, fetched like the Lustre client's.
SLURM_SMD_VERSION = "25.11.5"
PMC_SLURM_KEYRING = "/usr/share/keyrings/accelstack-microsoft-slurm.gpg"
PMC_SLURM_REPOSITORY_SETUP = f"""\
. /etc/os-release
curl -fsSL https://packages.microsoft.com/keys/microsoft.asc | gpg --dearmor --yes -o {PMC_SLURM_KEYRING}
echo "deb [arch=$(dpkg --print-architecture) signed-by={PMC_SLURM_KEYRING}] https://packages.microsoft.com/repos/slurm-ubuntu-${{VERSION_CODENAME}}/ stable main" \\
    > /etc/apt/sources.list.d/slurm.list
"""
PMC_SLURM = SlurmPackages(
    source=f"packages.microsoft.com slurm-ubuntu (slurm-smd {SLURM_SMD_VERSION})",
    common=("munge", f"slurm-smd={SLURM_SMD_VERSION}*", f"slurm-smd-client={SLURM_SMD_VERSION}*"),
    controller=(f"slurm-smd-slurmctld={SLURM_SMD_VERSION}*",),
    node=(f"slurm-smd-slurmd={SLURM_SMD_VERSION}*",),
    accounting=(f"slurm-smd-slurmdbd={SLURM_SMD_VERSION}*",),  # SchedMD's debian/control: slurm-smd-slurmdbd
    repository_setup=PMC_SLURM_REPOSITORY_SETUP,
    daemon_directory="/usr/sbin",  # SchedMD's debian/slurm-smd-slurmd.install: usr/sbin/slurmd
    development=(f"slurm-smd-dev={SLURM_SMD_VERSION}*",),  # SchedMD's headers package (pyxis builds on them)
)

_METADATA_PATHS = {
    NodeFact.INSTANCE_ID: "compute/vmId",
    NodeFact.INSTANCE_TYPE: "compute/vmSize",
    NodeFact.REGION: "compute/location",
    NodeFact.ZONE: "compute/zone",
    NodeFact.PRIVATE_ADDRESS: "network/interface/0/ipv4/ipAddress/0/privateIpAddress",
}

BLOB_HOST_SUFFIX = ".blob.core.windows.net"


def key_vault_secret_command(secret_uri: str) -> str:
    """The secret's value (the munge key, stored base64) read from Key Vault with the VM's identity."""
    uri = shlex.quote(f"{secret_uri.rstrip('/')}?api-version={KEY_VAULT_API_VERSION}")
    return (
        f'curl -sf -m 10 --retry 3 -H "Authorization: Bearer $(azure_token https://vault.azure.net)" {uri} '
        "| python3 -c 'import json, sys; print(json.load(sys.stdin)[\"value\"])' | base64 -d"
    )


def azcopy_sync_command(source: str, destination: str, client_id: str | None) -> str:
    """`azcopy sync` of new and changed files, with the VM's managed identity. No delete option: azcopy sync's
    `--delete-destination` defaults to false (azcopy sync reference), so a checkpoint deleted on the source never
    deletes the durable copy."""
    identity = f"AZCOPY_MSI_CLIENT_ID={shlex.quote(client_id)} " if client_id else ""
    return (
        f"env AZCOPY_AUTO_LOGIN_TYPE=MSI {identity}azcopy sync {shlex.quote(source)} {shlex.quote(destination)} "
        "--recursive --log-level=ERROR"
    )


def azcopy_copy_functions(client_id: str | None) -> str:
    """`azcopy copy --overwrite=false` skips a blob that exists (a skip is no failure); "DIR/*" copies the
    directory's contents, and --exclude-path names paths under the source (azcopy copy reference)."""
    azcopy = "env AZCOPY_AUTO_LOGIN_TYPE=MSI " + (
        f"AZCOPY_MSI_CLIENT_ID={shlex.quote(client_id)} " if client_id else ""
    )
    options = "--overwrite=false --log-level=ERROR"
    return (
        f'copy_new_files() {{ {azcopy}azcopy copy "$1*" "$2" --recursive --exclude-path "$3" {options}; }}\n'
        f'copy_new_file() {{ {azcopy}azcopy copy "$1" "$2" {options}; }}\n'
    )


def data_disk_device(lun: str) -> str:
    """Azure's udev rules (walinuxagent / azure-vm-utils) link data disks by LUN under /dev/disk/azure/scsi1."""
    return f"/dev/disk/azure/scsi1/lun{lun}"


@dataclass(frozen=True)
class AzureNodePlatform:
    """VMs of one subscription; `identity_client_id` is the managed identity the node's calls use."""

    identity_client_id: str | None = None
    name: str = "azure"
    metadata_functions: str = IMDS_FUNCTION
    preemption_notice_seconds: int = SPOT_NOTICE_SECONDS
    preemption_source: str = "Azure Scheduled Events (Preempt)"
    preemption_functions: str | None = SCHEDULED_EVENTS_FUNCTION
    object_uri_form: str = "https://<account>.blob.core.windows.net/<container>[/prefix]"
    lustre_product: str = "Azure Managed Lustre"
    lustre_client_source: str = "Microsoft's amlfs repository"
    lustre_client_install: str = AMLFS_CLIENT_INSTALL
    tool_setup: str | None = "ensure_azcopy"
    slurm_packages: SlurmPackages = PMC_SLURM

    @property
    def tool_functions(self) -> str:
        client = f"export AZURE_CLIENT_ID={shlex.quote(self.identity_client_id)}\n" if self.identity_client_id else ""
        return client + TOKEN_FUNCTION + AZCOPY_FUNCTION

    def metadata_command(self, fact: NodeFact) -> str:
        return f"imds {_METADATA_PATHS[fact]}"

    def secret_command(self, reference: str) -> str:
        return key_vault_secret_command(reference)

    def config_object_command(self, reference: str) -> str:
        """A Key Vault secret (its URI without a version: the latest), updated in place by `up`."""
        return key_vault_secret_command(reference)

    def is_object_uri(self, uri: str) -> bool:
        host = uri.removeprefix("https://").partition("/")[0]
        return uri.startswith("https://") and host.endswith(BLOB_HOST_SUFFIX)

    def object_sync_command(self, source: str, destination: str) -> str:
        return azcopy_sync_command(source, destination, self.identity_client_id)

    @property
    def checkpoint_copy_functions(self) -> str:
        return azcopy_copy_functions(self.identity_client_id)

    def fabric_hooks(self, instance: InstanceType | None) -> FabricHooks | None:
        """None: the HPC image carries the InfiniBand stack (OFED) NCCL's IB transport uses."""
        return None

    def units_before_slurmd(self, instance: InstanceType | None) -> tuple[str, ...]:
        """Ubuntu-HPC's (and its ROCm build's) oneshot that writes /etc/nccl.conf (the ND topology file, relaxed
        ordering) for the VM size at every boot (azhpc-images: /etc/systemd/system/sku_customizations.service,
        WantedBy multi-user.target). On first boot cloud-final already runs after it; after a reboot slurmd,
        also wanted by multi-user.target, would race it."""
        return ("sku_customizations.service",)

    def container_fabric(self, instance: InstanceType | None) -> ContainerFabric:
        """InfiniBand in a container: enroot's Mellanox hook binds the HCAs' verbs devices and the host's mlx5
        provider (MELLANOX_VISIBLE_DEVICES); NCCL there reads the image's /etc/nccl.conf, whose NCCL_TOPO_FILE
        names a topology file under /opt/microsoft (azhpc-images sku customizations), as on the host."""
        if instance is None or instance.fabric != "infiniband":
            return ContainerFabric()
        return INFINIBAND_CONTAINER

    def local_nvme(self, instance: InstanceType | None) -> LocalNvme | None:
        """The ND sizes' local NVMe disks (their OS and data disks are SCSI: /dev/disk/azure/scsi1), wiped when the VM
        is deallocated; at /mnt/nvme, where azhpc-images' setup_nvme.sh and CycleCloud's Slurm nodes put them."""
        return LOCAL_NVME

    def block_device_path(self, volume: str) -> str:
        return data_disk_device(volume)


LOCAL_NVME = LocalNvme(
    disks="/dev/nvme[0-9]*n1",
    mount_point="/mnt/nvme",
    source="learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series (local NVMe, lost on "
    "deallocation); azhpc-images setup_nvme.sh (RAID 0 over /dev/nvme*n1)",
)
INFINIBAND_CONTAINER = ContainerFabric(
    name="InfiniBand",
    read_only=("/etc/nccl.conf", "/opt/microsoft"),
    environment=(("MELLANOX_VISIBLE_DEVICES", "all"),),
)


def node_platform(spec: StackSpec) -> AzureNodePlatform:
    """The platform of the spec's nodes (the registry's entry: `accelstack.components.node_platform`)."""
    return AzureNodePlatform()
