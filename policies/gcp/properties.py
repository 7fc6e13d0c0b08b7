"""GCP's guarded kinds, property by property (policies/schema.py), split by concept: grants and identities;
the regional front door and separate Cloud Armor rules; everything else."""

from __future__ import annotations

from . import properties_front_door, properties_iam, properties_landing, properties_resources, properties_vpn

PROPERTIES: dict[str, dict[str, str]] = {
    **properties_resources.PROPERTIES,
    **properties_iam.PROPERTIES,
    **properties_front_door.PROPERTIES,
    **properties_landing.PROPERTIES,
    **properties_vpn.PROPERTIES,
}
UNJUDGED: dict[str, dict[str, str]] = {
    **properties_resources.UNJUDGED,
    **properties_iam.UNJUDGED,
    **properties_front_door.UNJUDGED,
    **properties_landing.UNJUDGED,
    **properties_vpn.UNJUDGED,
}
