"""A landing stack's values that the account, project, compartment and budget APIs refuse at create time are refused
at validate, at their config path (accelstack.spec.landing_limits, accelstack.spec.landing_oci; issue 32): one case
per rule, with the value just inside the limit accepted."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from accelstack.examples import example_file
from accelstack.spec import SpecError
from accelstack.spec.landing import LandingStack, parse_landing
from accelstack.spec.loader import read_stack_file

REPO = Path(__file__).resolve().parents[2]
Edit = Callable[[dict[str, Any]], None]


def landing(cloud: str, edit: Edit) -> dict[str, Any]:
    raw = copy.deepcopy(read_stack_file(example_file(f"{cloud}-landing")))
    edit(raw)
    return raw


def parsed(cloud: str, edit: Edit) -> LandingStack:
    return parse_landing(landing(cloud, edit), f"{cloud}-landing")


def refusal(cloud: str, edit: Edit) -> str:
    with pytest.raises(SpecError) as caught:
        parsed(cloud, edit)
    return str(caught.value)


def org(**values: Any) -> Edit:
    return lambda raw: raw["organization"].update(values)


def member(side: str, **values: Any) -> Edit:
    return lambda raw: raw["organization"][side]["account"].update(values)


def budget(side: str, amount: float) -> Edit:
    return lambda raw: raw["organization"][side].update(monthlyBudgetUsd=amount)


def emails(count: int) -> list[str]:
    return [f"finops{i}@acme.example" for i in range(count)]


def nested_parent(names: int) -> Edit:
    path = ":".join(f"level{i}" for i in range(1, names + 1))
    return org(parentId="ocid1.compartment.oc1..aaaaaaaaplatform", parentPath=path)


# (cloud, refused edit, its config path, words of the cloud's rule and the allowed values, accepted edit at the limit)
CASES = {
    "AWS member email past 64 characters": (
        "aws",
        member("training", email="a" * 48 + "@acme.example.com"),
        "organization.training.account.email",
        "65 characters; Organizations CreateAccount takes an email of 6 to 64 characters; allowed: 6 to 64",
        member("training", email="a" * 47 + "@acme.example.com"),
    ),
    "AWS member email's local name starting with a dot": (
        "aws",
        member("serving", email=".aws@acme.example"),
        "organization.serving.account.email",
        "begins with '.'; Organizations CreateAccount refuses it; allowed:",
        member("serving", email="a.ws@acme.example"),
    ),
    "AWS member email's local name with %": (
        "aws",
        member("training", email="aws%training@acme.example"),
        "organization.training.account.email",
        "contains %",
        member("training", email="aws+training@acme.example"),
    ),
    "AWS member email's domain starting with a hyphen": (
        "aws",
        member("training", email="aws@-acme.example"),
        "organization.training.account.email",
        "begins or ends with '.' or '-'",
        member("training", email="aws@a-cme.example"),
    ),
    "AWS budget in fractions of a cent": (
        "aws",
        budget("training", 100.005),
        "organization.training.monthlyBudgetUsd",
        "an AWS budget limit is sent in whole cents; allowed: at most two decimals",
        budget("training", 100.01),
    ),
    "AWS budget below a cent": (
        "aws",
        budget("serving", 0.001),
        "organization.serving.monthlyBudgetUsd",
        "e.g. 0.01",
        budget("serving", 0.01),
    ),
    "AWS alerts to 11 addresses": (
        "aws",
        org(alertEmails=emails(11)),
        "organization.alertEmails",
        "up to 10 email subscribers; allowed: 1 to 10",
        org(alertEmails=emails(10)),
    ),
    "GCP alerts to 6 addresses": (
        "gcp",
        org(alertEmails=emails(6)),
        "organization.alertEmails",
        "at most 5 monitoring channels (one per address); allowed: 1 to 5",
        org(alertEmails=emails(5)),
    ),
    "an alert address listed twice, in another case": (
        "oci",
        org(alertEmails=["finops@acme.example", "FinOps@acme.example"]),
        "organization.alertEmails.1",
        "is listed already (alertEmails.0; addresses are case-insensitive)",
        org(alertEmails=["finops@acme.example", "finops2@acme.example"]),
    ),
    "GCP project id containing google": (
        "gcp",
        member("training", name="acme-google-train"),
        "organization.training.account.name",
        "a GCP project id cannot contain 'google' (Resource Manager's restricted strings: google, null, undefined, ssl)",
        member("training", name="acme-goog-train"),
    ),
    "GCP project id containing ssl": (
        "gcp",
        member("serving", name="acme-ssl-serve"),
        "organization.serving.account.name",
        "cannot contain 'ssl'",
        member("serving", name="acme-sl-serve"),
    ),
    "GCP side project with the landing stack's own project id": (
        "gcp",
        member("serving", name="acme-landing"),
        "organization.serving.account.name",
        "the landing stack's own project (account.projectId) already has this id",
        member("serving", name="acme-landing2"),
    ),
    "Azure parent group that the stack itself creates": (
        "azure",
        org(parentId="azure-landing-serving"),
        "organization.parentId",
        "a management group this stack creates (one per side, <stack>-<side>); a group cannot be its own parent",
        org(parentId="azure-landing-servings"),
    ),
    "OCI parent six compartments below the root": (
        "oci",
        nested_parent(6),
        "organization.parentPath",
        "would put the sides' compartments 7 deep; OCI nests compartments at most 6 levels below the root; allowed: "
        "a path of 1 to 5 names",
        nested_parent(5),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_value_the_api_refuses_is_refused_at_its_path(case: str) -> None:
    cloud, edit, path, words, _ = CASES[case]
    message = refusal(cloud, edit)
    assert f"{path}: " in message and words in message, message


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_value_at_the_limit_is_accepted(case: str) -> None:
    cloud, _, _, _, at_limit = CASES[case]
    assert parsed(cloud, at_limit).cloud == cloud


@pytest.mark.parametrize("cloud", ["azure", "oci", "aws"])
def test_the_sides_names_differ_without_case(cloud: str) -> None:
    """Azure's aliases are case-insensitive names: ACME-train would return acme-train's subscription."""
    name = parsed(cloud, lambda raw: None).organization.training.account.name
    assert "need different names, compared without case" in refusal(cloud, member("serving", name=name.upper()))


def test_clouds_without_a_documented_alert_limit_take_more_addresses() -> None:
    """OCI's alert rule takes one delimited recipients text (pulumi_oci budget/rule.py), Azure's notification a list
    with no count its SDK states: neither is held to AWS's 10 or GCP's 5."""
    for cloud in ("oci", "azure"):
        assert len(parsed(cloud, org(alertEmails=emails(11))).organization.alert_emails) == 11


@pytest.mark.parametrize(
    ("cloud", "edit", "path"),
    [
        ("aws", member("training", email="a" * 60 + "@acme.example"), "organization.training.account.email"),
        ("gcp", member("serving", name="acme-google-serve"), "organization.serving.account.name"),
        ("oci", nested_parent(6), "organization.parentPath"),
    ],
)
def test_validate_exits_2_naming_the_path_without_a_traceback(
    cloud: str, edit: Edit, path: str, tmp_path: Path
) -> None:
    """The console command, as a user's shell runs it."""
    document = yaml.safe_load(example_file(f"{cloud}-landing").read_text())
    # The edits change the sections in place: the document's own dictionaries, under their namespaced keys.
    edit({key: document["config"][f"accelstack:{key}"] for key in ("account", "organization")})
    stack_file = tmp_path / f"Pulumi.{cloud}-landing.yaml"
    stack_file.write_text(yaml.safe_dump(document, width=10**6))
    completed = subprocess.run(
        [sys.executable, "-m", "accelstack.cli", "validate", str(stack_file)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 2, output
    assert "Traceback" not in output and path in output and "allowed" in output, output


def test_the_azure_group_ids_the_rule_reads_are_the_ones_the_parts_create() -> None:
    from accelstack.components.azure.landing import group_name
    from accelstack.spec.landing_limits import azure_group_id

    for side in ("training", "serving"):
        assert azure_group_id("azure-landing", side) == group_name("azure-landing", side)


def test_an_oci_compartment_named_as_an_unwired_listed_stack_is_refused(tmp_path: Path) -> None:
    """Both would create the dynamic group oci-training-nodes, whose name the tenancy keeps unique."""
    from accelstack.spec.landing import workload_specs

    landing_stack = parsed("oci", member("training", name="oci-training"))
    with pytest.raises(SpecError) as caught:
        workload_specs(landing_stack, REPO / "stacks")
    message = str(caught.value)
    assert "organization.training.stacks.0: " in message and "dynamic group 'oci-training-nodes'" in message, message
    # Wired to the landing stack, it uses the landing stack's group and makes none: accepted.
    document = yaml.safe_load(example_file("oci-training").read_text())
    document["config"]["accelstack:landing"] = {"stack": "acme/accelstack/oci-landing"}
    (tmp_path / "Pulumi.oci-training.yaml").write_text(yaml.safe_dump(document, width=10**6))
    assert set(workload_specs(landing_stack, tmp_path)) == {"oci-training"}


def test_each_listed_stack_check_names_a_function() -> None:
    import importlib

    from accelstack.spec.landing import LANDING_LISTED_STACK_CHECKS
    from accelstack.spec.landing_ref import LANDING_CLOUDS

    for cloud, check in LANDING_LISTED_STACK_CHECKS.items():
        module, _, name = check.partition(":")
        assert cloud in LANDING_CLOUDS and callable(getattr(importlib.import_module(module), name)), check
