"""AWS's guarded kinds, property by property (policies/schema.py), split by concept: storage, keys, queues and
logs; the front door and firewalls; nodes and identities; VPNs."""

from __future__ import annotations

from . import properties_compute, properties_landing, properties_network, properties_storage, properties_vpn

PROPERTIES: dict[str, dict[str, str]] = {
    **properties_storage.PROPERTIES,
    **properties_network.PROPERTIES,
    **properties_compute.PROPERTIES,
    **properties_landing.PROPERTIES,
    **properties_vpn.PROPERTIES,
}
UNJUDGED: dict[str, dict[str, str]] = {
    **properties_storage.UNJUDGED,
    **properties_network.UNJUDGED,
    **properties_compute.UNJUDGED,
    **properties_landing.UNJUDGED,
    **properties_vpn.UNJUDGED,
}
