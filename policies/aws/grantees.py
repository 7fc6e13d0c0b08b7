"""Grants given outside a policy document, as access-graph edges: KMS grants, Lambda permissions, RAM
shares, snapshot and image sharing, and S3 bucket ACLs (canned ACLs, a bucket's inline `grants`, BucketAcl's
accessControlPolicy)."""

from __future__ import annotations

from typing import Any

from ..access import ADMIN, ANY, KEY, OBJECTS, OWN, READ, SERVICE, WRITE, Edge, Party, Placement
from ..access import unplaced as unplaced_party
from ..common import as_list, urn_name
from . import documents as docs
from .concepts import AWS
from .documents import strings, tolerant

BUCKET_ACLS = AWS["bucket-acl"]
# S3 ACL permissions and canned ACLs (https://docs.aws.amazon.com/AmazonS3/latest/userguide/acl-overview.html).
ACL_LEVELS = {"READ": READ, "READ_ACP": READ, "WRITE": WRITE, "WRITE_ACP": ADMIN, "FULL_CONTROL": ADMIN}
CANNED_ACLS = {
    "public-read": (ANY, READ),
    "public-read-write": (ANY, WRITE),
    "authenticated-read": (ANY, READ),
    "log-delivery-write": (SERVICE, WRITE),
    "aws-exec-read": (SERVICE, READ),
}
ACL_GROUPS = {"AllUsers": ANY, "AuthenticatedUsers": ANY, "LogDelivery": SERVICE}
# KMS grant operations (https://docs.aws.amazon.com/kms/latest/developerguide/grants.html#terms-grant-operations).
GRANT_READ = frozenset({"Decrypt", "DescribeKey", "GetPublicKey", "Verify", "VerifyMac"})
GRANT_ADMIN = frozenset({"CreateGrant", "RetireGrant"})


def name_of(resource: Any) -> str:
    return resource.name or urn_name(resource.urn)


def principal_value(value: str, placement: Placement) -> Party:
    """A principal given as one string (KMS grants, Lambda permissions, RAM): account, ARN, service or `*`."""
    if value == "*":
        return Party("Principal *", ANY)
    if value.endswith(".amazonaws.com") or value.endswith(".amazonaws.com.cn"):
        return Party(value, SERVICE)
    if value.startswith("arn:") and (":organizations:" in value or ":ou/" in value):
        return unplaced_party(value, "an organization or organizational unit, whose accounts the pack cannot list")
    return docs.account_principal(value, placement)


def key_party(resource: Any, placement: Placement) -> Party:
    values = strings(resource.props, "keyId")
    value = values[0] if values else ""
    account = docs.arn_account(value, placement) if value.startswith("arn:") else OWN
    return Party(f"key {docs.arn_name(value) or name_of(resource)}", OWN if account is None else account, KEY)


def kms_grant(resource: Any, name: str, placement: Placement) -> list[Edge]:
    """A KMS grant lets its grantee use the key for its operations (no kms:ViaService: any caller path)."""
    key = key_party(resource, placement)
    operations = [str(o) for o in as_list(resource.props.get("operations"))]
    levels: dict[str, list[str]] = {}
    for operation in operations:
        level = READ if operation in GRANT_READ else ADMIN if operation in GRANT_ADMIN else WRITE
        levels.setdefault(level, []).append(operation)
    edges = []
    for prop, grant_levels in (("granteePrincipal", levels), ("retiringPrincipal", {ADMIN: ["RetireGrant"]})):
        for value in strings(resource.props, prop):
            source = principal_value(value, placement)
            for level, ops in grant_levels.items():
                edges.append(Edge(source, level, key, resource.urn, f"KMS grant {name} ({prop}: {', '.join(ops)})"))
    return edges


def lambda_permission(resource: Any, name: str, placement: Placement) -> list[Edge]:
    props = resource.props
    principal = str(props.get("principal") or "")
    source = principal_value(principal, placement)
    accounts = strings(props, "sourceAccount") + [
        a for v in strings(props, "sourceArn") if (a := docs.arn_account(v, placement) or "")
    ]
    if source.account in (SERVICE, ANY) and accounts:
        source = Party(f"{principal} for account {accounts[0]}", OWN if accounts[0] in placement.own else accounts[0])
    elif source.account == ANY and strings(props, "principalOrgId"):
        source = unplaced_party(principal, "narrowed only to an organization, whose accounts the pack cannot list")
    action = str(props.get("action") or "lambda:InvokeFunction")
    level = docs.level_of(action)[0]
    functions = strings(props, "function")
    target = Party(f"function {docs.arn_name(functions[0]) if functions else name}", OWN)
    return [Edge(source, level, target, resource.urn, f"Lambda permission {name} ({action})")]


def ram_principal(resource: Any, name: str, placement: Placement) -> list[Edge]:
    """A RAM share lets its principals use (launch into, write) the shared resources."""
    shares = strings(resource.props, "resourceShareArn")
    target = Party(f"resource share {docs.arn_name(shares[0]) if shares else name}", OWN)
    return [
        Edge(principal_value(value, placement), WRITE, target, resource.urn, f"RAM share {name} (principal {value})")
        for value in strings(resource.props, "principal")
    ]


def acl(resource: Any, name: str) -> list[Edge]:
    """Bucket ACLs: canned ACLs, the bucket's inline `grants`, BucketAcl's accessControlPolicy grants."""
    buckets = strings(resource.props, "bucket") if resource.resource_type in BUCKET_ACLS else []
    target = Party(f"bucket {buckets[0] if buckets else name}", OWN, OBJECTS)
    edges = []
    for canned in strings(resource.props, "acl"):
        if canned in CANNED_ACLS:
            account, level = CANNED_ACLS[canned]
            edges.append(
                Edge(Party(f"canned ACL {canned}", account), level, target, resource.urn, f"{name} acl {canned}", "")
            )
    grants = [(g, g) for g in tolerant(resource.props, "grants") or []]
    grants += [
        (g, tolerant(g, "grantee") and tolerant(g, "grantee")[0])
        for g in tolerant(resource.props, "accessControlPolicy", "grants") or []
    ]
    for grant, grantee in grants:
        permissions = strings(grant, "permissions") + strings(grant, "permission")
        source = _acl_grantee(grantee)
        for permission in permissions:
            level = ACL_LEVELS.get(permission, ADMIN)
            edges.append(Edge(source, level, target, resource.urn, f"{name} ACL grant ({permission})", ""))
    return edges


def _acl_grantee(grantee: Any) -> Party:
    types, ids, uris = strings(grantee, "type"), strings(grantee, "id"), strings(grantee, "uri")
    emails = strings(grantee, "emailAddress")
    if uris:
        group = uris[0].rsplit("/", 1)[-1]
        if group in ACL_GROUPS:
            return Party(f"group {group}", ACL_GROUPS[group])
        return unplaced_party(uris[0], "an ACL group S3 does not define")
    shown = ids[0] if ids else emails[0] if emails else str(types)
    return unplaced_party(f"{(types or ['grantee'])[0]} {shown}", "an S3 canonical user or email names no account")


# Sharing a disk snapshot or an image with an account: it creates volumes from the snapshot (reads the disk's
# data) or launches the image (reads its volumes). Who: `accountId`, the `group` "all" (public), an organization
# or OU (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-modifying-snapshot-permissions.html).
SHARES = {
    "aws:ec2/snapshotCreateVolumePermission:SnapshotCreateVolumePermission": "snapshotId",
    "aws:ec2/amiLaunchPermission:AmiLaunchPermission": "imageId",
}


def shared_volume(resource: Any, name: str, placement: Placement) -> list[Edge]:
    """A snapshot or image shared with its grantee: the grantee -read-> the snapshot's (or image's) data."""
    props, what = resource.props, SHARES[resource.resource_type]
    target = Party(f"{what.removesuffix('Id')} {props.get(what) or name}", OWN)
    grantees = [principal_value(str(v), placement) for v in strings(props, "accountId")]
    grantees += [Party("every AWS account (group all)", ANY) for g in strings(props, "group") if g == "all"]
    grantees += [
        principal_value(str(v), placement)
        for k in ("organizationArn", "organizationalUnitArn")
        for v in strings(props, k)
    ]
    return [Edge(g, READ, target, resource.urn, f"{name} shares {target.ref} with {g.ref}") for g in grantees]
