"""OCI (pulumi-oci) readers of the guardrails and separation concerns: public buckets, customer keys, versioned
checkpoint buckets, node metadata, public addresses, what the security lists and network security groups admit
from the internet, least privilege of IAM statements, compartment placement and freeform tags."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..common import LABEL_TAGS, as_list, decode, tag_values, truthy, urn_name
from ..readers import get, is_public_range, items_at, name_of, node_data_secrets, spot_without_checkpoints
from .access import DYNAMIC_GROUP, IDENTITY_TYPES, POLICY
from .statements import parse

CLOUD = "oci"
BUCKET = "oci:ObjectStorage/bucket:Bucket"
LUSTRE = "oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem"
VOLUME = "oci:Core/volume:Volume"
INSTANCE = "oci:Core/instance:Instance"
CONFIGURATION = "oci:Core/instanceConfiguration:InstanceConfiguration"
SUBNET = "oci:Core/subnet:Subnet"
SECURITY_LIST = "oci:Core/securityList:SecurityList"
NSG_RULE = "oci:Core/networkSecurityGroupSecurityRule:NetworkSecurityGroupSecurityRule"
KEY = "oci:Kms/key:Key"
# Where each stateful kind names its customer key (without one OCI encrypts with an Oracle-managed key).
KEY_INPUTS: dict[str, tuple[str, ...]] = {BUCKET: ("kmsKeyId",), LUSTRE: ("kmsKeyId",), VOLUME: ("kmsKeyId",)}


def launch_details(resource: Any) -> Any:
    """An instance's own inputs, or an instance configuration's launch details (the cluster network's nodes)."""
    if resource.resource_type == INSTANCE:
        return resource.props
    if resource.resource_type == CONFIGURATION:
        return get(resource.props, "instanceDetails", "launchDetails")
    return None


# --- encryption -----------------------------------------------------------------------------------


def check_customer_keys(resources: Sequence[Any], data_pattern: str) -> Iterable[tuple[str, str]]:
    """OCI encrypts at rest with Oracle-managed keys by default
    (https://docs.oracle.com/iaas/Content/Object/Tasks/encryption.htm); where the stack has its own Vault key,
    data buckets (`kmsBucketPattern`), Lustre and block volumes use it (`kmsKeyId`). Ours (Checkov CKV_OCI_9 and
    CKV_OCI_3 ask the same of buckets and volumes)."""
    if not any(r.resource_type == KEY for r in resources):
        return
    for resource in resources:
        path = KEY_INPUTS.get(resource.resource_type)
        if path is None or get(resource.props, *path):
            continue
        if resource.resource_type == BUCKET and not _named(resource, data_pattern):
            continue
        yield (
            resource.urn,
            f"{name_of(resource)} uses an Oracle-managed key while the stack has a Vault key: set kmsKeyId",
        )


# --- public exposure ------------------------------------------------------------------------------


def check_no_public_buckets(resource: Any) -> Iterable[str]:
    """No public bucket: accessType NoPublicAccess (Checkov CKV_OCI_10); ObjectRead, ObjectReadWithoutList and
    ObjectWrite... let anyone on the internet read (or list) the objects."""
    if resource.resource_type != BUCKET:
        return
    access_type = str(resource.props.get("accessType") or "NoPublicAccess")
    if access_type != "NoPublicAccess":
        yield f"bucket {name_of(resource)} is public (accessType {access_type}; must be NoPublicAccess)"


def check_no_public_ip(resource: Any) -> Iterable[str]:
    """Nodes get no public address: createVnicDetails.assignPublicIp false on instances and on the instance
    configuration's launch details (the default is true in a public subnet: Core API, CreateVnicDetails)."""
    if resource.resource_type not in (INSTANCE, CONFIGURATION):
        return
    details = launch_details(resource)
    if details is None:  # a configuration copied from an instance (`source: INSTANCE`): nothing to read, so fail
        yield f"{name_of(resource)} has no launch details whose public-IP setting the pack can read"
        return
    vnic = get(details, "createVnicDetails")
    assign = get(vnic, "assignPublicIp")
    if vnic is None or assign is None or truthy(assign) or str(assign).lower() == "true":
        yield f"{name_of(resource)} does not set createVnicDetails.assignPublicIp false (nodes get public addresses)"


def private_subnet_problems(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Subnets forbid public addresses on their VNICs (prohibitPublicIpOnVnic; Checkov CKV_OCI_... family)
    and internet ingress (prohibitInternetIngress)."""
    for subnet in (r for r in resources if r.resource_type == SUBNET):
        for key in ("prohibitPublicIpOnVnic", "prohibitInternetIngress"):
            if not truthy(subnet.props.get(key)):
                yield (
                    subnet.urn,
                    f"subnet {name_of(subnet)} does not set {key} (a node there may be reached from the internet)",
                )


def ingress(resource: Any) -> list[tuple[str, str]]:
    """(source, what) of every ingress rule of a security list or an NSG rule."""
    if resource.resource_type == SECURITY_LIST:
        rules = items_at(resource.props, "ingressSecurityRules")
        return [(str(r.get("source")), f"protocol {r.get('protocol')}") for r in rules]
    if resource.resource_type == NSG_RULE and str(resource.props.get("direction") or "") == "INGRESS":
        if str(resource.props.get("sourceType") or "CIDR_BLOCK") != "CIDR_BLOCK":
            return []  # a service CIDR label or another NSG: not the internet
        return [(str(resource.props.get("source")), f"protocol {resource.props.get('protocol')}")]
    return []


def check_no_internet_ingress(resource: Any, workload: str | None) -> Iterable[str]:
    """Security lists and network security groups admit no public source (Checkov CKV_OCI_16-20: no 0.0.0.0/0 to
    SSH, RDP or all ports): training nodes are reached from the VCN only."""
    for source, what in ingress(resource):
        if is_public_range(source):
            yield f"{name_of(resource)} admits {what} from {source}; nodes are reached from the VCN only"


# --- node data ------------------------------------------------------------------------------------


def node_texts(resource: Any) -> list[tuple[str, Any]]:
    """(where, base64 text) of every metadata value an instance or configuration carries (user_data is base64;
    accelstack's other keys are base64 gzip)."""
    details = launch_details(resource)
    metadata = decode(get(details, "metadata")) if details is not None else None
    found = [(f"metadata.{k}", v) for k, v in metadata.items()] if isinstance(metadata, Mapping) else []
    extended = decode(get(details, "extendedMetadata")) if details is not None else None
    if isinstance(extended, Mapping):
        found += [(f"extendedMetadata.{k}", str(v)) for k, v in extended.items()]
    return found


def check_node_data_secrets(resource: Any) -> Iterable[str]:
    """No secrets in instance metadata (readable from the instance metadata service by every process on the node,
    and by anyone who may read the instance: https://docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm)."""
    return node_data_secrets(resource, node_texts(resource))


def spot_usage(resource: Any) -> str | None:
    details = launch_details(resource)
    if details is not None and get(details, "preemptibleInstanceConfig") is not None:
        return "uses preemptible capacity (preemptibleInstanceConfig)"
    return None


def check_spot_training_checkpoints(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """As AWS's: preemptible training needs a checkpoint bucket. Ours."""
    return spot_without_checkpoints(resources, pattern, spot_usage)


# --- least privilege ------------------------------------------------------------------------------


def check_least_privilege(resource: Any) -> Iterable[str]:
    """No statement manages everything (`manage all-resources`, Checkov CKV_OCI_... family and OCI's own
    guidance to grant by family in a compartment) or grants anything in the whole tenancy but a service's use of
    the network (https://docs.oracle.com/iaas/Content/Security/Reference/iam_security.htm)."""
    if resource.resource_type != POLICY:
        return
    for text in as_list(decode(resource.props.get("statements"))):
        statement = parse(str(text))
        if statement.unparsed:
            continue  # the access graph fails it closed, with why
        machines = [f"{s.kind} {s.name}".strip() for s in statement.subjects if s.kind != "group"]
        if statement.what.lower() == "all-resources" and statement.verb in ("use", "manage"):
            yield f"policy {name_of(resource)} grants {statement.verb} all-resources: {text!r}"
        elif statement.what.lower() in IDENTITY_TYPES and statement.verb in ("use", "manage") and machines:
            # A machine (a dynamic group's instances, a service, anyone) that may write policies, groups or dynamic
            # groups grants itself the rest: all-resources by another name (OCI's IAM guidance,
            # https://docs.oracle.com/iaas/Content/Security/Reference/iam_security.htm). A side's deploy group
            # (`group`, people and CI: components/oci/landing.py) writes its nodes' policies by design.
            yield (
                f"policy {name_of(resource)} lets {', '.join(machines)} {statement.verb} {statement.what}, "
                f"which writes who may do what: {text!r}"
            )
        elif statement.scope == "tenancy":
            yield f"policy {name_of(resource)} grants in the whole tenancy: {text!r}; name the compartment by id"


# --- versioning -----------------------------------------------------------------------------------


def _named(bucket: Any, pattern: str) -> bool:
    names = (urn_name(bucket.urn), str(bucket.props.get("name") or ""))
    return any(re.search(pattern, n, re.IGNORECASE) for n in names)


def versioning_problems(resources: Sequence[Any], pattern: str) -> Iterable[tuple[str, str]]:
    """Checkpoint/artifact buckets keep object versions (versioning Enabled; Checkov CKV_OCI_8); no bucket
    suspends versioning."""
    for bucket in (r for r in resources if r.resource_type == BUCKET):
        versioning = str(bucket.props.get("versioning") or "Disabled")
        if versioning == "Suspended":
            yield bucket.urn, f"bucket {name_of(bucket)} suspends versioning"
        elif _named(bucket, pattern) and versioning != "Enabled":
            yield bucket.urn, f"bucket {name_of(bucket)} holds checkpoints/artifacts but versioning is {versioning}"


# --- separation -----------------------------------------------------------------------------------

# Kinds OCI keeps in the tenancy (the root compartment): a dynamic group cannot live elsewhere
# (https://docs.oracle.com/iaas/Content/Identity/dynamicgroups/managingdynamicgroups.htm).
TENANCY_KINDS = frozenset({DYNAMIC_GROUP})


def compartment_problems(resource: Any, own: frozenset[str]) -> Iterable[str]:
    """Every OCI resource with a compartmentId names the stack's compartment (the provider signs for the whole
    tenancy, so the compartment is the separation); a dynamic group lives in the provider's tenancy (`own` holds
    it), where OCI keeps them."""
    compartment = resource.props.get("compartmentId")
    if not isinstance(compartment, str) or not compartment or not own:
        return
    if compartment.startswith("ocid1.tenancy."):
        if resource.resource_type not in TENANCY_KINDS:
            yield (
                f"{resource.resource_type} {name_of(resource)} is in the tenancy's root compartment {compartment}, "
                "which holds both sides' compartments: put it in the stack's compartment"
            )
        elif compartment not in own:
            yield f"{resource.resource_type} {name_of(resource)} is in tenancy {compartment}, not the provider's"
        return
    if compartment not in own:
        yield (
            f"{resource.resource_type} {name_of(resource)} is in compartment {compartment}; "
            f"this stack's compartments: {', '.join(sorted(own))}"
        )


def resource_tags(resource: Any) -> Mapping[str, str]:
    """OCI freeform tags, spelled like GCP's labels (`accelstack-workload`)."""
    return {LABEL_TAGS.get(k, k): v for k, v in tag_values(resource.props.get("freeformTags")).items()}
