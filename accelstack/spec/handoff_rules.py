"""The cross-cloud handoff's rules (accelstack.spec.handoff): which account references are well formed, and
whether a serving stack's weights on another cloud name a training account of that cloud to read them from."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from accelstack.clouds import registry
from accelstack.spec.accounts import (
    OCI_OCID,
    SESSION_LIFETIME_MINUTES,
    TOKEN_LIFETIME_EXTENDED_MINUTES,
    TOKEN_LIFETIME_MINUTES,
    account_model,
)
from accelstack.spec.copies import COPY_DESTINATIONS, COPY_SOURCES, copies_requested
from accelstack.spec.copy_rules import copy_problems
from accelstack.spec.handoff import (
    HANDOFF_CLOUDS,
    PER_REPLICA_PAIRS,
    READERS,
    REFUSED_BECAUSE,
    S3_HOST,
    S3_HTTPS,
    STORE_CLOUDS,
    artifact_location,
    reference_cloud,
    split_account_reference,
    store_cloud,
)
from accelstack.spec.models import ServingStack
from accelstack.spec.problems import Problem
from accelstack.spec.rule_registry import rule


def reference_problem(reference: str, own_cloud: str, copying: bool = False) -> str | None:
    """None if `reference` names an account: an id of the stack's cloud, or `<cloud>:<id>` of a cloud the
    handoff reaches (accelstack.spec.handoff), or, in a stack that copies its weights (`copying`:
    serving.model.copyFrom), of a cloud a copy reads from (accelstack.spec.copies), each id in its own cloud's
    format."""
    cloud, account_id = split_account_reference(reference)
    if cloud is None or cloud == own_cloud:
        return account_model(own_cloud).id_problem(account_id)
    if (cloud, own_cloud) in READERS:
        pass  # a pair beyond the three federating clouds (oci: in a vultr stack)
    elif copying and cloud in COPY_SOURCES and own_cloud in COPY_DESTINATIONS:
        pass  # the copy reads there with the deployer's credentials (accelstack.spec.copies)
    elif cloud not in HANDOFF_CLOUDS or own_cloud not in HANDOFF_CLOUDS:
        reach = ", ".join(f"{name}:" for name in HANDOFF_CLOUDS)
        others = sorted(
            f"{t}: in a {s} stack" for t, s in READERS if t not in HANDOFF_CLOUDS or s not in HANDOFF_CLOUDS
        )
        because = REFUSED_BECAUSE.get((cloud, own_cloud))
        return (
            f"{reference!r}: accounts of another cloud are named between {reach} stacks only"
            + (f" (and {', '.join(others)})" if others else "")
            + (f"; not {cloud}: in a {own_cloud} stack: {because}" if because else "")
            + (
                f"; or copy the weights into this stack's own store (serving.model.copyFrom), which reads {cloud} "
                "with the deployer's credentials"
                if cloud in COPY_SOURCES and own_cloud in COPY_DESTINATIONS and not copying
                else ""
            )
        )
    problem = account_model(cloud).id_problem(account_id)
    return f"{cloud}: {problem}" if problem else None


@rule(workload="serving")
def weights_on_another_cloud(spec: ServingStack) -> Iterator[Problem]:
    """Weights on another cloud are read from a training account of that cloud, named in artifactAccount and in
    separation.trainingAccounts as `<cloud>:<id>`; adapters come from the same cloud; the reader the serving stack
    declares there needs the store's region (accelstack.spec.handoff)."""
    serving = spec.serving
    if not registry.get(spec.cloud).catalog.object_uri_schemes:
        return  # a cloud that has not said its store's schemes cannot tell its own URIs from another cloud's
    if copies_requested(spec):
        yield from copy_problems(spec)  # the weights are copied into this stack's own store (accelstack.spec.copies)
        return
    source = store_cloud(serving.model.weights_uri, spec.cloud)
    named = reference_cloud(serving.artifact_account, spec.cloud)[0] if serving.artifact_account else None
    if source == spec.cloud and named == "aws" != spec.cloud and (named, spec.cloud) in READERS:
        yield Problem(
            "serving.model.weightsUri",
            f"{serving.model.weights_uri!r} is {spec.cloud}'s own object storage here (its store speaks S3); "
            f"weights in AWS ({serving.artifact_account}) are named by their S3 URL; allowed: {S3_HTTPS}",
        )
        return
    if source is None or source == spec.cloud:
        for index, adapter in enumerate(serving.model.adapters):
            if store_cloud(adapter.uri, spec.cloud) not in (None, spec.cloud):
                yield Problem(
                    f"serving.model.adapters.{index}.uri",
                    f"{adapter.uri!r} is on {store_cloud(adapter.uri, spec.cloud)} while the weights are in this cloud; "
                    "adapters are read from the weights' store",
                )
        if serving.artifact_region is not None:
            yield Problem(
                "serving.artifactRegion",
                "set only for weights on another cloud (s3:// or Blob Storage from a stack elsewhere); remove it",
            )
        yield from _oci_only_keys(spec, None)
        yield from _lifetime_keys(spec, None)
        yield from _deployer_key(spec, None)
        return
    if (source, spec.cloud) not in READERS:
        because = REFUSED_BECAUSE.get((source, spec.cloud))
        yield Problem(
            "serving.model.weightsUri",
            f"a {spec.cloud} stack cannot read {source} artifacts without keys"
            + (f" ({because})" if because else "")
            + f"; allowed training clouds for {spec.cloud}: "
            + (", ".join(t for t, s in READERS if s == spec.cloud) or "none")
            + (
                f"; or copy them into this stack's own store: serving.model.copyFrom: {serving.model.weights_uri} "
                f"with serving.model.weightsUri a prefix of this stack's {spec.cloud} store"
                if source in COPY_SOURCES and spec.cloud in COPY_DESTINATIONS
                else ""
            ),
        )
        return
    listed = [r for r in spec.separation.training_accounts if split_account_reference(r)[0] == source]
    named = serving.artifact_account
    if named is None or reference_cloud(named, spec.cloud)[0] != source:
        yield Problem(
            "serving.artifactAccount",
            f"the weights are on {source} ({serving.model.weights_uri}): name the {source} training account that "
            f"published them; allowed: {', '.join(listed) or f'none (add {source}:<id> to separation.trainingAccounts)'}",
        )
    for index, adapter in enumerate(serving.model.adapters):
        if store_cloud(adapter.uri) != source:
            yield Problem(
                f"serving.model.adapters.{index}.uri",
                f"{adapter.uri!r}: adapters are read through the weights' handoff, from {source}; allowed schemes: "
                + ", ".join(f"{scheme}://" for scheme, cloud in STORE_CLOUDS.items() if cloud == source),
            )
    for path, uri in [("serving.model.weightsUri", serving.model.weights_uri)] + [
        (f"serving.model.adapters.{i}.uri", a.uri) for i, a in enumerate(serving.model.adapters)
    ]:
        location = artifact_location(uri)
        if location is not None and location.cloud == source and not location.prefix:
            yield Problem(
                path, f"{uri!r} names a whole bucket; point at the artifact prefix so the grant is limited to it"
            )
    needs_region = source in REGION_KINDS
    if needs_region and serving.artifact_region is None:
        yield Problem(
            "serving.artifactRegion",
            f"the weights are on {source}: name the training store's region ({REGION_KINDS[source]}), "
            "where this stack declares its federated reader",
        )
    elif not needs_region and serving.artifact_region is not None:
        yield Problem("serving.artifactRegion", f"{source}'s reader is global: remove artifactRegion")
    virtual = S3_HOST.fullmatch(serving.model.weights_uri.partition("://")[2].partition("/")[0])
    if virtual is not None and serving.artifact_region not in (None, virtual["region"]):
        yield Problem(
            "serving.artifactRegion",
            f"{serving.artifact_region!r}, while the weights' S3 URL is in {virtual['region']}; allowed: "
            f"{virtual['region']}",
        )
    yield from _oci_only_keys(spec, source)
    yield from _lifetime_keys(spec, source)
    yield from _deployer_key(spec, source)


REGION_KINDS = {
    "aws": "an AWS Region, e.g. us-east-1",
    "azure": "an Azure location, e.g. eastus",
    "oci": "an OCI region identifier, e.g. us-ashburn-1",
}
OCI_URI = "oci://<bucket>@<namespace>/<prefix>"


def _oci_only_keys(spec: ServingStack, source: str | None) -> Iterator[Problem]:
    """Weights on OCI: every URI names its Object Storage namespace, artifactTenancy is the training tenancy and the
    region one of OCI's; artifactTenancy and artifactUrlLifetimeMinutes are refused for weights anywhere else."""
    serving = spec.serving
    if source != "oci":
        if serving.artifact_tenancy is not None:
            yield Problem("serving.artifactTenancy", "set only for weights on OCI (oci://...); remove it")
        return
    for path, uri in [("serving.model.weightsUri", serving.model.weights_uri)] + [
        (f"serving.model.adapters.{i}.uri", a.uri) for i, a in enumerate(serving.model.adapters)
    ]:
        location = artifact_location(uri)
        if location is not None and location.cloud == "oci" and not NAMESPACE.fullmatch(location.namespace):
            yield Problem(
                path,
                f"{uri!r} names no Object Storage namespace (the tenancy's, `oci os ns get`); allowed: {OCI_URI}",
            )
    tenancy = serving.artifact_tenancy
    match = OCI_OCID.fullmatch(tenancy or "")
    if match is None or match["type"] != "tenancy":
        yield Problem(
            "serving.artifactTenancy",
            f"the weights are on OCI: name the training tenancy's OCID (ocid1.tenancy.<realm>..<unique id>), which "
            f"the reader's provider signs for; found {tenancy!r}",
        )
    regions = registry.get("oci").catalog.regions
    region = serving.artifact_region
    if region is not None and regions and region not in regions:
        yield Problem("serving.artifactRegion", f"{region!r} is not an OCI region; allowed: {', '.join(regions)}")


def _lifetime_keys(spec: ServingStack, source: str | None) -> Iterator[Problem]:
    """artifactUrlLifetimeMinutes is each replica's credential lifetime where replicas read with one (Vultr's, from
    OCI, Google Cloud or AWS: PER_REPLICA_PAIRS), within what the source cloud issues; refused anywhere else."""
    lifetime = spec.serving.artifact_url_lifetime_minutes
    if lifetime is None:
        return
    if (source, spec.cloud) not in PER_REPLICA_PAIRS:
        pairs = ", ".join(f"{t} weights in a {s} stack" for t, s in sorted(PER_REPLICA_PAIRS))
        yield Problem(
            "serving.artifactUrlLifetimeMinutes",
            f"set only where each replica reads with a short-lived credential of its own ({pairs}); remove it",
        )
    elif source == "aws" and lifetime > SESSION_LIFETIME_MINUTES[2]:
        least, _, most = SESSION_LIFETIME_MINUTES
        yield Problem(
            "serving.artifactUrlLifetimeMinutes",
            f"{lifetime} minutes: each replica's STS session is assumed by the deployer, itself a role session when "
            f"deploying through SSO or a CI role, and role chaining caps a session at {most} minutes "
            "(docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_terms-and-concepts.html#iam-term-role-chaining); "
            f"allowed: {least}..{most}",
        )
    elif source == "gcp" and lifetime > TOKEN_LIFETIME_MINUTES[2]:
        least, _, most = TOKEN_LIFETIME_MINUTES
        yield Problem(
            "serving.artifactUrlLifetimeMinutes",
            f"{lifetime} minutes: a Google Cloud access token (IAM Credentials generateAccessToken) lives at most "
            f"{most} minutes unless the org policy constraint iam.allowServiceAccountCredentialLifetimeExtension "
            f"lists the reader service account (then up to {TOKEN_LIFETIME_EXTENDED_MINUTES}), which this stack "
            f"does not set; allowed: {least}..{most}",
        )


# The deployer as the reader role's trust names it: an IAM role (with its path: an IAM Identity Center role sits
# under aws-reserved/sso.amazonaws.com/<region>/) or user ARN (docs.aws.amazon.com/IAM/latest/UserGuide/
# reference_identifiers.html#identifiers-arns). An assumed-role session ARN (arn:aws:sts::<account>:assumed-role/<role>/
# <session>, what `aws sts get-caller-identity` prints) is not the principal aws:PrincipalArn carries.
DEPLOYER_ARN = re.compile(r"arn:aws:iam::(?P<account>[0-9]{12}):(?P<kind>role|user)/(?:[\w+=,.@-]+/)*[\w+=,.@-]{1,64}")
ASSUMED_ROLE = re.compile(r"arn:aws:sts::(?P<account>[0-9]{12}):assumed-role/(?P<role>[\w+=,.@-]+)/[\w+=,.@-]+")
DEPLOYER_FORM = "arn:aws:iam::<account>:role/<path/><name> or arn:aws:iam::<account>:user/<name>"


def _deployer_key(spec: ServingStack, source: str | None) -> Iterator[Problem]:
    """AWS weights on Vultr: the reader role trusts exactly the principal the deploy runs as, which the stack cannot
    find out by itself (a caller identity is a session, and an SSO role's path is not in it): serving.artifactDeployer
    names it. Refused for any other pair."""
    deployer = spec.serving.artifact_deployer
    if (source, spec.cloud) != ("aws", "vultr"):
        if deployer is not None:
            yield Problem("serving.artifactDeployer", "set only for weights on AWS read by a Vultr stack; remove it")
        return
    if deployer is None:
        yield Problem(
            "serving.artifactDeployer",
            "the weights are on AWS: name the IAM role or user the deploy runs as, the only principal the reader role "
            f"trusts to start each replica's session; allowed: {DEPLOYER_FORM}",
        )
        return
    session = ASSUMED_ROLE.fullmatch(deployer)
    if session is not None:
        yield Problem(
            "serving.artifactDeployer",
            f"{deployer!r} is an assumed-role session (what get-caller-identity prints), not a principal a trust names: "
            f"name its role, arn:aws:iam::{session['account']}:role/<path/>{session['role']} (`aws iam get-role "
            f"--role-name {session['role']}` prints its ARN, with the path an SSO role has); allowed: {DEPLOYER_FORM}",
        )
    elif DEPLOYER_ARN.fullmatch(deployer) is None:
        yield Problem("serving.artifactDeployer", f"{deployer!r} is not an IAM principal ARN; allowed: {DEPLOYER_FORM}")


# An Object Storage namespace is a name OCI generated for the tenancy (letters and digits; older tenancies' is the
# tenancy name): it lands in a URL path, so nothing but [A-Za-z0-9_-].
NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@rule(workload="serving")
def reads_lie_under_the_published_prefix(spec: ServingStack) -> Iterator[Problem]:
    """What a serving stack reads from its training account (the weights and adapters, or the copies' sources) lies
    under the prefix the training stack publishes under (serving.artifactPrefix, the training stack's
    training.artifactPrefix): the separation pack lets reads across accounts and clouds cross only there, so a
    location outside it would validate and then fail every preview."""
    serving = spec.serving
    if serving.artifact_account is None:
        return  # the weights are this account's (a warning says so)
    model = serving.model
    read: Sequence[tuple[str, str | None]] = (
        [("serving.model.copyFrom", model.copy_from)]
        + [(f"serving.model.adapters.{i}.copyFrom", a.copy_from) for i, a in enumerate(model.adapters)]
        if copies_requested(spec)
        else [("serving.model.weightsUri", model.weights_uri)]
        + [(f"serving.model.adapters.{i}.uri", a.uri) for i, a in enumerate(model.adapters)]
    )
    published = serving.artifact_prefix
    for path, uri in read:
        location = artifact_location(uri) if uri else None
        if location is None or location.prefix.startswith(published):
            continue
        yield Problem(
            path,
            f"{uri!r} reads {location.prefix or 'the whole store'!r}, outside {published!r}, the prefix the training "
            "stack publishes under (serving.artifactPrefix): only reads under it may cross from the training "
            f"account; allowed: a location under {published!r}, or serving.artifactPrefix set to the training "
            "stack's training.artifactPrefix",
        )
