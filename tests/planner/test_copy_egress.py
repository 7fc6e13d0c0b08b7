"""The copy handoff's egress (accelstack.planner.egress.copy_egress): the source cloud bills the weights leaving it
once per checkpoint copied, not per replica boot; `accelstack cost` says so beside the serving totals."""

from __future__ import annotations

import pytest

from accelstack.planner.egress import EGRESS_TO_INTERNET, copy_egress


def test_a_copy_costs_the_weights_once_at_the_sources_price():
    egress = copy_egress("azure", "vultr", 16.0)
    assert egress.usd_per_copy == pytest.approx(16.0 * EGRESS_TO_INTERNET["azure"].usd_per_gb, abs=0.01)
    assert "once per checkpoint" in egress.basis and egress.source == EGRESS_TO_INTERNET["azure"].source


@pytest.mark.parametrize(("source", "serving"), [("oci", "aws"), ("azure", "vultr"), ("oci", "gcp")])
def test_accelstack_cost_prices_the_copy_once_instead_of_per_replica_boot(source, serving):
    from accelstack.clouds import registry
    from accelstack.commands.cost import serving_estimate, serving_table
    from accelstack.commands.size import book
    from accelstack.planner.serving_plan import plan_serving
    from accelstack.spec.loader import parse_spec
    from tests.conformance.test_cross_cloud_copy import copy_config

    spec = parse_spec(copy_config(source, serving))
    cloud = registry.get(serving)
    prices = book(None, cloud=cloud, region=spec.account.region)
    estimate = serving_estimate(spec, 24, prices, cloud=cloud)  # type: ignore[arg-type]
    assert estimate["crossCloudEgress"] is None  # the replicas read this stack's own store: no per-boot egress
    copy = estimate["copyEgress"]
    weights_gb = plan_serving(spec.serving, cloud.catalog).weights_gb
    assert (copy["training_cloud"], copy["serving_cloud"]) == (source, serving)
    assert copy["usd_per_copy"] == pytest.approx(weights_gb * EGRESS_TO_INTERNET[source].usd_per_gb, abs=0.01)
    caption = str(serving_table({"stack": estimate}).caption)
    assert f"copy egress from {source}" in caption and "per checkpoint" in caption
