"""Where GCP data is written, forwarded or encrypted, as edges of the access graph (policies/gcp/access.py): log
sinks, Storage Transfer jobs, Pub/Sub subscriptions (their topic, dead letters, BigQuery and Cloud Storage
exports, push endpoints) and topic ingestion, customer-managed keys of data stores, bucket and object ACLs, and
shared VPC attachments. The resource that moves the data is the source; where the data lands is the target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..access import ADMIN, ANY, OBJECTS, READ, RESOURCE, WRITE, Edge, Party, Placement
from ..common import as_list
from ..readers import get
from .iam import StackFacts, member_party, project_account
from .places import bucket_party, key_party, label_of, named_project, party_in, text_at, values_at

SINKS = {
    "gcp:logging/projectSink:ProjectSink": "",
    "gcp:logging/folderSink:FolderSink": "folder",
    "gcp:logging/organizationSink:OrganizationSink": "orgId",
    "gcp:logging/billingAccountSink:BillingAccountSink": "billingAccount",
}
TRANSFER_JOB = "gcp:storage/transferJob:TransferJob"
SUBSCRIPTION = "gcp:pubsub/subscription:Subscription"
TOPIC = "gcp:pubsub/topic:Topic"
SHARED_VPC_SERVICE = "gcp:compute/sharedVPCServiceProject:SharedVPCServiceProject"
# Customer-managed keys a data store encrypts with (each resource's provider docs): the store -write-> the key, so
# a store encrypted with the other side's key is a crossing (that side can decrypt, disable or destroy the key).
KEY_USERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "gcp:storage/bucket:Bucket": (("encryption", "defaultKmsKeyName"),),
    "gcp:lustre/instance:Instance": (("kmsKey",),),
    "gcp:filestore/instance:Instance": (("kmsKeyName",),),
    TOPIC: (("kmsKeyName",),),
    "gcp:compute/disk:Disk": (("diskEncryptionKey", "kmsKeySelfLink"),),
    "gcp:compute/instance:Instance": (("bootDisk", "kmsKeySelfLink"), ("attachedDisks[]", "kmsKeySelfLink")),
    "gcp:compute/instanceTemplate:InstanceTemplate": (("disks[]", "diskEncryptionKey", "kmsKeySelfLink"),),
    "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate": (("disks[]", "diskEncryptionKey", "kmsKeySelfLink"),),
    "gcp:secretmanager/secret:Secret": (
        ("replication", "auto", "customerManagedEncryption", "kmsKeyName"),
        ("replication", "userManaged", "replicas[]", "customerManagedEncryption", "kmsKeyName"),
    ),
    "gcp:bigquery/dataset:Dataset": (("defaultEncryptionConfiguration", "kmsKeyName"),),
}
# Where a resource writes its own logs into a bucket (the provider docs of each): the resource -write-> the bucket.
LOG_WRITERS: dict[str, tuple[str, ...]] = {
    "gcp:storage/bucket:Bucket": ("logging", "logBucket"),  # usage and storage logs, gs://{logBucket}/{prefix}
}
# Bucket and object ACLs (https://cloud.google.com/storage/docs/access-control/lists): which objects they cover.
ACLS = {
    "gcp:storage/bucketACL:BucketACL": "bucket",
    "gcp:storage/bucketAccessControl:BucketAccessControl": "bucket",
    "gcp:storage/defaultObjectACL:DefaultObjectACL": "default",
    "gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl": "default",
    "gcp:storage/objectACL:ObjectACL": "object",
    "gcp:storage/objectAccessControl:ObjectAccessControl": "object",
}
ACL_ROLES = {"READER": READ, "WRITER": WRITE, "OWNER": ADMIN}
PUBLIC_ACLS = {"publicRead": READ, "authenticatedRead": READ, "publicReadWrite": WRITE}
PRIVATE_ACLS = frozenset({"private", "projectPrivate", "bucketOwnerRead", "bucketOwnerFullControl"})
FLOW_TYPES = (*SINKS, TRANSFER_JOB, SUBSCRIPTION, TOPIC, SHARED_VPC_SERVICE, *KEY_USERS, *ACLS, *LOG_WRITERS)


def _mover(resource: Any, placement: Placement, facts: StackFacts | None) -> Party:
    return party_in(label_of(resource), text_at(resource.props, "project"), facts, RESOURCE, placement)


def destination_party(destination: str, placement: Placement, facts: StackFacts | None) -> Party:
    """A log sink's destination (https://cloud.google.com/logging/docs/export/configure_export_v2#dest-path)."""
    service, _, path = destination.partition("/")
    if service == "storage.googleapis.com":
        return bucket_party(path, placement, facts)
    project = named_project(path)
    if service in ("bigquery.googleapis.com", "pubsub.googleapis.com", "logging.googleapis.com") and project:
        return party_in(destination, project, facts, RESOURCE, placement)
    return Party(destination or "?", None, RESOURCE, "a log destination the pack cannot place in a project")


def sink_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    props, label = resource.props, label_of(resource)
    destination = text_at(props, "destination") or ""
    parent_key = SINKS[resource.resource_type]
    if parent_key:
        # A folder's, organisation's or billing account's logs are many projects' logs, both sides' among them.
        parent = f"{parent_key} {props.get(parent_key)}"
        why = f"the logs of {parent}, which holds projects the pack cannot list"
        source = Party(f"{label} (logs of {parent})", None, RESOURCE, why)
    else:
        source = _mover(resource, placement, facts)
    target = destination_party(destination, placement, facts)
    yield Edge(
        source,
        WRITE,
        target,
        resource.urn,
        f"{label} exports logs to {destination or '?'}",
        "" if target.kind == OBJECTS else None,
    )


def transfer_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    """A Storage Transfer job reads its source and writes its sink, as the project's transfer service agent (or
    its serviceAccount: access.py's wearers)."""
    job, label = _mover(resource, placement, facts), label_of(resource)
    for spec_key in ("transferSpec", "replicationSpec"):
        spec = get(resource.props, spec_key)
        if spec is None:
            continue
        includes = [str(p) for p in as_list(get(spec, "objectConditions", "includePrefixes"))] or [""]
        for side, access in (("gcsDataSource", READ), ("gcsDataSink", WRITE)):
            node = get(spec, side)
            if node is None:
                continue
            path = str(get(node, "path") or "")
            bucket = bucket_party(text_at(node, "bucketName"), placement, facts)
            for include in includes if access == READ else [""]:
                what = f"{label} {spec_key}.{side} gs://{get(node, 'bucketName')}/{path}{include}"
                yield Edge(job, access, bucket, resource.urn, what, path + include)
        for other in ("awsS3DataSource", "awsS3CompatibleDataSource", "azureBlobStorageDataSource", "httpDataSource",
                      "hdfsDataSource", "posixDataSource", "posixDataSink"):  # fmt: skip
            if get(spec, other) is not None:
                access = WRITE if other.endswith("Sink") else READ
                target = Party(f"{spec_key}.{other}", None, RESOURCE, "a store outside Google Cloud's projects")
                yield Edge(job, access, target, resource.urn, f"{label} {spec_key}.{other}")


def _topic_party(value: Any, resource: Any, placement: Placement, facts: StackFacts | None) -> Party:
    text = value if isinstance(value, str) else "?"
    return party_in(f"topic {text}", named_project(text, resource), facts, RESOURCE, placement)


def subscription_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    """A subscription reads its topic and delivers to its dead-letter topic, BigQuery table, bucket or push
    endpoint (https://cloud.google.com/pubsub/docs/subscription-overview)."""
    props, label = resource.props, label_of(resource)
    sub = _mover(resource, placement, facts)
    if (topic := props.get("topic")) is not None:
        yield Edge(sub, READ, _topic_party(topic, resource, placement, facts), resource.urn, f"{label} reads {topic}")
    if (dead := get(props, "deadLetterPolicy", "deadLetterTopic")) is not None:
        yield Edge(
            sub, WRITE, _topic_party(dead, resource, placement, facts), resource.urn, f"{label} dead-letters to {dead}"
        )
    if (table := text_at(props, "bigqueryConfig", "table")) is not None:
        # {project}.{dataset}.{table} or {project}:{dataset}.{table}
        project = table.replace(":", ".").split(".")[0] if table.count(".") + table.count(":") >= 2 else None
        target = party_in(f"BigQuery table {table}", project, facts, RESOURCE, placement)
        yield Edge(sub, WRITE, target, resource.urn, f"{label} bigqueryConfig.table {table}")
    if (storage := get(props, "cloudStorageConfig")) is not None:
        bucket = bucket_party(text_at(storage, "bucket"), placement, facts)
        what = f"{label} cloudStorageConfig.bucket {get(storage, 'bucket')}"
        yield Edge(sub, WRITE, bucket, resource.urn, what, str(get(storage, "filenamePrefix") or ""))
    if (endpoint := text_at(props, "pushConfig", "pushEndpoint")) is not None:
        target = Party(
            f"push endpoint {endpoint}", None, RESOURCE, "an HTTPS endpoint is in no project the pack can name"
        )
        yield Edge(sub, WRITE, target, resource.urn, f"{label} pushConfig.pushEndpoint {endpoint}")


def topic_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    """A topic's ingestion source (https://cloud.google.com/pubsub/docs/import-cloud-storage)."""
    settings = get(resource.props, "ingestionDataSourceSettings")
    if settings is None:
        return
    topic, label = _mover(resource, placement, facts), label_of(resource)
    for source, node in settings.items() if hasattr(settings, "items") else ():
        if node is None or source == "platformLogsSettings":
            continue
        if source == "cloudStorage":
            target = bucket_party(text_at(node, "bucket"), placement, facts)
            yield Edge(topic, READ, target, resource.urn, f"{label} ingests gs://{get(node, 'bucket')}", "")
        else:
            target = Party(f"ingestion source {source}", None, RESOURCE, "a source outside Google Cloud's projects")
            yield Edge(topic, READ, target, resource.urn, f"{label} ingestionDataSourceSettings.{source}")


def key_user_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    store, label = _mover(resource, placement, facts), label_of(resource)
    for path in KEY_USERS.get(resource.resource_type, ()):
        for value in values_at(resource.props, path):
            key = key_party(value, placement, facts, resource, path[0])
            yield Edge(store, WRITE, key, resource.urn, f"{label} encrypts with {value} ({'.'.join(path)})")


def _entity_party(entity: str, placement: Placement, facts: StackFacts | None) -> Party:
    """An ACL entity: allUsers, allAuthenticatedUsers, user-EMAIL, group-EMAIL, domain-DOMAIN,
    project-(owners|editors|viewers)-NUMBER; ids (user-ID, group-ID) cannot be placed."""
    if entity in ("allUsers", "allAuthenticatedUsers"):
        return Party(entity, ANY)
    form, _, value = entity.partition("-")
    if form == "project":
        number = value.partition("-")[2]
        account, why = project_account(number, facts, f"ACL entity {entity}")
        return Party(entity, account, RESOURCE, why, needs_stack=account is None and placement.stack is None)
    if form in ("user", "group") and "@" in value:
        member = f"serviceAccount:{value}" if value.endswith("gserviceaccount.com") else f"{form}:{value}"
        return member_party(member, facts, needs_stack=placement.stack is None)
    if form == "domain":
        return member_party(f"domain:{value}", facts, needs_stack=placement.stack is None)
    return Party(entity, None, RESOURCE, "an ACL entity named by an id the pack cannot place")


def acl_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    props, label = resource.props, label_of(resource)
    bucket = bucket_party(text_at(props, "bucket"), placement, facts, resource)
    scope = str(props.get("object") or "") if ACLS[resource.resource_type] == "object" else ""
    pairs = [str(r).partition(":")[::2] for r in as_list(props.get("roleEntities"))]
    if props.get("entity") is not None:
        pairs.append((str(props.get("role") or ""), str(props.get("entity"))))
    for role, entity in pairs:
        level = ACL_ROLES.get(role.upper(), ADMIN)
        source = _entity_party(entity, placement, facts)
        yield Edge(source, level, bucket, resource.urn, f"{label} ({role}:{entity})", scope)
    for key in ("predefinedAcl", "defaultAcl"):
        acl = props.get(key)
        if not acl or acl in PRIVATE_ACLS:
            continue
        public = PUBLIC_ACLS.get(str(acl))
        source = (
            Party("allUsers", ANY) if public else Party(f"{key} {acl}", None, RESOURCE, "an ACL the pack does not know")
        )
        yield Edge(source, public or ADMIN, bucket, resource.urn, f"{label} ({key} {acl})", scope)


def shared_vpc_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    """A service project's workloads use the host project's networks (https://cloud.google.com/vpc/docs/shared-vpc):
    the service project -write-> the host's network."""
    props, label = resource.props, label_of(resource)
    host, service = text_at(props, "hostProject"), text_at(props, "serviceProject")
    source = party_in(f"project {service}", service, facts, RESOURCE, placement)
    target = party_in(f"shared VPC of host project {host}", host, facts, RESOURCE, placement)
    yield Edge(source, WRITE, target, resource.urn, f"{label} attaches {service} to {host}'s shared VPC")


def flow_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    kind = resource.resource_type
    if kind in SINKS:
        yield from sink_edges(resource, placement, facts)
    elif kind == TRANSFER_JOB:
        yield from transfer_edges(resource, placement, facts)
    elif kind == SUBSCRIPTION:
        yield from subscription_edges(resource, placement, facts)
    elif kind in ACLS:
        yield from acl_edges(resource, placement, facts)
    elif kind == SHARED_VPC_SERVICE:
        yield from shared_vpc_edges(resource, placement, facts)
    if kind == TOPIC:
        yield from topic_edges(resource, placement, facts)
    if kind in KEY_USERS:
        yield from key_user_edges(resource, placement, facts)
    if kind in LOG_WRITERS:
        yield from log_writer_edges(resource, placement, facts)


def log_writer_edges(resource: Any, placement: Placement, facts: StackFacts | None) -> Iterator[Edge]:
    """Logs a resource writes into a bucket: they land on the bucket's side."""
    path = LOG_WRITERS[resource.resource_type]
    name = text_at(resource.props, *path)
    if name is None:
        return
    target = bucket_party(name, placement, facts, resource, path[0])
    label = label_of(resource)
    yield Edge(_mover(resource, placement, facts), WRITE, target, resource.urn, f"{label} {'.'.join(path)} {name}", "")
