"""One behaviour per neutral key (issue 28): the ranges a VPN's far end answers for are judged alike on AWS, Azure,
GCP and OCI, in every spelling each cloud has (tests/policies/vpn_edits.py). On every cloud the VPN itself fails
`no-network-path-across-sides` (its far end is in no account); a far end given a default route, a public range or a
range the pack cannot read (or one unknown until deployed) is besides the internet reaching the stack's networks
through the tunnel (`internet-reaches-only-the-front-door`), in the message shape OCI's static routes set; private
ranges are not. Each VPN is added to the cloud's shipped training stack's export and run through both packs."""

from __future__ import annotations

import json

import pytest
from red_team_edits import Doc, Edit, both
from red_team_suite import Change, previewed, verdicts_after
from vpn_edits import ROUTE, SELECTOR, SPELLINGS, Spelling

from accelstack.engine.policy_runner import UNKNOWN, policy_verdicts
from accelstack.examples import WORKLOAD_EXAMPLES
from accelstack.policies import reachability

PATHS = "no-network-path-across-sides"
EXPOSURE = "internet-reaches-only-the-front-door"
BEYOND = "is beyond the private ranges (the far end answers for internet addresses)"
UNREADABLE = "is no range the pack can read (fails closed"

# name -> (the far end's ranges, whether they go beyond the private ranges)
CASES = {
    "private": (["10.200.0.0/16", "fd12:3456:789a::/48"], False),  # (a) RFC 1918 and IPv6 ULA only
    "default-route": (["0.0.0.0/0", "::/0"], True),  # (b)
    "public": (["203.0.113.0/24"], True),  # (c)
    "unparsable": (["not-a-cidr"], True),  # (d)
}


def rules(change: Change) -> dict[str, list[str]]:
    """policy -> the messages of its mandatory verdicts."""
    found: dict[str, list[str]] = {}
    for verdict in verdicts_after(change):
        if verdict.mandatory:
            found.setdefault(verdict.policy, []).append(f"{verdict.urn} {verdict.message}")
    return found


def exposures(found: dict[str, list[str]]) -> list[str]:
    """The guardrail's verdicts that the internet reaches the networks through a VPN's far end."""
    return [m for m in found.get(EXPOSURE, []) if BEYOND in m or UNREADABLE in m]


def refused_across_sides(found: dict[str, list[str]], spelling: Spelling) -> bool:
    return any(spelling.vpn in m and "cannot place" in m for m in found.get(PATHS, []))


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("spelling", SPELLINGS, ids=[s.id for s in SPELLINGS])
def test_far_end_ranges_are_judged_alike(spelling: Spelling, case: str) -> None:
    ranges, beyond = CASES[case]
    found = rules(Change(f"{spelling.id}-{case}", spelling.stack, spelling.build(ranges)))
    # The VPN is refused across sides whatever its far end answers for: the far end is in no account.
    assert refused_across_sides(found, spelling), found
    # A match-all selector narrows nothing (the routes decide): only a route carries a default route.
    expected = beyond and not (spelling.form == SELECTOR and case == "default-route")
    exposed = exposures(found)
    for cidr in ranges:
        named = [m for m in exposed if f"{spelling.label} {cidr} " in m]
        assert bool(named) == expected, (cidr, found)
        shape = UNREADABLE if case == "unparsable" else BEYOND
        assert all(shape in m and "the internet reaches the networks" in m for m in named), named
    if not expected:
        assert exposed == [], found


def test_every_cloud_and_both_forms_are_covered() -> None:
    assert {s.cloud for s in SPELLINGS} == {"aws", "azure", "gcp", "oci"}
    for cloud in ("aws", "azure", "gcp"):
        assert {s.form for s in SPELLINGS if s.cloud == cloud} == {ROUTE, SELECTOR}, cloud


def _unknown(cidr: str) -> Edit:
    """Preview's spelling of a range computed from another resource: the engine's unknown, inputs and outputs."""

    def apply(doc: Doc) -> None:
        for resource in doc["deployment"]["resources"]:
            for side in ("inputs", "outputs"):
                if isinstance(resource.get(side), dict) and cidr in json.dumps(resource[side]):
                    resource[side] = json.loads(json.dumps(resource[side]).replace(f'"{cidr}"', f'"{UNKNOWN}"'))

    return apply


@pytest.mark.parametrize("spelling", [s for s in SPELLINGS if s.form == ROUTE], ids=lambda s: s.id)
def test_a_range_unknown_until_deployed_fails_closed(spelling: Spelling) -> None:
    cidr = "10.201.0.0/16"
    found = rules(Change(f"{spelling.id}-unknown", spelling.stack, both(spelling.build([cidr]), _unknown(cidr))))
    assert refused_across_sides(found, spelling), found
    assert [m for m in exposures(found) if "(unknown until deployed)" in m], found


def test_a_route_to_a_tunnel_whose_id_is_unknown_is_still_read() -> None:
    """During preview a new tunnel's id is unknown; the engine's dependency still says the next hop is the tunnel."""
    [spelling] = [s for s in SPELLINGS if s.id == "gcp-route-via-tunnel"]

    def unknown_tunnel(doc: Doc) -> None:
        route = next(r for r in doc["deployment"]["resources"] if r["urn"].endswith("::gcp-training-to-onprem-0"))
        assert route["propertyDependencies"]["nextHopVpnTunnel"]
        for side in ("inputs", "outputs"):
            route[side]["nextHopVpnTunnel"] = UNKNOWN

    change = Change("gcp-unknown-tunnel", spelling.stack, both(spelling.build(["203.0.113.0/24"]), unknown_tunnel))
    assert [m for m in exposures(rules(change)) if "route destination 203.0.113.0/24" in m]


def test_azure_forced_tunnelling_sends_the_default_route_to_the_site() -> None:
    """A VPN gateway's default site gets 0.0.0.0/0 (forced tunnelling): the site answers for the internet."""
    [spelling] = [s for s in SPELLINGS if s.id == "azure-site-prefixes"]

    def default_site(doc: Doc) -> None:
        gateway = next(r for r in doc["deployment"]["resources"] if r["urn"].endswith("::azure-training-vpn-gateway"))
        site = {"id": gateway["inputs"]["ipConfigurations"][0]["subnet"]["id"].split("/virtualNetworks/")[0]}
        site["id"] += "/localNetworkGateways/azure-training-onprem"
        for side in ("inputs", "outputs"):
            gateway[side]["gatewayDefaultSite"] = site

    found = rules(
        Change("azure-forced-tunnelling", spelling.stack, both(spelling.build(["10.200.0.0/16"]), default_site))
    )
    assert [m for m in exposures(found) if "forced tunnelling" in m and "0.0.0.0/0" in m], found


@pytest.mark.parametrize("name", WORKLOAD_EXAMPLES)
def test_the_shipped_stacks_stay_clean(name: str) -> None:
    """The legitimate change: every shipped workload stack, with no VPN, draws no verdict of either rule (the
    landing stacks make no networks; `accelstack policy --all` covers them)."""
    result = previewed(name)
    verdicts = policy_verdicts(result.export, result.spec)
    assert not [v.line() for v in verdicts if v.policy in (PATHS, EXPOSURE)]


@pytest.mark.parametrize(
    ("cidr", "beyond", "match_all"),
    [
        ("10.0.0.0/8", False, False),
        ("172.31.0.0/16", False, False),
        ("192.168.0.0/24", False, False),
        ("fd00::/8", False, False),
        ("172.32.0.0/16", True, False),  # just past RFC 1918's 172.16.0.0/12
        ("100.64.0.0/10", True, False),  # shared address space (RFC 6598): no one's private range
        ("0.0.0.0/0", True, True),
        ("0::/0", True, True),  # ::/0 spelled otherwise
        (" 203.0.113.0/24 ", True, False),
        ("10.0.0.0/33", True, False),  # no range at all
    ],
)
def test_the_shared_range_predicates(cidr: str, beyond: bool, match_all: bool) -> None:
    assert reachability.beyond_private(cidr) is beyond
    assert reachability.matches_all(cidr) is match_all
    assert bool(reachability.far_end_selectors([cidr])) is not match_all
