"""What the packs know about one cloud vendor, as one typed value its own module defines.

The packs' rules are vendor-neutral: each guardrail or separation concern asks every listed vendor
(policies/vendors.py) for its reader of that concern and runs the ones it has. A reader reads the
vendor's own resources only (it skips every other kind), so the vendors' findings never overlap.
None means the vendor has no resource of that concern. Adding a vendor is one module defining a
`Vendor`, registered under the `accelstack.policy_vendors` entry point group (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .access import EdgeReader
from .common import Context, ProviderFacts
from .reachability import LinkReader
from .waf import FrontDoor

# One resource's findings (messages).
ResourceFindings = Callable[[Any], Iterable[str]]
# One resource's findings, given the stack's workload ("training", "serving" or None).
WorkloadFindings = Callable[[Any, str | None], Iterable[str]]
# Every resource of the stack, and whether the front door's access logs are required -> (urn, message).
LogFindings = Callable[[Sequence[Any], bool], Iterable[tuple[str, str]]]
# Every resource of the stack -> (urn, message).
StackFindings = Callable[[Sequence[Any]], Iterable[tuple[str, str]]]
# Every resource of the stack and a name pattern from the policy config -> (urn, message).
PatternFindings = Callable[[Sequence[Any], str], Iterable[tuple[str, str]]]
# Every internet-facing entry of the stack and the WAF policies that see its traffic (policies/waf.py).
FrontDoors = Callable[[Sequence[Any]], Iterable[FrontDoor]]
# Every resource of the stack, the shortest retention the policy config allows (days), the pattern of stores that
# must keep what is deleted (versionedBucketPattern) and of log stores (logBucketPattern) -> (urn, message).
RetentionFindings = Callable[[Sequence[Any], int, str, str], Iterable[tuple[str, str]]]
# A storage firewall's findings: the resource, the stack's own accounts, the context.
AdmissionFindings = Callable[[Any, frozenset[str], Context], Iterable[str]]
# A stack's findings that need its policy context (which store holds the artifacts serving reads).
ContextFindings = Callable[[Sequence[Any], Context], Iterable[tuple[str, str]]]


@dataclass(frozen=True)
class GuardrailReaders:
    """The vendor's reader per guardrails policy (named in each field's comment)."""

    encryption_at_rest: ResourceFindings | None = None  # encryption-at-rest
    data_encryption: PatternFindings | None = None  # bucket-encryption (kmsBucketPattern)
    public_storage: ResourceFindings | None = None  # no-public-buckets
    public_storage_final: StackFindings | None = None  # no-public-buckets-final
    public_access_block: StackFindings | None = None  # bucket-public-access-block
    min_tls: ResourceFindings | None = None  # min-tls-1-2
    queue_identity_auth: ResourceFindings | None = None  # queue-identity-auth
    managed_ml_private: ResourceFindings | None = None  # managed-ml-private
    internet_ingress: WorkloadFindings | None = None  # no-internet-ingress
    ingress_owner: StackFindings | None = None  # internet-ingress-only-to-load-balancer
    public_ip: ResourceFindings | None = None  # no-public-ip-on-nodes
    private_subnets: StackFindings | None = None  # nodes-in-private-subnets
    instance_metadata: ResourceFindings | None = None  # imdsv2-required
    os_login: ResourceFindings | None = None  # os-login-not-disabled
    privileged_jobs: ResourceFindings | None = None  # batch-not-privileged
    node_data_secrets: ResourceFindings | None = None  # no-secrets-in-user-data (and -final)
    # no-secrets-in-user-data-final: node data a node takes by reference (a startup script by id), judged over the stack.
    node_data_references: StackFindings | None = None
    least_privilege: ResourceFindings | None = None  # iam-least-privilege
    least_privilege_final: StackFindings | None = None  # iam-least-privilege-final
    versioning: PatternFindings | None = None  # bucket-versioning (versionedBucketPattern)
    scheduled_data_loss: PatternFindings | None = None  # no-scheduled-data-loss (logBucketPattern)
    queue_dlq: StackFindings | None = None  # queue-dlq
    https_listeners: ResourceFindings | None = None  # https-listeners
    http_redirects: StackFindings | None = None  # http-only-redirects
    lb_deletion_protection: WorkloadFindings | None = None  # lb-deletion-protection
    spot_serving: ResourceFindings | None = None  # no-spot-serving (run for serving stacks)
    spot_checkpoints: PatternFindings | None = None  # spot-training-needs-checkpoints (run for training)
    queue_scaling: StackFindings | None = None  # serving-scales-on-queue-depth (run for serving)
    waf_front_doors: FrontDoors | None = None  # waf-rate-limit (judged once, neutrally: policies/waf.py)
    service_logs: LogFindings | None = None  # service-logs (frontDoorAccessLogs)
    retention: RetentionFindings | None = None  # soft-delete-retention (minRetentionDays)
    # Kinds whose node data the engine stores as a secret output (unreadable after the deployment): the
    # final-state repeat skips them when unknown; the resource-level check judged their inputs in clear.
    secret_output_kinds: tuple[str, ...] = ()
    # How messages name a stateful kind (protect-stateful; the concept otherwise).
    stateful_names: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SeparationReaders:
    """The vendor's reader per separation concern."""

    # allowed-regions: where a resource without a `region` input says it is (None: nowhere it says).
    region: Callable[[Any], Any] | None = None
    # workload-resource-kinds: whether a load balancer takes internet traffic (unread: it is assumed to).
    internet_facing: Callable[[Any], bool] | None = None
    # workload-resource-kinds: a resource of a training-only concept used for something else.
    not_training_fabric: Callable[[Any], bool] | None = None
    # cross-account-read-only(-final) over the access graph (policies/access.py): the kinds whose
    # resources carry edges, the edge reader, and accounts of the cloud itself a grant may name (AWS's ELB
    # log delivery accounts).
    access_types: tuple[str, ...] = ()
    access: EdgeReader | None = None
    trusted_accounts: frozenset[str] = frozenset()
    # cross-account-network-admission: the kinds with a network firewall, and their reader.
    admission_types: tuple[str, ...] = ()
    network_admission: AdmissionFindings | None = None
    # store-keys-only-where-needed: keys and local users that go around the grants (and the read path's conditions).
    key_access: ContextFindings | None = None
    # provider-account: a vendor whose provider pins a container of both sides' accounts (OCI's tenancy holds both
    # compartments) judges that pin itself; each resource's account is then pinned_account's to judge.
    provider_pin: Callable[[ProviderFacts], Iterable[str]] | None = None
    # allowed-regions: the provider takes no region, each resource names its own (Vultr): the resources are checked.
    resources_carry_region: bool = False
    # pinned-project: a resource's own account input against the accounts the provider pins.
    pinned_account: Callable[[Any, frozenset[str]], Iterable[str]] | None = None
    # workload-tags: a resource's own tags by accelstack's tag keys, and its provider's default tags' findings.
    resource_tags: Callable[[Any], Mapping[str, str]] | None = None
    provider_tags: Callable[[ProviderFacts], Iterable[str]] | None = None


@dataclass(frozen=True)
class Vendor:
    """One cloud vendor: the Pulumi package of its concept table, the table, how each of its provider
    packages pins an account, and its readers."""

    package: str  # the Pulumi package its concept table's type tokens belong to ("azure-native")
    concepts: Mapping[str, tuple[str, ...]]  # concept -> type tokens (policies/concepts.py)
    pin_inputs: Mapping[str, str]  # provider package -> the input that pins its account
    guardrails: GuardrailReaders = GuardrailReaders()
    separation: SeparationReaders = SeparationReaders()
    # The reachability view's reader of its kinds (policies/reachability.py), read by both packs.
    reachability: LinkReader | None = None

    @property
    def packages(self) -> frozenset[str]:
        """Every Pulumi package (type-token prefix) of this vendor."""
        return frozenset({self.package, *self.pin_inputs})


def tokens_of(table: Mapping[str, tuple[str, ...]], *concepts: str) -> tuple[str, ...]:
    """A vendor's tokens of these concepts, read from its own table (vendor modules cannot ask
    policies/concepts.py while the vendor list is being built)."""
    return tuple(token for concept in concepts for token in table.get(concept, ()))
