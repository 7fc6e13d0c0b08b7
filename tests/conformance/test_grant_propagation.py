"""A grant a resource uses at creation has propagated first, on every cloud (components/propagation.py).

Mocks create everything at once, so a resource that races its grant's propagation passes every preview and fails
(or comes up degraded) on a real first `up`. `CREATE_TIME_GRANTS` lists, per cloud and by the API behaviour it
encodes, the resources whose creation is checked against a grant of the same stack, and which grants those are.
For each such pair in every example stack and variant, the resource must wait for a propagation wait that depends
on the grant, is triggered by its id (a new grant waits again) and lasts at least what the cloud documents. Every
wait must be triggered by exactly the grants it follows. The guards check that each row matched something and that
the check fails on a bare grant, a short wait and a wait that a new grant would not re-run.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import pytest
from cloud_stacks import cloud_stacks, preview, stack_id, variant_cases
from propagation_waits import SLEEP, Captured, wait_seconds, waits_of

from accelstack.clouds import registry
from accelstack.clouds.azure import catalog as azure_catalog
from accelstack.clouds.gcp import catalog as gcp_catalog
from accelstack.clouds.oci import catalog as oci_catalog
from accelstack.engine.capture import Registration
from accelstack.engine.preview import PreviewResult

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
KEY_GRANT = "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"
BUCKET_GRANT = "gcp:storage/bucketIAMMember:BucketIAMMember"
VAULT_URI = re.compile(r"^https://(?P<vault>[^.]+)\.vault\.azure\.net/(?P<kind>keys|secrets)/(?P<name>[^/]+)")

CASES = [case for _, case in [*cloud_stacks(), *variant_cases()]]

# The grants a resource uses at creation, found in the stack's preview.
Uses = Callable[[PreviewResult, Registration], list[Registration]]


def _grants(result: PreviewResult, kind: str, **match: Callable[[Any], bool]) -> list[Registration]:
    return [r for r in result.resources if r.type == kind and all(test(r.inputs.get(k)) for k, test in match.items())]


def _vault_scope(uri: str | None) -> Callable[[Any], bool]:
    """A role assignment's scope is the Key Vault key or secret a data-plane URI names."""
    found = VAULT_URI.match(uri or "")
    if found is None:
        return lambda scope: False
    suffix = f"/vaults/{found['vault']}/{found['kind']}/{found['name']}"
    return lambda scope: isinstance(scope, str) and scope.endswith(suffix)


def _account_key(result: PreviewResult, account: Registration) -> list[Registration]:
    """A storage account with a customer-managed key: Azure Storage checks it may use the key when the account is
    created with it (customer-managed-keys-configure-new-account), through the account's identity."""
    encryption = account.inputs.get("encryption") or {}
    if encryption.get("keySource") != "Microsoft.Keyvault":
        return []
    vault_key = encryption["keyVaultProperties"]
    uri = f"{vault_key['keyVaultUri'].rstrip('/')}/keys/{vault_key['keyName']}"
    return _grants(result, ROLE_ASSIGNMENT, scope=_vault_scope(uri))


def _file_system(result: PreviewResult, lustre: Registration) -> list[Registration]:
    """Managed Lustre: the HPC Cache Resource Provider's roles on the Blob integration's account ("It can take up
    to five minutes for the role settings to propagate", amlfs-prerequisites) and its identity's role on its key."""
    principal = result.spec.account.hpc_cache_principal_id  # type: ignore[union-attr]
    key_url = lustre.inputs["encryptionSettings"]["keyEncryptionKey"]["keyUrl"]
    return _grants(result, ROLE_ASSIGNMENT, principalId=lambda p: p == principal) + _grants(
        result, ROLE_ASSIGNMENT, scope=_vault_scope(key_url)
    )


def _gateway(result: PreviewResult, gateway: Registration) -> list[Registration]:
    """Application Gateway fetches its listener certificate from Key Vault when created; without the role the
    HTTPS listener is disabled ("Common key vault errors in Application Gateway")."""
    return [
        grant
        for certificate in gateway.inputs.get("sslCertificates") or []
        for grant in _grants(result, ROLE_ASSIGNMENT, scope=_vault_scope(certificate.get("keyVaultSecretId")))
    ]


def _standby_pool(result: PreviewResult, pool: Registration) -> list[Registration]:
    """The Standby Pool provider creates VMs as soon as the pool exists, with its roles on the resource group
    (standby-pools-configure-permissions)."""
    principal = result.spec.account.standby_pool_principal_id  # type: ignore[union-attr]
    return _grants(result, ROLE_ASSIGNMENT, principalId=lambda p: p == principal)


def _azure_wait(grant: Registration) -> int:
    key_vault = "/providers/Microsoft.KeyVault/" in str(grant.inputs.get("scope"))
    return azure_catalog.KEY_VAULT_RBAC_PROPAGATION_SECONDS if key_vault else azure_catalog.RBAC_PROPAGATION_SECONDS


def _agent_key(key_of: Callable[[dict[str, Any]], str | None], agent: str) -> Uses:
    """A resource naming a Cloud KMS key: the API checks its service agent may use the key when it is created."""

    def uses(result: PreviewResult, resource: Registration) -> list[Registration]:
        key = key_of(resource.inputs)
        if not key:
            return []
        return _grants(result, KEY_GRANT, cryptoKeyId=lambda k: k == key, member=lambda m: f"@{agent}." in str(m))

    return uses


def _lustre_import(result: PreviewResult, staging: Registration) -> list[Registration]:
    """Managed Lustre's importData reads the bucket as the Lustre agent; without the read it "may fail silently
    leaving an empty lustre instance" (Cluster Toolkit's managed-lustre module)."""
    bucket = str(staging.inputs.get("gcs_uri", "")).removeprefix("gs://").split("/", 1)[0]
    return _grants(result, BUCKET_GRANT, bucket=lambda b: b == bucket, member=lambda m: "@gcp-sa-lustre." in str(m))


def _lustre_service(result: PreviewResult, file_system: Registration) -> list[Registration]:
    """OCI File Storage with Lustre places its servers in the subnet as the lustrefs service, under the policy that
    lets it use the compartment's network (docs.oracle.com/iaas/Content/lustre/manage-file-systems.htm)."""
    return _grants(
        result,
        "oci:Identity/policy:Policy",
        statements=lambda s: any(
            str(t).startswith("allow service lustrefs to use virtual-network-family") for t in s or []
        ),
    )


GCP_KEY_USERS: dict[str, Uses] = {
    # cloud.google.com/storage/docs/encryption/using-customer-managed-keys#prereqs
    "gcp:storage/bucket:Bucket": _agent_key(
        lambda i: (i.get("encryption") or {}).get("defaultKmsKeyName"), "gs-project-accounts"
    ),
    # cloud.google.com/compute/docs/disks/customer-managed-encryption
    "gcp:compute/disk:Disk": _agent_key(
        lambda i: (i.get("diskEncryptionKey") or {}).get("kmsKeySelfLink"), "compute-system"
    ),
    "gcp:lustre/instance:Instance": _agent_key(lambda i: i.get("kmsKey"), "gcp-sa-lustre"),  # managed-lustre/docs/cmek
    "gcp:filestore/instance:Instance": _agent_key(lambda i: i.get("kmsKeyName"), "cloud-filer"),  # filestore/docs/cmek
    "gcp:pubsub/topic:Topic": _agent_key(lambda i: i.get("kmsKeyName"), "gcp-sa-pubsub"),  # pubsub/docs/encryption
}

# cloud -> resource kind -> (the grants it uses at creation, the wait each needs). AWS has no row: its provider
# retries a create that fails while a new IAM role or policy propagates (terraform-provider-aws
# internal/service/iam/wait.go, propagationTimeout), and tests/components/test_deploy_order.py orders its pairs.
CREATE_TIME_GRANTS: dict[str, tuple[dict[str, Uses], Callable[[Registration], int]]] = {
    "aws": ({}, lambda grant: 0),
    "oci": (
        {"oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem": _lustre_service},
        lambda grant: oci_catalog.IAM_PROPAGATION_SECONDS,
    ),
    # Vultr has no identity grants: an API key is the account, and the instances carry no identity.
    "vultr": ({}, lambda grant: 0),
    "azure": (
        {
            "azure-native:storage:StorageAccount": _account_key,
            "azure-native:storagecache:AmlFilesystem": _file_system,
            "azure-native:network:ApplicationGateway": _gateway,
            "azure-native:standbypool:StandbyVirtualMachinePool": _standby_pool,
        },
        _azure_wait,
    ),
    "gcp": (
        {**GCP_KEY_USERS, "pulumi-python:dynamic:Resource": _lustre_import},
        lambda grant: gcp_catalog.IAM_PROPAGATION_SECONDS,
    ),
}


def uses_at_creation(result: PreviewResult) -> list[tuple[Registration, Registration]]:
    """(resource, grant) for every grant a resource of the stack uses when it is created."""
    table, _ = CREATE_TIME_GRANTS[result.spec.cloud]
    return [
        (resource, grant)
        for resource in result.resources
        if resource.custom and resource.type in table
        for grant in table[resource.type](result, resource)
    ]


def unpropagated(result: PreviewResult) -> list[str]:
    """Every way a resource could use a grant before it has propagated, as readable lines."""
    _, needed = CREATE_TIME_GRANTS[result.spec.cloud]
    problems = []
    for resource, grant in uses_at_creation(result):
        waits = [w for w in waits_of(result, resource) if grant.urn in w.dependencies]
        where = f"{resource.name} uses {grant.name} at creation"
        if not waits:
            problems.append(f"{where} but waits for no propagation of it")
            continue
        for wait in waits:
            if grant.id not in (wait.inputs.get("triggers") or {}).values():
                problems.append(f"{where}: {wait.name} is not triggered by its id (a new grant would not wait)")
            if wait_seconds(wait) < needed(grant):
                problems.append(
                    f"{where}: {wait.name} waits {wait_seconds(wait)} s, the cloud documents {needed(grant)}"
                )
    return problems


def loose_waits(result: Captured) -> list[str]:
    """Waits whose triggers are not exactly the grants they follow: a grant they do not follow would re-run them
    for nothing, one they follow but are not triggered by would not re-run them."""
    return [
        f"{wait.name}: triggered by {sorted(wait.property_dependencies.get('triggers', []))}, follows "
        f"{sorted(wait.dependencies)}"
        for wait in result.resources
        if wait.type == SLEEP and set(wait.property_dependencies.get("triggers", [])) != set(wait.dependencies)
    ]


ALL_CASES = [pytest.param(case, id=stack_id(case)) for case in CASES]


@pytest.mark.parametrize("case", ALL_CASES)
def test_every_grant_used_at_creation_has_propagated_first(case: Any) -> None:
    result = preview(case)
    assert unpropagated(result) == []
    assert loose_waits(result) == []


# --- guards ----------------------------------------------------------------------------------------------------


def test_every_deployable_cloud_tables_its_create_time_grants() -> None:
    assert sorted(CREATE_TIME_GRANTS) == sorted(registry.deployable())


def test_every_row_matches_a_grant_in_some_stack() -> None:
    """A renamed kind or a changed input shape would make a row vacuous."""
    matched: set[tuple[str, str]] = set()
    for case in CASES:
        result = preview(case)
        matched |= {(result.spec.cloud, resource.type) for resource, _ in uses_at_creation(result)}
    tabled = {(cloud, kind) for cloud, (table, _) in CREATE_TIME_GRANTS.items() for kind in table}
    assert sorted(tabled - matched) == []


def _without_waits(result: PreviewResult) -> PreviewResult:
    """The stack as it was before the waits: each resource depends on the grants its waits followed."""
    by_urn = {r.urn: r for r in result.resources}
    edited = []
    for r in result.resources:
        deps = [d for u in r.dependencies for d in (by_urn[u].dependencies if by_urn[u].type == SLEEP else [u])]
        edited.append(dataclasses.replace(r, dependencies=deps))
    return dataclasses.replace(result, resources=[r for r in edited if r.type != SLEEP])


def _with_wait(result: PreviewResult, name: str, **inputs: Any) -> PreviewResult:
    edited = [
        dataclasses.replace(r, inputs={**r.inputs, **inputs}) if r.type == SLEEP and r.name == name else r
        for r in result.resources
    ]
    return dataclasses.replace(result, resources=edited)


def test_the_check_fails_on_a_bare_grant_a_short_wait_and_a_wait_a_new_grant_would_not_rerun() -> None:
    azure = preview(next(case for case in CASES if stack_id(case) == "azure-serving"))
    gateway, grant = next((r, g) for r, g in uses_at_creation(azure) if r.type.endswith(":ApplicationGateway"))
    assert f"{gateway.name} uses {grant.name} at creation but waits for no propagation of it" in unpropagated(
        _without_waits(azure)
    )
    (wait,) = waits_of(azure, gateway)
    short = unpropagated(_with_wait(azure, wait.name, createDuration="300s"))
    assert short == [f"{gateway.name} uses {grant.name} at creation: {wait.name} waits 300 s, the cloud documents 600"]
    untriggered = unpropagated(_with_wait(azure, wait.name, triggers={}))
    assert untriggered == [
        f"{gateway.name} uses {grant.name} at creation: {wait.name} is not triggered by its id (a new grant would "
        "not wait)"
    ]
    loose = dataclasses.replace(wait, property_dependencies={"triggers": []})
    assert loose_waits(dataclasses.replace(azure, resources=[loose])) != []
