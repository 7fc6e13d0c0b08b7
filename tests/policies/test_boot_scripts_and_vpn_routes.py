"""The last inputs the packs left unjudged (issue 28, item 2), judged: a Vultr node's `scriptId` and `appVariables`
(code and data on the node's boot that its userData does not show) and an OCI IPSec connection's `staticRoutes` (the
ranges its far end answers for). Each through both packs on a shipped stack's export, as the red-team suites run
them, naming which rule stops it: the red-team suites count a stop by any rule, and an OCI VPN is refused across
sides whatever it carries, so only here does a route's own verdict show."""

from __future__ import annotations

import pytest
from red_team_edits import put
from red_team_suite import Change, verdicts_after
from test_red_team_five_clouds import FOREIGN_SCRIPT_ID, OT, V_INSTANCE, VS, oci_vpn, runs_script, vultr_script

STACK_URN = "urn:pulumi:vultr-serving::accelstack::"


def rules(change: Change) -> dict[str, list[str]]:
    """policy -> the messages of its mandatory verdicts."""
    found: dict[str, list[str]] = {}
    for verdict in verdicts_after(change):
        if verdict.mandatory:
            found.setdefault(verdict.policy, []).append(f"{verdict.urn} {verdict.message}")
    return found


def test_a_startup_script_kept_by_hand_fails_closed() -> None:
    found = rules(Change("script-by-hand", VS, put("vultr-serving-replica-0", V_INSTANCE, scriptId=FOREIGN_SCRIPT_ID)))
    assert list(found) == ["no-secrets-in-user-data-final"], found
    [message] = found["no-secrets-in-user-data-final"]
    assert "vultr-serving-replica-0" in message and FOREIGN_SCRIPT_ID in message, message
    assert "no startup script of this stack" in message


def test_a_startup_script_of_the_stack_is_read_like_user_data() -> None:
    clean = Change(
        "own-script",
        VS,
        lambda doc: (
            vultr_script("vultr-serving-boot", "#!/bin/sh\nsysctl -w net.core.somaxconn=4096\n")(doc),
            runs_script("vultr-serving-replica-1", "vultr-serving-boot")(doc),
        ),
    )
    assert rules(clean) == {}
    keyed = Change(
        "own-script-with-a-key",
        VS,
        lambda doc: (
            vultr_script("vultr-serving-boot", "#!/bin/sh\nexport AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\n")(doc),
            runs_script("vultr-serving-replica-1", "vultr-serving-boot")(doc),
        ),
    )
    found = rules(keyed)
    assert set(found) == {"no-secrets-in-user-data", "no-secrets-in-user-data-final"}, found
    assert all("startup script vultr-serving-boot embeds" in m for m in found["no-secrets-in-user-data"]), found


@pytest.mark.parametrize(
    ("variables", "stopped"), [({"hf_token": "hf_0123456789abcdefghij"}, True), ({"region": "ewr"}, True), ({}, False)]
)
def test_marketplace_app_variables_fail_closed(variables: dict[str, str], stopped: bool) -> None:
    found = rules(
        Change(
            f"app-variables-{len(variables)}", VS, put("vultr-serving-replica-0", V_INSTANCE, appVariables=variables)
        )
    )
    if not stopped:
        assert found == {}
        return
    assert set(found) == {"no-secrets-in-user-data", "no-secrets-in-user-data-final"}, found
    names = ", ".join(sorted(variables))
    assert any(f"Marketplace app variables ({names})" in m for m in found["no-secrets-in-user-data"]), found


@pytest.mark.parametrize(
    ("route", "beyond_private"),
    [
        ("0.0.0.0/0", True),  # a default route: the far end answers for the whole internet
        ("203.0.113.0/24", True),  # a public range
        ("100.64.0.0/10", True),  # shared address space (RFC 6598): not RFC 1918, whoever's it is
        ("not-a-cidr", True),  # cannot be read: fails closed
        ("10.200.0.0/16", False),
        ("192.168.10.0/24", False),
    ],
)
def test_ipsec_static_routes_beyond_the_private_ranges_let_the_internet_in(route: str, beyond_private: bool) -> None:
    found = rules(Change(f"vpn-{route}", OT, oci_vpn([route])))
    # The tunnel is refused across sides whatever it carries (its far end is in no compartment) ...
    assert any("oci-training-vpn" in m for m in found.get("no-network-path-across-sides", [])), found
    assert any(route in m for m in found["no-network-path-across-sides"]), found  # ... and says what it routes
    # ... and a route beyond the private ranges is the internet reaching the DRG's networks, in the other pack.
    exposed = [m for m in found.get("internet-reaches-only-the-front-door", []) if f"static route {route}" in m]
    assert bool(exposed) == beyond_private, found


def test_every_route_is_judged_not_only_the_first() -> None:
    found = rules(Change("vpn-two-routes", OT, oci_vpn(["10.200.0.0/16", "0.0.0.0/0"])))
    exposed = found.get("internet-reaches-only-the-front-door", [])
    assert [m for m in exposed if "static route 0.0.0.0/0" in m] and not [m for m in exposed if "10.200" in m], found
