"""OCI's side of the OCI -> Vultr handoff (components/handoff/oci_par.py): the provider pinned to the training
tenancy and the pre-authenticated requests (pulumi_oci objectstorage.Preauthrequest) a Vultr serving stack declares
there, one per replica and artifact prefix.

Each PAR: access_type AnyObjectRead, object_name the artifact prefix ("the object name can be a prefix as well, in
that case pre-authenticated request grants access to all the objects within the bucket starting with that prefix",
pulumi_oci/objectstorage/preauthrequest.py), bucket_listing_action ListObjects (the fetch lists the prefix), and
time_expires from the replica's clock. At create OCI checks that the bucket exists in the namespace, that the caller
has PAR_MANAGE on it and the permission for what the PAR permits (OBJECT_READ; "Using Pre-Authenticated Requests",
Required Permissions: a PAR stops working when its creator loses them), and that time_expires is in the future. There is no update (the API has Create, Get, List, Delete): any change replaces the
PAR, so the inputs depend only on the spec and the replica's clock. The access URI
(/p/<token>/n/<namespace>/b/<bucket>/o/) is returned only by the create call.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_oci as oci

from accelstack.components.handoff import ReaderValues
from accelstack.components.handoff.oci_par import OciParReader
from accelstack.spec.handoff import ArtifactHandoff, ArtifactLocation

ACCESS_TYPE = "AnyObjectRead"
LIST_ACTION = "ListObjects"


def declare_par(
    resource_name: str,
    display_name: str,
    location: ArtifactLocation,
    expires: pulumi.Output[str],
    provider: Any,
    parent: pulumi.Resource,
) -> tuple[oci.objectstorage.Preauthrequest, pulumi.Output[str]]:
    par = oci.objectstorage.Preauthrequest(
        resource_name,
        access_type=ACCESS_TYPE,
        bucket=location.bucket,
        namespace=location.namespace,
        name=display_name,
        object_name=location.prefix,
        bucket_listing_action=LIST_ACTION,
        time_expires=expires,
        opts=pulumi.ResourceOptions(parent=parent, provider=provider),
    )
    return par, par.access_uri


def reader(name: str, handoff: ArtifactHandoff, parent: pulumi.Resource) -> OciParReader:
    """The reader's provider, pinned to the training tenancy and the store's region; the PARs come with the
    replicas (their clocks)."""
    provider = oci.Provider(
        f"{name}-artifacts-oci",
        tenancy_ocid=handoff.tenancy,  # the training tenancy: the PARs land there, in its namespace, never elsewhere
        region=handoff.region,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    values = pulumi.Output.from_input(ReaderValues(token_audience=""))
    return OciParReader(handoff, values, [], provider=provider, declare_par=declare_par)
