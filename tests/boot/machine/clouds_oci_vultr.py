"""OCI and Vultr as a booting machine sees them: their metadata services' trees, the volumes OCI attaches, the Vault
secrets OCI's instance principal may read.

OCI (docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm, IMDS v2): `instance/` carries the instance's
own fields and its `metadata` map (user_data and the stack's keys, as launched), `vnics/` a JSON list whose first
entry is the primary VNIC, `identity/` the instance principal's certificate, intermediate and key. Vultr
(docs.vultr.com/products/compute/cloud-gpu "Instance Metadata Service"): `/v1.json` is the whole document, its
leaves also as `/v1/<path>`. Values come from the captured stack where the stack decides them.
"""

from __future__ import annotations

import json

from accelstack.engine.capture import Capture, Registration

OCI_REGION, OCI_REGION_KEY = "us-ashburn-1", "iad"
# What the instance principal signer reads before it asks the auth service for a token (PEM shapes only).
_IDENTITY = {
    "identity/cert.pem": "-----BEGIN CERTIFICATE-----\nharness leaf\n-----END CERTIFICATE-----\n",
    "identity/intermediate.pem": "-----BEGIN CERTIFICATE-----\nharness intermediate\n-----END CERTIFICATE-----\n",
    "identity/key.pem": "-----BEGIN RSA PRIVATE KEY-----\nharness\n-----END RSA PRIVATE KEY-----\n",
}


def _oci_launch(resource: Registration) -> dict:
    """An instance's inputs, or the launch details of an instance configuration (a pool's instances)."""
    details = (resource.inputs.get("instanceDetails") or {}).get("launchDetails")
    return details if details is not None else resource.inputs


def oci_metadata(capture: Capture, resource: Registration) -> dict[str, str]:
    launch = _oci_launch(resource)
    address = ((launch.get("createVnicDetails") or {}).get("privateIp")) or "10.60.0.21"
    tree = {
        "instance/id": f"ocid1.instance.oc1.{OCI_REGION_KEY}.harness{abs(hash(resource.urn)) % 10**8}",
        "instance/displayName": str(launch.get("displayName") or resource.name),
        "instance/shape": str(launch.get("shape", "")),
        "instance/region": OCI_REGION_KEY,
        "instance/canonicalRegionName": OCI_REGION,
        "instance/availabilityDomain": str(launch.get("availabilityDomain") or "Uocm:US-ASHBURN-AD-1"),
        "instance/compartmentId": str(launch.get("compartmentId") or resource.inputs.get("compartmentId", "")),
        "vnics": json.dumps([{"vnicId": "ocid1.vnic.oc1.iad.harness", "privateIp": address, "vlanTag": 0}]),
        **_IDENTITY,
    }
    for key, value in (launch.get("metadata") or {}).items():
        if isinstance(value, str):
            tree[f"instance/metadata/{key}"] = value
    return tree


def oci_objects(capture: Capture) -> dict[str, dict[str, str]]:
    """The Vault secrets by OCID, and which of them the stack's policies let its instances read: a secret bundle
    read is allowed by a `read secret-bundles` (or broader) statement naming the secret's id, or naming none."""
    secrets = {r.id: r.name for r in capture.by_type("oci:Vault/secret:Secret") if r.id}
    readable: dict[str, str] = {}
    for policy in capture.by_type("oci:Identity/policy:Policy"):
        for statement in policy.inputs.get("statements") or []:
            statement = str(statement)
            if not any(f"{verb} secret-bundles" in statement or f"{verb} secret-family" in statement
                       for verb in ("read", "use", "manage")):  # fmt: skip
                continue
            named = [secret for secret in secrets if secret in statement]
            for secret in named if "target.secret.id" in statement else list(secrets):
                readable[secret] = secrets[secret]
    return {"ssm": {}, "vault": {}, "oci_secrets": readable}


def oci_devices(capture: Capture, resource: Registration) -> tuple[str, ...]:
    """Paravirtualized volumes attached at a consistent device path (the attachment's `device`): the platform image's
    udev rules link /dev/oracleoci/oraclevd* to the disk (Block/References/consistentdevicepaths.htm)."""
    ids = {resource.id, resource.outputs.get("id")}
    return tuple(
        str(a.inputs["device"])
        for a in capture.by_type("oci:Core/volumeAttachment:VolumeAttachment")
        if a.inputs.get("instanceId") in ids and a.inputs.get("device")
    )


def vultr_metadata(resource: Registration) -> dict[str, str]:
    document = {
        "instanceid": "harness-0000-4000-8000-000000000001",
        "instance-v2-id": "harness-0000-4000-8000-000000000001",
        "hostname": str(resource.inputs.get("hostname") or resource.name),
        "region": {"regioncode": str(resource.inputs.get("region", "")).upper()},
        "interfaces": [
            {"ipv4": {"address": "203.0.113.10", "gateway": "203.0.113.1", "netmask": "255.255.255.0"},
             "network-type": "public"},
            {"ipv4": {"address": "10.7.96.3", "netmask": "255.255.240.0"}, "network-type": "private"},
        ],
        "tags": list(resource.inputs.get("tags") or []),
    }  # fmt: skip
    tree = {"v1.json": json.dumps(document)}

    def leaves(prefix: str, node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                leaves(f"{prefix}/{key}", value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                leaves(f"{prefix}/{index}", value)
        else:
            tree[prefix] = str(node)

    leaves("v1", document)
    return tree
