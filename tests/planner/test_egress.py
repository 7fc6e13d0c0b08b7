"""The cross-cloud handoff's egress (accelstack.planner.egress): the training cloud's dated list price per GB, times
the weights, times the fetches the traffic profile's scale-ups make."""

from __future__ import annotations

import pytest

from accelstack.planner.egress import EGRESS_TO_INTERNET, fetches_per_month, handoff_egress


def test_every_deployable_cloud_has_a_dated_sourced_price():
    for cloud in ("aws", "azure", "gcp", "oci"):
        price = EGRESS_TO_INTERNET[cloud]
        assert 0 < price.usd_per_gb < 1 and price.source.startswith("https://") and price.as_of[:2] == "20"


def test_fetches_count_each_days_scale_ups():
    profile = [1, 1, 2, 4, 4, 2, 1]  # up by 1 and 2 after the (wrapping) first hour: 3 fetches a day
    assert fetches_per_month(profile, warm_pool=0) == pytest.approx(3 * 730 / 24)
    assert fetches_per_month([2] * 24, warm_pool=1) == 3  # a fixed fleet fetches once per replica


def test_egress_is_weights_times_price_times_fetches():
    egress = handoff_egress("gcp", "aws", 16.0, [1, 3], warm_pool=0)
    assert egress.usd_per_fetch == pytest.approx(16.0 * 0.12)
    assert egress.monthly_usd == pytest.approx(16.0 * 0.12 * egress.fetches_per_month, rel=0.01)
    assert "training account pays" in egress.basis


def test_oci_weights_read_from_vultr_are_priced_at_ocis_outbound_rate():
    """The OCI -> Vultr pair: two fixed replicas fetch 16 GB once each; OCI's free 10 TB is said, not deducted."""
    egress = handoff_egress("oci", "vultr", 16.0, [2] * 24, warm_pool=0)
    assert (egress.usd_per_gb, egress.fetches_per_month) == (0.0085, 2)
    assert egress.monthly_usd == pytest.approx(16.0 * 0.0085 * 2, abs=0.01)
    assert "10 TB/month free (not deducted)" in EGRESS_TO_INTERNET["oci"].tier


@pytest.mark.parametrize("training", ["oci", "gcp", "aws"])
def test_accelstack_cost_prices_each_vultr_pairs_training_egress(training):
    """`accelstack cost` of a Vultr serving stack reading OCI, Cloud Storage or S3 weights adds the training cloud's
    egress at its dated price (the per-replica pairs, issue 31)."""
    from accelstack.clouds import registry
    from accelstack.commands.cost import serving_estimate
    from accelstack.commands.size import book
    from accelstack.spec.loader import parse_spec
    from tests.conformance.test_cross_cloud_handoff import pair_config

    spec = parse_spec(pair_config(training, "vultr"))
    cloud = registry.get("vultr")
    estimate = serving_estimate(spec, 24, book(None, cloud=cloud, region="ewr"), cloud=cloud)  # type: ignore[arg-type]
    egress = estimate["crossCloudEgress"]
    assert (egress["training_cloud"], egress["serving_cloud"]) == (training, "vultr")
    assert egress["usd_per_gb"] == EGRESS_TO_INTERNET[training].usd_per_gb and egress["fetches_per_month"] == 2
