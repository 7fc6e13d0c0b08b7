"""The copy handoff's rules (accelstack.spec.copies), said by the serving handoff rule
(accelstack.spec.handoff_rules.weights_on_another_cloud) when a stack names serving.model.copyFrom or an adapter's
copyFrom: where the copy reads from and writes to, and the keys its source needs.

Adapters without copyFrom in a copying stack are read from this stack's own store as they are (an adapter trained or
copied earlier on the serving side): nothing of them crosses a cloud. Adapters with copyFrom come from the weights'
source cloud, because one serving.artifactAccount (and for OCI one tenancy and region: one PAR provider) names where
every copy reads.
"""

from __future__ import annotations

from collections.abc import Iterator

from accelstack.clouds import registry
from accelstack.spec.accounts import OCI_OCID
from accelstack.spec.copies import (
    COPY_DESTINATIONS,
    COPY_SOURCES,
    DIRECT_SOURCES,
    SOURCE_FORMS,
    copy_source_cloud,
    destination_key,
)
from accelstack.spec.handoff import READERS, artifact_location, reference_cloud, split_account_reference, store_cloud
from accelstack.spec.models import ServingStack
from accelstack.spec.problems import Problem

ALLOWED_SOURCES = ", ".join(SOURCE_FORMS.values())


def copy_problems(spec: ServingStack) -> Iterator[Problem]:
    serving = spec.serving
    own = spec.cloud
    model = serving.model
    if own not in COPY_DESTINATIONS:
        yield Problem(
            "serving.model.copyFrom",
            f"a copy writes into the serving stack's own store on {', '.join(COPY_DESTINATIONS)}; not {own}: remove it",
        )
        return
    own_schemes = ", ".join(f"{s}://" for s in registry.get(own).catalog.object_uri_schemes)
    if model.copy_from is None:
        for index, adapter in enumerate(model.adapters):
            if adapter.copy_from is not None:
                yield Problem(
                    f"serving.model.adapters.{index}.copyFrom",
                    "an adapter is copied from where the weights are copied from (serving.artifactAccount names that "
                    "account): set serving.model.copyFrom too, or remove the adapter's copyFrom",
                )
        return
    source = copy_source_cloud(model.copy_from, own)
    if source not in COPY_SOURCES or source == own:
        why = (
            f"every serving cloud reads {source} where it is (weightsUri: {model.copy_from}, serving.artifactAccount)"
            if source in DIRECT_SOURCES
            else f"{source} is this stack's own cloud: name it in serving.model.weightsUri"
            if source == own
            else "not an object store URI a copy reads"
        )
        yield Problem(
            "serving.model.copyFrom",
            f"{model.copy_from!r}: {why}; allowed: {ALLOWED_SOURCES}"
            + (f" (a {own} stack's own store is not a copy source)" if own in COPY_SOURCES else ""),
        )
        return
    # The destinations: prefixes in this stack's own store, never the bucket root, never one inside another.
    destinations = [("serving.model.weightsUri", model.weights_uri)] + [
        (f"serving.model.adapters.{i}.uri", a.uri) for i, a in enumerate(model.adapters)
    ]
    for path, uri in destinations:
        if store_cloud(uri, own) != own:
            yield Problem(
                path,
                f"{uri!r}: with serving.model.copyFrom the replicas read this stack's own {own} store only, where the "
                f"copy writes; allowed: {own_schemes} URIs of this stack's store",
            )
        elif not destination_key(uri, own)[1]:
            yield Problem(path, f"{uri!r} names a whole bucket; a copy writes into a prefix of it: name one")
    copied = [("serving.model.weightsUri", model.weights_uri)] + [
        (f"serving.model.adapters.{i}.uri", a.uri) for i, a in enumerate(model.adapters) if a.copy_from is not None
    ]
    yield from _overlaps(copied, destinations, own)
    # The sources: the weights' cloud, a prefix each.
    sources = [("serving.model.copyFrom", model.copy_from)] + [
        (f"serving.model.adapters.{i}.copyFrom", a.copy_from) for i, a in enumerate(model.adapters) if a.copy_from
    ]
    from accelstack.spec.handoff_rules import NAMESPACE  # the handoff rules import this module

    for path, uri in sources:
        location = artifact_location(uri)
        if location is None or location.cloud != source:
            yield Problem(path, f"{uri!r}: every copy reads from the weights' {source} account; allowed: "
                          f"{SOURCE_FORMS[source]}")  # fmt: skip
        elif not location.prefix:
            yield Problem(path, f"{uri!r} names a whole bucket; point at the artifact prefix the copy reads")
        elif source == "oci" and not NAMESPACE.fullmatch(location.namespace):
            yield Problem(path, f"{uri!r} names no Object Storage namespace; allowed: {SOURCE_FORMS['oci']}")
    yield from _source_account(spec, source)
    yield from _source_keys(spec, source)


def _overlaps(copied: list[tuple[str, str]], destinations: list[tuple[str, str]], own: str) -> Iterator[Problem]:
    """A copy's destination is its own prefix: no other URI the replicas read equals it or lies inside it or it
    inside another (a copy never overwrites, and a sync of one prefix would carry another's files)."""
    for path, uri in copied:
        store, prefix = destination_key(uri, own)
        if not prefix:
            continue
        for other_path, other in destinations:
            if other_path == path:
                continue
            other_store, other_prefix = destination_key(other, own)
            if (
                other_store == store
                and other_prefix
                and (other_prefix.startswith(prefix) or prefix.startswith(other_prefix))
            ):
                yield Problem(
                    path,
                    f"{uri!r} and {other_path} ({other!r}) are the same prefix or one inside the other; allowed: "
                    "a prefix of its own per copy, e.g. .../models/<name>/ and .../adapters/<name>/",
                )


def _source_account(spec: ServingStack, source: str) -> Iterator[Problem]:
    serving = spec.serving
    listed = [r for r in spec.separation.training_accounts if split_account_reference(r)[0] == source]
    named = serving.artifact_account
    if named is None or reference_cloud(named, spec.cloud)[0] != source:
        yield Problem(
            "serving.artifactAccount",
            f"the weights are copied from {source} ({serving.model.copy_from}): name the {source} training account "
            f"that published them; allowed: {', '.join(listed) or f'none (add {source}:<id> to separation.trainingAccounts)'}",
        )


def _source_keys(spec: ServingStack, source: str) -> Iterator[Problem]:
    """OCI: the copy's PAR is declared in the training tenancy and region, living artifactUrlLifetimeMinutes (the
    field's bounds, 15..1440). Azure: the deployer reads with its own token, nothing else to name."""
    serving = spec.serving
    if serving.artifact_deployer is not None:
        yield Problem("serving.artifactDeployer", "set only for weights on AWS read by a Vultr stack; remove it")
    if source == "azure":
        for path, value in (
            ("serving.artifactTenancy", serving.artifact_tenancy),
            ("serving.artifactRegion", serving.artifact_region),
            ("serving.artifactUrlLifetimeMinutes", serving.artifact_url_lifetime_minutes),
        ):
            if value is not None:
                yield Problem(
                    path,
                    "a copy from Azure reads with the deployer's own Entra ID token: nothing is declared in the "
                    "training subscription; remove it",
                )
        return
    match = OCI_OCID.fullmatch(serving.artifact_tenancy or "")
    if match is None or match["type"] != "tenancy":
        yield Problem(
            "serving.artifactTenancy",
            "the weights are copied from OCI: name the training tenancy's OCID (ocid1.tenancy.<realm>..<unique id>), "
            f"where the copy's pre-authenticated request is declared; found {serving.artifact_tenancy!r}",
        )
    regions = registry.get("oci").catalog.regions
    region = serving.artifact_region
    if region is None:
        yield Problem(
            "serving.artifactRegion",
            "the weights are copied from OCI: name the bucket's region (the PAR's host), e.g. us-ashburn-1"
            + (f"; allowed: {', '.join(regions)}" if regions else ""),
        )
    elif regions and region not in regions:
        yield Problem("serving.artifactRegion", f"{region!r} is not an OCI region; allowed: {', '.join(regions)}")


# The pairs a copy makes possible that no reader serves (said by the docs and tests).
COPY_ONLY_PAIRS = tuple(
    (source, serving)
    for source in COPY_SOURCES
    for serving in COPY_DESTINATIONS
    if source != serving and (source, serving) not in READERS
)
