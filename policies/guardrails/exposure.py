"""What the internet reaches, judged over the reachability view (policies/reachability.py): only the serving
load balancer's listeners (its front door, where TLS, the WAF and its rate limit apply), and in training
nothing at all.

The other guardrails judge each half of an exposure (`no-public-ip-on-nodes`: an address; `no-internet-ingress`:
a rule); this judges the path they make together and the paths neither names: a node reached through an
elastic IP bound to it and a security group opened by a rule resource, a forwarding rule or public load
balancer that puts nodes on the internet without the front door. Ours (Trivy AVD-AWS-0107 / AVD-AZU-0047 /
AVD-GCP-0027 judge rules alone).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..common import Context
from ..reachability import FRONT_DOOR
from ..separation.reachability_rules import view

POLICY_NAME = "internet-reaches-only-the-front-door"
DESCRIPTION = "The internet reaches only the serving load balancer's listeners (training: nothing)."


def check_internet_reaches_only_the_front_door(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    found: dict[tuple[str, str], None] = {}
    for link in view(resources, ctx).from_internet():
        if link.target.kind == FRONT_DOOR and ctx.workload == "serving":
            continue
        ports = f" on {link.ports}" if link.ports else ""
        allowed = (
            "only the serving load balancer's listeners may be"
            if ctx.workload == "serving"
            else f"nothing in a {ctx.workload or 'training'} stack may be"
        )
        message = f"{link.what}: the internet reaches {link.target.shown()}{ports}; {allowed} reached from the internet"
        found[(link.origin, message)] = None
    yield from found


check_internet_reaches_only_the_front_door.__doc__ = __doc__
