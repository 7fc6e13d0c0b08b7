"""What a stack exports, per workload: one contract, the same keys on every cloud.

A cloud's components export exactly these keys (`pulumi stack output`), so scripts, dashboards and the
serving side's artifact reader work against any cloud. A key whose `when` names a condition is
exported exactly when the condition holds for the stack (a stack without a parallel file system has
no mount to report). The conformance suite checks every cloud's example stacks against this module.

Names are neutral (`encryptionKey`, not an ARN): each cloud exports its own identifier under the same key
(a KMS key ARN, a Key Vault key id, a Cloud KMS key name). The AWS stacks exported AWS-worded names before
0.2; `LEGACY_NAMES` maps them to the new ones, and a cloud that shipped them (AWS) exports both for the
deprecation period so its users' scripts keep working (`CloudStack.legacy_output_names`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Conditions a key can depend on. Each names a fact of the stack's spec or of what it deploys:
ALWAYS = "always"
CHECKPOINTS = "checkpoints"  # the spec names a checkpoint store
PARALLEL_FILE_SYSTEM = "parallel-file-system"  # the spec asks for a parallel file system
RDMA_PLACEMENT = "rdma-placement"  # the stack places its nodes together for the fabric (multi-node)
NODE_GROUP = "node-group"  # the stack runs its own node group (every scheduler but a managed one)
SLURM = "scheduler:slurm"  # training.scheduler.kind is slurm
SLURM_ACCOUNTING = "scheduler:slurm-accounting"  # Slurm with training.scheduler.accounting: database
MANAGED_SCHEDULER = "scheduler:managed"  # training.scheduler.kind is managed (the cloud's batch service)
SCHEDULER = "scheduler"  # a scheduler at all (slurm or managed; not "none")
ADMISSION_QUEUE = "admission:queue"  # serving.admission.kind is queue (the replicas drain a managed queue)
AUTOSCALED = "scaling:backlog"  # serving.replicas.scaling is backlog (a scaling policy holds a target)
# The weights are in another cloud's store that admits readers by address (accelstack.spec.handoff
# ADDRESS_ADMITTED_STORES: an Azure checkpoint account, read from AWS or Google Cloud).
EGRESS_ADMITTED = "weights:admitted-by-address"
CONDITIONS = frozenset(
    {
        ALWAYS,
        CHECKPOINTS,
        PARALLEL_FILE_SYSTEM,
        RDMA_PLACEMENT,
        NODE_GROUP,
        SLURM,
        SLURM_ACCOUNTING,
        MANAGED_SCHEDULER,
        SCHEDULER,
        ADMISSION_QUEUE,
        AUTOSCALED,
        EGRESS_ADMITTED,
    }
)


@dataclass(frozen=True)
class OutputKey:
    meaning: str
    when: str = ALWAYS


TRAINING_OUTPUTS: Mapping[str, OutputKey] = {
    "configDigest": OutputKey("digest of the accelstack config the stack was deployed from"),
    "account": OutputKey("the account (subscription, project, tenancy) the stack deploys into"),
    "region": OutputKey("the region the stack deploys into"),
    "networkId": OutputKey("the stack's private network"),
    "subnetId": OutputKey("the subnet the nodes, the scheduler and the file system share"),
    "zone": OutputKey("the zone the nodes, the file system and the scheduler's state live in"),
    "datasetBucket": OutputKey("the object-store bucket training data is read from"),
    "encryptionKey": OutputKey("the stack's customer-managed encryption key"),
    "fabricInterfacesPerNode": OutputKey("RDMA fabric interfaces each node configures (0: no fabric)"),
    "checkpointIntervalSeconds": OutputKey("the planner's checkpoint interval, seconds"),
    "checkpointBucket": OutputKey("the object-store bucket checkpoints are kept in", CHECKPOINTS),
    "lustreAddress": OutputKey("the parallel file system's address for the client mount", PARALLEL_FILE_SYSTEM),
    "lustreMountName": OutputKey("the parallel file system's mount (file system) name", PARALLEL_FILE_SYSTEM),
    "placementGroup": OutputKey("the placement that keeps the nodes on one fabric", RDMA_PLACEMENT),
    "nodeGroup": OutputKey("the group of GPU nodes the stack scales", NODE_GROUP),
    "scheduler": OutputKey("which scheduler runs jobs: slurm, or the cloud's managed batch service", SCHEDULER),
    "slurmHeadAddress": OutputKey("the Slurm controller's private address", SLURM),
    "slurmHeadInstance": OutputKey("the Slurm controller's instance", SLURM),
    "mungeKeySecret": OutputKey("the secret holding the cluster's munge key", SLURM),
    "slurmAccountingHost": OutputKey("the private address of slurmdbd's managed MySQL server", SLURM_ACCOUNTING),
    "managedJobQueue": OutputKey(
        "the managed scheduler's job queue (a managed Slurm's default partition)", MANAGED_SCHEDULER
    ),
    "managedJobDefinition": OutputKey(
        "the managed scheduler's multi-node job definition (a managed Slurm's node set: what each job's nodes are)",
        MANAGED_SCHEDULER,
    ),
    "managedCompute": OutputKey("the managed scheduler's compute environment (or cluster)", MANAGED_SCHEDULER),
}

SERVING_OUTPUTS: Mapping[str, OutputKey] = {
    "configDigest": OutputKey("digest of the accelstack config the stack was deployed from"),
    "endpoint": OutputKey("the HTTPS address clients send requests to"),
    "requestQueue": OutputKey("the admission queue replicas take requests from", ADMISSION_QUEUE),
    "responseQueue": OutputKey("the queue replicas put responses on", ADMISSION_QUEUE),
    "deadLetterQueue": OutputKey("where a request goes after its last failed attempt", ADMISSION_QUEUE),
    "replicaGroup": OutputKey("the group of serving replicas"),
    "replicaSubnets": OutputKey(
        "the subnets the replicas run in, and so read the models from (a training stack whose checkpoint store "
        "admits networks by rule lists them)"
    ),
    "egressAddresses": OutputKey(
        "the public addresses the replicas reach the internet from (their NAT's), which the training stack's "
        "checkpoint store admits (training.artifactReaderAddresses)",
        EGRESS_ADMITTED,
    ),
    "coldStartSeconds": OutputKey("the planner's cold start of one replica, seconds"),
    "warmPoolSize": OutputKey("replicas kept stopped and ready to start"),
    "backlogPerInstanceTarget": OutputKey(
        "the requests each replica owns (waiting and in flight) that the scaling policy holds: the queue's backlog "
        "per replica, or without a queue the load balancer's request rate per replica times the service time",
        AUTOSCALED,
    ),
}

# Names exported before the contract was neutral (old -> new). Removed in 0.3.
LEGACY_NAMES: Mapping[str, str] = {
    "vpcId": "networkId",
    "availabilityZone": "zone",
    "kmsKeyArn": "encryptionKey",
    "efaInterfacesPerNode": "fabricInterfacesPerNode",
    "lustreDnsName": "lustreAddress",
    "mungeKeySecretArn": "mungeKeySecret",
    "batchJobQueue": "managedJobQueue",
    "batchJobDefinition": "managedJobDefinition",
    "batchComputeEnvironment": "managedCompute",
    "requestQueueUrl": "requestQueue",
    "responseQueueUrl": "responseQueue",
    "deadLetterQueueUrl": "deadLetterQueue",
    "replicaGroupName": "replicaGroup",
}

CONTRACTS: Mapping[str, Mapping[str, OutputKey]] = {"training": TRAINING_OUTPUTS, "serving": SERVING_OUTPUTS}


def expected_keys(workload: str, holding: Iterable[str]) -> frozenset[str]:
    """The keys a `workload` stack exports when the conditions in `holding` hold (ALWAYS is implied)."""
    try:
        contract = CONTRACTS[workload]
    except KeyError:
        raise ValueError(f"unknown workload {workload!r}; allowed: {', '.join(CONTRACTS)}") from None
    facts = {ALWAYS, *holding}
    unknown = facts - CONDITIONS
    if unknown:
        raise ValueError(f"unknown output conditions {sorted(unknown)}; allowed: {', '.join(sorted(CONDITIONS))}")
    return frozenset(key for key, output in contract.items() if output.when in facts)


def with_legacy_names(exported: Mapping[str, object], legacy: Mapping[str, str]) -> dict[str, object]:
    """`exported` plus, for each old name in `legacy` whose new name is exported, the same value under the
    old name (after the new keys, so `pulumi stack output` lists the contract first)."""
    return {**exported, **{old: exported[new] for old, new in legacy.items() if new in exported}}
