"""Each cloud as a booting machine sees it: its metadata service's answers and the disks it attaches.

Paths and formats are the services' own (EC2 "Instance metadata categories"; Compute Engine "Predefined
metadata keys"; Azure IMDS "instance" and "identity" endpoints; OCI "Getting Instance Metadata" (IMDS v2: instance/,
vnics/, identity/); Vultr "Instance Metadata Service" (/v1.json)). Values come from the captured stack where
the stack decides them (the head's attached state disk), else are a plausible instance's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

from accelstack.engine.capture import Capture, Registration
from tests.boot.machine.clouds_oci_vultr import oci_devices, oci_metadata, oci_objects, vultr_metadata


def metadata(cloud: str, capture: Capture, resource: Registration) -> dict[str, str]:
    if cloud == "oci":
        return oci_metadata(capture, resource)
    if cloud == "vultr":
        return vultr_metadata(resource)
    return _instance_metadata(cloud, resource) | {
        f"instance/attributes/{key}": str(value)
        for key, value in (resource.inputs.get("metadata") or {}).items()
        if cloud == "gcp" and isinstance(value, str)
    }


# A Vultr replica boots this long after its weights key clock was set (the instance's provisioning).
VULTR_BOOT_AFTER_CLOCK_SECONDS = 600
# The scoped key the deployer put in the key object (the harness's; never a real key).
VULTR_SCOPED_KEY = ("HARNESSSCOPEDREADER0", "HarnessScopedReaderSecret0123456789/+abcd")


def objects(
    cloud: str,
    capture: Capture,
    resource: Registration | None = None,
    *,
    boot_delay: int = VULTR_BOOT_AFTER_CLOCK_SECONDS,
) -> dict[str, Any]:
    """What the stack stored in the cloud that boots read back: SSM parameters and Key Vault secrets by name,
    and whether the vault's firewall refuses `resource`'s machines (their subnet is not among its rules); on OCI, its
    vault's secrets; on Vultr, the weights key object, the one presigned URL that reads it (signed here by botocore
    from what the stack deployed: the replica's clock, the key object, the signer) and the machine's clock
    `boot_delay` s later."""
    if cloud == "oci":
        return oci_objects(capture)
    found: dict[str, Any] = {"ssm": {}, "vault": {}}
    if cloud == "vultr" and resource is not None:
        found["vultr"] = _vultr_store(capture, resource, boot_delay)
    if cloud == "aws":
        for parameter in capture.by_type("aws:ssm/parameter:Parameter"):
            found["ssm"][str(parameter.inputs.get("name"))] = _plain(parameter.inputs.get("value"))
    if cloud == "azure":
        for secret in capture.by_type("azure-native:keyvault:Secret"):
            value = (secret.inputs.get("properties") or {}).get("value")
            found["vault"][str(secret.inputs.get("secretName"))] = _plain(value)
        if resource is not None and not _vault_admits(capture, resource):
            found["vault_firewall"] = {"refuses": "ForbiddenByFirewall"}
    return found


def _vultr_store(capture: Capture, resource: Registration, boot_delay: int) -> dict[str, Any]:
    from datetime import datetime

    import botocore.auth
    import botocore.session
    from botocore.config import Config

    from accelstack.components.vultr.serving.weights_key import OFFLINE_SIGNER
    from accelstack.examples import example_file
    from accelstack.spec import load_stack

    [clock] = [c for c in capture.by_type("time:index/static:Static") if c.name == f"{resource.name}-key-clock"]
    repo = Path(__file__).resolve().parents[3]
    key = load_stack(example_file(capture.stack, repo / "stacks")).account.weights_key  # type: ignore[union-attr]
    bucket, _, name = key.object.removeprefix("s3://").partition("/")
    host = f"{resource.inputs['region']}1.vultrobjects.com"
    signed_at = datetime.fromisoformat(clock.outputs["rfc3339"])
    client = botocore.session.Session().create_client(
        "s3", region_name="us-east-1", endpoint_url=f"https://{host}", aws_access_key_id=OFFLINE_SIGNER[0],
        aws_secret_access_key=OFFLINE_SIGNER[1], config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )  # fmt: skip
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=signed_at.replace(tzinfo=None)):
        url = client.generate_presigned_url(
            "get_object", Params={"Bucket": bucket, "Key": name}, ExpiresIn=key.url_lifetime_minutes * 60
        )
    return {
        "presigned": url,
        "now": signed_at.timestamp() + boot_delay,
        "key_object": f"AWS_ACCESS_KEY_ID={VULTR_SCOPED_KEY[0]}\nAWS_SECRET_ACCESS_KEY={VULTR_SCOPED_KEY[1]}\n",
        "scoped_key": list(VULTR_SCOPED_KEY),
        "endpoint": f"https://{host}",
    }


def _vault_admits(capture: Capture, resource: Registration) -> bool:
    """Key Vault's firewall as it judges a VM's request: allowed by default, else only from a subnet among its
    virtual network rules (the service endpoint carries the subnet's identity; overview-vnet-service-endpoints)."""
    vaults = capture.by_type("azure-native:keyvault:Vault")
    if not vaults:
        return True
    acls = (vaults[0].inputs.get("properties") or {}).get("networkAcls") or {}
    if acls.get("defaultAction", "Allow") == "Allow":
        return True
    admitted = {rule.get("id") for rule in acls.get("virtualNetworkRules") or []}
    return _subnet_of(capture, resource) in admitted


def _subnet_of(capture: Capture, resource: Registration) -> str | None:
    """The subnet a VM's primary NIC is in (a VM names its NIC; a scale set carries the NIC's configuration)."""
    profile = resource.inputs.get("virtualMachineProfile")
    if profile is not None:
        configuration = profile["networkProfile"]["networkInterfaceConfigurations"][0]
        return configuration["ipConfigurations"][0]["subnet"]["id"]
    nic_id = resource.inputs["networkProfile"]["networkInterfaces"][0]["id"]
    [nic] = [nic for nic in capture.by_type("azure-native:network:NetworkInterface") if nic.id == nic_id]
    return nic.inputs["ipConfigurations"][0]["subnet"]["id"]


def _plain(value) -> str:
    """A secret input as the cloud stores it (the capture wraps secrets in Pulumi's secret envelope)."""
    if isinstance(value, dict) and "value" in value:
        return str(value["value"])
    return str(value)


def _instance_metadata(cloud: str, resource: Registration) -> dict[str, str]:
    if cloud == "aws":
        return {
            "meta-data/instance-id": "i-0123456789abcdef0",
            "meta-data/instance-type": "p5.48xlarge",
            "meta-data/local-ipv4": "10.0.1.23",
            "meta-data/local-hostname": "ip-10-0-1-23.ec2.internal",
            "meta-data/mac": "0a:00:00:00:00:01",
            "meta-data/placement/region": "us-east-1",
            "meta-data/placement/availability-zone": "us-east-1a",
            "meta-data/iam/security-credentials": "accelstack-node",
            "meta-data/iam/security-credentials/accelstack-node": json.dumps(
                {"Code": "Success", "AccessKeyId": "ASIAHARNESS", "SecretAccessKey": "x", "Token": "y"}
            ),
            "meta-data/autoscaling/target-lifecycle-state": "InService",
            "dynamic/instance-identity/document": json.dumps(
                {"region": "us-east-1", "instanceId": "i-0123456789abcdef0", "accountId": "111111111111"}
            ),
        }
    if cloud == "gcp":
        return {
            "instance/id": "1234567890123456789",
            "instance/name": f"{resource.name}-x7k2",
            "instance/hostname": f"{resource.name}-x7k2.us-central1-a.c.project.internal",
            "instance/zone": "projects/123456789012/zones/us-central1-a",
            "instance/machine-type": "projects/123456789012/machineTypes/a3-megagpu-8g",
            "instance/network-interfaces/0/ip": "10.0.1.23",
            "instance/preempted": "FALSE",
            "instance/maintenance-event": "NONE",
            "instance/service-accounts/default/email": "nodes@project.iam.gserviceaccount.com",
            "project/project-id": "project",
            "project/numeric-project-id": "123456789012",
        }
    if cloud == "azure":
        return {
            "instance/network/interface/0/ipv4/ipAddress/0/privateIpAddress": "10.0.1.23",
            "instance/compute/name": f"{resource.name}_0",
            "instance/compute/location": "eastus",
            "instance/compute/zone": "1",
            "instance/compute/resourceGroupName": "accelstack",
            "instance/compute/subscriptionId": "00000000-0000-0000-0000-000000000000",
            "instance/compute/vmId": "11111111-1111-1111-1111-111111111111",
            "instance/compute/vmScaleSetName": resource.name,
        }
    raise ValueError(f"no metadata service modelled for {cloud}")


def devices(cloud: str, capture: Capture, resource: Registration) -> tuple[str, ...]:
    """The block devices the cloud attaches to this machine, by the names its udev rules give them."""
    if cloud == "aws":
        ids = {r.id: r for r in capture.resources}
        attached = [
            r.inputs.get("volumeId", "")
            for r in capture.by_type("aws:ec2/volumeAttachment:VolumeAttachment")
            if r.inputs.get("instanceId") in (resource.id, resource.outputs.get("id"))
        ]
        # EBS volumes on Nitro appear as NVMe devices whose serial is the volume id without its dash.
        return tuple(
            f"/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_{v.replace('-', '')}" for v in attached if v in ids or v
        )
    if cloud == "azure":
        disks = resource.inputs.get("storageProfile", {}).get("dataDisks", [])
        return tuple(f"/dev/disk/azure/scsi1/lun{int(d['lun'])}" for d in disks)
    if cloud == "gcp":
        disks = resource.inputs.get("attachedDisks", [])
        return tuple(f"/dev/disk/by-id/google-{d['deviceName']}" for d in disks if d.get("deviceName"))
    if cloud == "oci":
        return oci_devices(capture, resource)
    return ()


def machine_type(cloud: str, resource: Registration) -> str:
    inputs = resource.inputs
    if cloud == "aws":
        return str(inputs.get("instanceType", ""))
    if cloud == "azure":
        return str((inputs.get("sku") or {}).get("name") or (inputs.get("hardwareProfile") or {}).get("vmSize", ""))
    if cloud == "oci":
        return str(
            inputs.get("shape") or ((inputs.get("instanceDetails") or {}).get("launchDetails") or {}).get("shape")
        )
    if cloud == "vultr":
        return str(inputs.get("plan", ""))
    return str(inputs.get("machineType", ""))


# What a machine type's sysfs shows that its boot scripts look for: A3 Mega's GPUDirect-TCPXO aperture devices
# (PCI 0x1ae0:0x0084, one per GPU NIC; cloud.google.com/compute/docs/gpus/gpudirect); A3 Ultra's and A4's eight
# RDMA devices and the two gVNICs NCCL bootstraps over (Cluster Toolkit's a3ultra/a4 blueprints name enp0s19 and
# enp192s20).
def _apertures(count: int) -> dict[str, str]:
    files = {}
    for index in range(count):
        device = f"bus/pci/devices/0000:{0x80 + index:02x}:00.0"
        files |= {f"{device}/vendor": "0x1ae0", f"{device}/device": "0x0084", f"{device}/resource0": ""}
    return files


_RDMA = {f"class/infiniband/mlx5_{i}/ports/1/state": "4: ACTIVE" for i in range(8)} | {
    "class/net/enp0s19/": "",
    "class/net/enp192s20/": "",
}
# A3 Mega's nine gVNICs as Ubuntu names them, written out here rather than read from the catalog so a wrong name
# there fails: the control NIC and the 8 GPU NICs (Cluster Toolkit's examples/machine-learning/a3-megagpu-8g/
# nccl-tests/run-nccl-tests.sh sets NCCL_FASTRAK_CTRL_DEV and NCCL_FASTRAK_IFNAME to these).
_A3_MEGA_NICS = {
    f"class/net/{nic}/": ""
    for nic in ["enp0s12", "enp6s0", "enp7s0", "enp13s0", "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"]
}
SYSFS = {"a3-megagpu-8g": _apertures(8) | _A3_MEGA_NICS, "a3-ultragpu-8g": _RDMA, "a4-highgpu-8g": _RDMA}


def sysfs(cloud: str, resource: Registration) -> dict[str, str]:
    """sysfs entries (relative to /sys) of the machine's type: a path ending in / is a directory."""
    return SYSFS.get(machine_type(cloud, resource), {})
