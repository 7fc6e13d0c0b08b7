"""The OCI machines' boot data and address plan as the OCI components will render and carve them, for the neutral
spec rules (`accelstack.spec.catalog_rules.boot_data_fits_the_clouds_limit`, `accelstack.spec.address_rules`).

An instance's metadata (user_data base64-encoded, and the head's Slurm configuration key) takes at most 32,000 bytes
(the OCI description's `boot_data_limit`): enough partitions or dataset syncs would make the head's launch fail after
the file system and the vault exist, so the size is checked by rendering, before anything exists.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from accelstack.clouds.oci.catalog import (
    DEFAULT_VCN_CIDR,
    LUSTRE_MIN_GB,
    LUSTRE_STEPS_GIB,
    SLURM_CONFIG_METADATA_KEY,
    STATE_DEVICE,
    gb_for_gib,
    lustre_addresses,
)
from accelstack.components import slurm
from accelstack.spec.address_rules import CarvedRange, carves
from accelstack.spec.catalog_rules import BootData, boot_data
from accelstack.spec.models import TrainingStack

# A Vault secret OCID at its longest (ocid1.vaultsecret.<realm>.<region>.<unique id>, the unique id 60 characters).
LONGEST_SECRET_OCID = f"ocid1.vaultsecret.oc1.{'r' * 20}.{'u' * 60}"
# OCI keeps the first two addresses and the last of every subnet (docs.oracle.com/iaas/Content/Network/Concepts/
# overview.htm#Reserved).
SUBNET_RESERVED_ADDRESSES = 3


@boot_data(workload="training")
def slurm_nodes_metadata(spec: TrainingStack) -> Iterator[BootData]:
    """The head's user_data beside its Slurm configuration key, and the nodes' user_data (the instance
    configuration's metadata), rendered as the OCI Slurm components will."""
    if spec.training.scheduler.kind != "slurm":
        return
    values = slurm.DeployValues(
        head_address="255.255.255.255",
        lustre_dns_name="255.255.255.255",
        lustre_mount_name="lustrefs",
        munge_key_secret=LONGEST_SECRET_OCID,
        slurm_config=SLURM_CONFIG_METADATA_KEY,
        state_volume=STATE_DEVICE,
        checkpoint_interval_seconds=86_400,
    )
    rendered = slurm.boot_data_at_longest(spec, values)
    if rendered is None:
        return  # an input another rule reports stops rendering
    head, compute, bundle = rendered
    fewer = "use fewer partitions (or features) or dataset syncs"
    # The configuration key sits beside user_data in the same metadata (its value base64 text already).
    beside = len(SLURM_CONFIG_METADATA_KEY) + len(bundle) + len("user_data")
    yield BootData("training.scheduler", "the head node", head, beside=beside, remedy=fewer)
    yield BootData("training.scheduler", "the compute nodes", compute, beside=len("user_data"), remedy=fewer)


@carves(workload="training")
def training_ranges(spec: TrainingStack) -> Iterator[CarvedRange]:
    """The VCN and its one private subnet (its first half: components.oci.network), which holds the nodes, the head
    and Lustre's servers; the RDMA addressing is the cluster network's own, outside the VCN."""
    network = spec.training.network
    if network.vpc_id is not None:
        return
    cidr = ipaddress.IPv4Network(network.vpc_cidr or DEFAULT_VCN_CIDR, strict=False)
    path = "training.network.vpcCidr"
    yield CarvedRange(path, "the VCN range", cidr)
    holds = ((spec.training.nodes.count, "nodes"), (1, "Slurm head"), *_lustre_holds(spec))
    subnet = next(cidr.subnets(prefixlen_diff=1))
    yield CarvedRange(path, "the nodes' subnet", subnet, "the VCN", SUBNET_RESERVED_ADDRESSES, holds)


def _lustre_holds(spec: TrainingStack) -> tuple[tuple[int, str], ...]:
    """File Storage with Lustre's servers in the nodes' subnet (components/oci/storage.py), by its capacity: the
    stated step, or the smallest (the planner never picks less) when the size is the planner's or not a step (the
    capacity rule reports that)."""
    lustre = spec.training.storage.lustre
    if lustre is None:
        return ()
    stated = lustre.capacity_gib
    gb = gb_for_gib(stated) if stated in LUSTRE_STEPS_GIB else LUSTRE_MIN_GB
    return ((lustre_addresses(gb), f"File Storage with Lustre ({gb:,} GB: up to 60 addresses per 100 TB)"),)
