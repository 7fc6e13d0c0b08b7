"""OCI's kinds that move data or join networks (policies/oci/transfers.py, policies/oci/reachability.py), property by
property, kept apart from policies/oci/properties.py: judged by the named pack rules (as traced by
`python -m accelstack.engine.schema_report --trace`), inert with the reason, or unjudged with why it matters."""

from __future__ import annotations

NAMING = "inert: naming and display only"
PLACE = "pinned-project"
TAGS = "workload-tags"
GRAPH = "cross-account-read-only, cross-account-read-only-final"
PATHS = "internet-reaches-only-the-front-door, no-network-path-across-sides"
NAMESPACE = "inert: the tenancy's one Object Storage namespace (the bucket's name is what places it)"
ROUTING = "inert: which routes the link carries: it links the networks whatever they are"

PROPERTIES: dict[str, dict[str, str]] = {
    "oci:ObjectStorage/preauthrequest:Preauthrequest": {
        "accessType": GRAPH,
        "bucket": GRAPH,
        "namespace": NAMESPACE,
        "timeExpires": "inert: a URL usable until then is refused whatever its lifetime",
        "bucketListingAction": "inert: listing on top of an AnyObject* read, already refused",
        "name": NAMING,
        # The deprecated `object` and the current `objectName` narrow the same URL to one object: both are read.
        "object": GRAPH,
        "objectName": GRAPH,
    },
    "oci:ObjectStorage/replicationPolicy:ReplicationPolicy": {
        "bucket": GRAPH,
        "destinationBucketName": GRAPH,
        "destinationRegionName": GRAPH,
        "namespace": NAMESPACE,
        "deleteObjectInDestinationBucket": "inert: a trigger that empties the destination when the policy goes",
        "name": NAMING,
    },
    "oci:ObjectStorage/objectLifecyclePolicy:ObjectLifecyclePolicy": {
        "bucket": "no-scheduled-data-loss",
        "namespace": NAMESPACE,
        "rules": "no-scheduled-data-loss",
    },
    "oci:Core/localPeeringGateway:LocalPeeringGateway": {
        "compartmentId": PLACE,
        "vcnId": PATHS,
        "definedTags": NAMING,
        "displayName": NAMING,
        "freeformTags": TAGS,
        "peerId": PATHS,
        "routeTableId": ROUTING,
    },
    "oci:Core/remotePeeringConnection:RemotePeeringConnection": {
        "compartmentId": PLACE,
        "drgId": PATHS,
        "definedTags": NAMING,
        "displayName": NAMING,
        "freeformTags": TAGS,
        "peerId": PATHS,
        "peerRegionName": "inert: the peer is refused unless it is this stack's, whatever its region",
    },
    "oci:Core/drg:Drg": {
        "compartmentId": PLACE,
        "definedTags": NAMING,
        "displayName": NAMING,
        "freeformTags": TAGS,
    },
    "oci:Core/drgAttachment:DrgAttachment": {
        "drgId": PATHS,
        "definedTags": NAMING,
        "displayName": NAMING,
        "doesPreserveOriginalRoutesWithNat": ROUTING,
        "drgNatPolicyId": ROUTING,
        "drgRouteTableId": ROUTING,
        "exportDrgRouteDistributionId": ROUTING,
        "freeformTags": TAGS,
        # The attached network: `networkDetails.id` now, the deprecated `vcnId` before it; both are read.
        "networkDetails": PATHS,
        "removeDrgNatPolicyTrigger": ROUTING,
        "removeExportDrgRouteDistributionTrigger": ROUTING,
        "routeTableId": ROUTING,
        "vcnId": PATHS,
    },
    "oci:Core/ipsec:Ipsec": {
        "compartmentId": PLACE,
        "cpeId": PATHS,
        "drgId": PATHS,
        "cpeLocalIdentifier": NAMING,
        "cpeLocalIdentifierType": NAMING,
        "definedTags": NAMING,
        "displayName": NAMING,
        "freeformTags": TAGS,
        # The far end's ranges: beyond the private ranges (a default route above all), the internet reaches the DRG's
        # networks through the tunnel; the link itself is refused across sides whatever it carries.
        "staticRoutes": PATHS,
        "tunnelConfigurations": "inert: the tunnel's crypto and BGP settings: the VPN itself is refused",
    },
}

# Nothing left: the links' inputs are judged or inert (tests/policies/test_schema_coverage.py).
UNJUDGED: dict[str, dict[str, str]] = {}
