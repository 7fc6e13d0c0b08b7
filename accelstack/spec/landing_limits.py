"""What each cloud's account, project and budget APIs refuse at create time in a landing stack's config, checked
before anything exists (issue 32). The grammar every cloud shares is the landing model's (accelstack.spec.landing);
these are the per-cloud limits a value that passes it can still break, each with the rule's source.
Pure: no Pulumi here.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from accelstack.spec.problems import Problem

if TYPE_CHECKING:
    from accelstack.spec.landing import LandingStack

# Organizations CreateAccount, Email: "a minimum of 6 and a maximum of 64 characters long", the local name "can't
# begin with a dot" nor contain whitespace " ' ( ) < > [ ] : ; , \ | % &, the domain name "can't begin or end with a
# hyphen or dot" (Organizations API reference, CreateAccount; the same rules in the SDKs' CreateAccountRequest).
AWS_ACCOUNT_EMAIL_LENGTH = (6, 64)
AWS_LOCAL_PART_REFUSED = set(" \"'()<>[]:;,\\|%&")
# How many addresses one budget alert reaches: AWS Budgets, "a notification can have one SNS subscriber and up to 10
# email subscribers" (Budgets API, NotificationWithSubscribers); GCP, the budget's all-updates rule takes "a maximum
# of 5" monitoring channels, one per email (pulumi_gcp billing/_inputs.py monitoring_notification_channels).
ALERT_EMAILS_MAX = {"aws": 10, "gcp": 5}
# Resource Manager project ids "cannot contain restricted strings, such as google, null, undefined, and ssl"
# (cloud.google.com/resource-manager/docs/creating-managing-projects, project ID requirements).
GCP_PROJECT_RESTRICTED = ("google", "null", "undefined", "ssl")


def create_time_limits(landing: LandingStack) -> None:
    """ValueError naming the key of the first value the cloud's create call would refuse."""
    _alert_emails(landing)
    if landing.cloud == "aws":
        _aws_members(landing)
    elif landing.cloud == "gcp":
        _gcp_projects(landing)
    elif landing.cloud == "azure":
        _azure_groups(landing)


def _alert_emails(landing: LandingStack) -> None:
    emails = landing.organization.alert_emails
    seen: dict[str, int] = {}
    for index, email in enumerate(emails):
        first = seen.setdefault(email.lower(), index)
        if first != index:
            raise ValueError(
                f"organization.alertEmails.{index}: {email!r} is listed already (alertEmails.{first}; addresses "
                "are case-insensitive): each alert would reach it twice; allowed: each address once"
            )
    most = ALERT_EMAILS_MAX.get(landing.cloud)
    if most is not None and len(emails) > most:
        what = (
            "an AWS budget notification takes up to 10 email subscribers"
            if landing.cloud == "aws"
            else "a GCP budget notifies at most 5 monitoring channels (one per address)"
        )
        raise ValueError(
            f"organization.alertEmails: {len(emails)} addresses; {what}; allowed: 1 to {most} (a mailing list "
            "reaches more)"
        )


def _aws_members(landing: LandingStack) -> None:
    from accelstack.spec.landing import SIDES

    for side in SIDES:
        budget = landing.side(side).monthly_budget_usd
        if round(budget, 2) != budget:
            # components/aws/landing.py sends limitAmount in cents ("%.2f"): a fraction of a cent would be rounded.
            raise ValueError(
                f"organization.{side}.monthlyBudgetUsd {budget!r}: an AWS budget limit is sent in whole cents; "
                f"allowed: at most two decimals, e.g. {max(0.01, round(budget, 2)):.2f}"
            )
        email = landing.side(side).account.email
        if email is None:
            continue  # the landing model reports it
        path = f"organization.{side}.account.email"
        low, high = AWS_ACCOUNT_EMAIL_LENGTH
        if not low <= len(email) <= high:
            raise ValueError(
                f"{path}: {len(email)} characters; Organizations CreateAccount takes an email of {low} to {high} "
                f"characters; allowed: {low} to {high} characters, e.g. a plus address such as aws+training@acme.example"
            )
        local, _, domain = email.partition("@")
        refused = sorted(set(local) & AWS_LOCAL_PART_REFUSED)
        if local.startswith(".") or refused:
            what = "begins with '.'" if local.startswith(".") else f"contains {' '.join(refused)}"
            raise ValueError(
                f"{path}: the local name {local!r} {what}; Organizations CreateAccount refuses it; allowed: letters, "
                "digits and . _ + - (not first '.')"
            )
        if re.match(r"[.-]", domain) or re.search(r"[.-]$", domain):
            raise ValueError(
                f"{path}: the domain {domain!r} begins or ends with '.' or '-'; Organizations CreateAccount refuses "
                "it; allowed: a domain name such as acme.example"
            )


def azure_group_id(stack: str, side: str) -> str:
    """The side's management group id as components/azure/landing.py `group_name` writes it."""
    return f"{stack}-{side}"


def _azure_groups(landing: LandingStack) -> None:
    from accelstack.spec.landing import SIDES

    made = {azure_group_id(landing.stack, side) for side in SIDES}
    parent = landing.organization.parent_id
    if parent.lower() in made:  # management group ids are case-insensitive Azure resource names
        raise ValueError(
            f"organization.parentId {parent!r}: a management group this stack creates (one per side, "
            f"<stack>-<side>); a group cannot be its own parent; allowed: an existing group above them, e.g. the "
            "tenant root group's id"
        )


def _gcp_projects(landing: LandingStack) -> None:
    from accelstack.spec.landing import SIDES

    own = getattr(landing.account, "project_id", None)
    for side in SIDES:
        project = landing.side(side).account.name
        if project == own:
            # A project id "cannot be in use or previously used" (creating-managing-projects): the landing stack's
            # own project exists, so CreateProject refuses its id.
            raise ValueError(
                f"organization.{side}.account.name {project!r}: the landing stack's own project (account.projectId) "
                "already has this id, and GCP project ids are never reused; allowed: a new project id"
            )
        restricted = [word for word in GCP_PROJECT_RESTRICTED if word in project]
        if restricted:
            raise ValueError(
                f"organization.{side}.account.name {project!r}: a GCP project id cannot contain "
                f"{', '.join(repr(word) for word in restricted)} (Resource Manager's restricted strings: "
                f"{', '.join(GCP_PROJECT_RESTRICTED)}); allowed: a project id without them"
            )


def listed_stack_problems(landing: LandingStack, workloads: Mapping[str, Any]) -> list[Problem]:
    """Names the landing stack and a workload stack it lists would both create where the API keeps them unique: the
    cloud's own check (`LANDING_LISTED_STACK_CHECKS`, "module:function"), none for a cloud without one."""
    from accelstack.spec.landing import LANDING_LISTED_STACK_CHECKS

    check = LANDING_LISTED_STACK_CHECKS.get(landing.cloud)
    if check is None:
        return []
    module, _, name = check.partition(":")
    problems: list[Problem] = getattr(importlib.import_module(module), name)(landing, workloads)
    return problems
