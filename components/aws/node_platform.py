"""AWS's `NodePlatform`: IMDSv2, the EC2 spot notice, Secrets Manager, `aws s3 sync`, EBS on Nitro.

Pure (no Pulumi): the Slurm generator renders with it, and the serving replica's boot script uses
the same IMDSv2 helper (`IMDS_FUNCTION`) and AWS CLI installer (`AWS_CLI_FUNCTION`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from accelstack.clouds.aws import names
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

# IMDSv2 only (the launch templates set http_tokens=required): a session token first (PUT), then the
# request carrying it. 404 (no such path, e.g. no spot notice yet) is a failure with no output. Short
# timeouts: the spot watcher polls every few seconds inside a 2-minute window. IMDS_ENDPOINT points
# it at a test double.
IMDS_FUNCTION = """\
imds() {
    local endpoint="${IMDS_ENDPOINT:-http://169.254.169.254}" token
    token=$(curl -sf -m 2 --retry 2 -X PUT -H "X-aws-ec2-metadata-token-ttl-seconds: 60" "$endpoint/latest/api/token") \\
        || return 1
    curl -sf -m 2 --retry 2 -H "X-aws-ec2-metadata-token: $token" "$endpoint/latest/meta-data/$1"
}
"""

# AWS CLI v2 from AWS's own bundle when the image has no `aws`: Ubuntu 24.04 has no awscli package
# (aws/aws-cli#8978), and AWS documents the bundle as the Linux install ("Installing or updating to
# the latest version of the AWS CLI"). x86_64 and aarch64 bundles carry `uname -m`'s names.
AWS_CLI_FUNCTION = """\
# AWS CLI v2 from AWS's own bundle when the image has no `aws`: Ubuntu 24.04 has no awscli package
# (aws/aws-cli#8978), and AWS documents the bundle as the Linux install ("Installing or updating to
# the latest version of the AWS CLI"). x86_64 and aarch64 bundles carry `uname -m`'s names.
ensure_aws_cli() {
    command -v aws >/dev/null && return 0
    command -v unzip >/dev/null || { apt-get update -q && apt-get install -y -q unzip; }
    local dir
    dir=$(mktemp -d)
    curl -fsSL --retry 5 "https://awscli.amazonaws.com/awscli-exe-linux-$(uname -m).zip" -o "$dir/awscliv2.zip"
    unzip -q "$dir/awscliv2.zip" -d "$dir"
    "$dir/aws/install" --update
    rm -rf "$dir"
}
"""

# EC2 posts {"action": "terminate|stop|hibernate", "time": "...Z"} at spot/instance-action two minutes
# before it acts, and answers 404 until then.
SPOT_NOTICE_FUNCTION = """\
preemption_notice() {
    local notice action
    notice=$(imds spot/instance-action) && [ -n "$notice" ] || return 0
    action=$(sed -n 's/.*"action" *: *"\\([^"]*\\)".*/\\1/p' <<<"$notice")
    echo "${action:-terminate}"
    sed -n 's/.*"time" *: *"\\([^"]*\\)".*/\\1/p' <<<"$notice"
}
"""

# FSx for Lustre's client comes from FSx's repository (kernel-matched modules).
FSX_LUSTRE_CLIENT_INSTALL = """\
. /etc/os-release
curl -fsSL https://fsx-lustre-client-repo-public-keys.s3.amazonaws.com/fsx-ubuntu-public-key.asc \\
    | gpg --dearmor > /usr/share/keyrings/fsx-ubuntu-public-key.gpg
echo "deb [signed-by=/usr/share/keyrings/fsx-ubuntu-public-key.gpg] https://fsx-lustre-client-repo.s3.amazonaws.com/ubuntu ${VERSION_CODENAME} main" \\
    > /etc/apt/sources.list.d/fsxlustreclientrepo.list
apt-get update && apt-get install -y "lustre-client-modules-$(uname -r)"
"""

_METADATA_PATHS = {
    NodeFact.INSTANCE_ID: "instance-id",
    NodeFact.INSTANCE_TYPE: "instance-type",
    NodeFact.REGION: "placement/region",
    NodeFact.ZONE: "placement/availability-zone",
    NodeFact.PRIVATE_ADDRESS: "local-ipv4",
}

SPOT_NOTICE_SECONDS = 120  # EC2 User Guide, "Spot Instance interruption notices": two minutes


def munge_key_command(secret_id: str, region: str) -> str:
    """Secrets Manager with the instance's role; the key is stored as SecretBinary (base64 in the CLI)."""
    return (
        f"aws secretsmanager get-secret-value --region {shlex.quote(region)} --secret-id {shlex.quote(secret_id)} "
        "--query SecretBinary --output text | base64 -d"
    )


# The SSM parameter holding a Slurm head's configuration files (components/aws/scheduler.py), by stack name.
SLURM_CONFIG_PARAMETER = names.SLURM_CONFIG_PARAMETER


def ssm_parameter_command(name: str, region: str) -> str:
    """A SecureString parameter's value (base64 text), decrypted by SSM with the stack key, read with the
    instance's role."""
    return (
        f"aws ssm get-parameter --region {shlex.quote(region)} --name {shlex.quote(name)} --with-decryption "
        "--query Parameter.Value --output text | base64 -d"
    )


def ebs_device(volume_id: str) -> str:
    """Nitro instances expose EBS volumes as NVMe; udev names them by volume id (without the dash)."""
    return f"/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_{volume_id.replace('-', '')}"


def s3_sync_command(source: str, destination: str, region: str) -> str:
    """`aws s3 sync` copying new and changed files only; deliberately without the delete option (a checkpoint
    deleted or lost on the node must never delete the durable copy; the bucket keeps versions too)."""
    return (
        f"aws s3 sync {shlex.quote(source)} {shlex.quote(destination)} --region {shlex.quote(region)} "
        "--no-progress --only-show-errors"
    )


def s3_copy_functions(region: str) -> str:
    """The AWS CLI has no option refusing an overwrite: `aws s3 sync` sends a file whose object is missing or
    differs in size or age, so a file already copied whole is not sent again; what it does replace stays in the
    versioned bucket as a previous version. --exclude matches the path under the source."""
    options = f"--region {shlex.quote(region)} --no-progress --only-show-errors"
    return (
        f'copy_new_files() {{ aws s3 sync "$1" "$2" --exclude "$3" {options}; }}\n'
        f'copy_new_file() {{ aws s3 cp "$1" "$2" {options}; }}\n'
    )


@dataclass(frozen=True)
class AwsNodePlatform:
    """EC2 nodes of one Region (the CLI calls name it: the stack's Region, where its secrets and buckets are)."""

    region: str
    name: str = "aws"
    tool_functions: str = AWS_CLI_FUNCTION
    tool_setup: str | None = "ensure_aws_cli"
    metadata_functions: str = IMDS_FUNCTION
    preemption_notice_seconds: int = SPOT_NOTICE_SECONDS
    preemption_source: str = "EC2 spot instance-action on IMDSv2"
    preemption_functions: str | None = SPOT_NOTICE_FUNCTION
    object_uri_form: str = "s3://bucket[/prefix]"
    lustre_product: str = "FSx for Lustre"
    lustre_client_source: str = "FSx's repository"
    lustre_client_install: str = FSX_LUSTRE_CLIENT_INSTALL
    slurm_packages: SlurmPackages = UBUNTU_ARCHIVE_SLURM

    def metadata_command(self, fact: NodeFact) -> str:
        return f"imds {_METADATA_PATHS[fact]}"

    def secret_command(self, reference: str) -> str:
        return munge_key_command(reference, self.region)

    def config_object_command(self, reference: str) -> str:
        """An SSM parameter (its name): updated in place by `up`, each value a new parameter version."""
        return ssm_parameter_command(reference, self.region)

    def is_object_uri(self, uri: str) -> bool:
        return uri.startswith("s3://")

    def object_sync_command(self, source: str, destination: str) -> str:
        return s3_sync_command(source, destination, self.region)

    @property
    def checkpoint_copy_functions(self) -> str:
        return s3_copy_functions(self.region)

    def units_before_slurmd(self, instance: InstanceType | None) -> tuple[str, ...]:
        """None: nothing on the image configures the GPUs or the fabric at boot after slurmd could start (the
        fabric's own unit, which slurmd requires, is the recipe's)."""
        return ()

    def fabric_hooks(self, instance: InstanceType | None) -> FabricHooks | None:
        """None: the Deep Learning AMI carries the EFA installer's libfabric and aws-ofi-nccl (see images)."""
        return None

    def container_fabric(self, instance: InstanceType | None) -> ContainerFabric:
        """EFA in a container: the EFA devices, and the DLAMI's libfabric (EFA installer, /opt/amazon/efa) and
        aws-ofi-nccl (/opt/amazon/ofi-nccl, which the installer bundles) on its loader path, with libfabric held
        to the EFA provider, as AWS's container guidance for EFA has it (EFA User Guide, "EFA with NCCL")."""
        if instance is None or instance.fabric != "efa":
            return ContainerFabric()
        return EFA_CONTAINER

    def local_nvme(self, instance: InstanceType | None) -> LocalNvme | None:
        """The instance store: NVMe disks whose model is "Amazon EC2 NVMe Instance Storage" (EBS volumes are "Amazon
        Elastic Block Store"), blank again after a stop/start. Mounted where the DLAMI mounts them (/opt/dlami/nvme),
        so a node finds them in one place whichever mounted them first."""
        return INSTANCE_STORE

    def block_device_path(self, volume: str) -> str:
        return ebs_device(volume)


INSTANCE_STORE = LocalNvme(
    disks="/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*",
    mount_point="/opt/dlami/nvme",
    source="EC2 User Guide, instance store volumes: NVMe model 'Amazon EC2 NVMe Instance Storage', data lost on stop",
)
EFA_CONTAINER = ContainerFabric(
    name="EFA",
    device_directories=("/dev/infiniband",),  # the EFA devices' uverbs nodes
    read_only=("/opt/amazon/efa", "/opt/amazon/ofi-nccl"),
    libraries=("/opt/amazon/ofi-nccl/lib", "/opt/amazon/efa/lib"),  # Ubuntu's layout (lib64 on Amazon Linux)
    environment=(("FI_PROVIDER", "efa"),),
    # aws-ofi-nccl's library: libnccl-net-ofi.so in its newer releases, libnccl-net.so (also a link to it) in all.
    net_plugins=("libnccl-net-ofi.so", "libnccl-net.so"),
)


def node_platform(spec: StackSpec) -> AwsNodePlatform:
    """The platform of the spec's nodes (the registry's entry: `accelstack.components.node_platform`)."""
    return AwsNodePlatform(region=spec.account.region)
