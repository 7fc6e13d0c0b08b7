"""Every Azure resource's inputs reach ARM in the provider's camelCase. The Python SDK leaves a plain dict's keys in
snake_case where an input is a union it cannot reduce (MetricAlert.criteria; pulumi/pulumi#21830), and the provider
then reads nothing from them: the resource is created empty or refused. Free-form documents (an Azure ML component
spec, tags) keep the keys their own schema names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from cloud_stacks import Variant, cloud_stacks, preview, stack_id, variant_cases

SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+$")
# (type token, input path) whose value is a document in another schema, passed through as written.
FREE_FORM = {
    ("azure-native:machinelearningservices:ComponentVersion", ".properties.componentSpec"),
}
CASES: list[Path | Variant] = [case for cloud, case in [*cloud_stacks(), *variant_cases()] if cloud == "azure"]


def snake_keys(type_token: str, node: Any, path: str = "") -> list[str]:
    if (type_token, path) in FREE_FORM or path.endswith(".tags"):
        return []
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if SNAKE.match(key):
                found.append(f"{path}.{key}")
            found += snake_keys(type_token, value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += snake_keys(type_token, value, f"{path}[{index}]")
    return found


@pytest.mark.parametrize("case", CASES, ids=[stack_id(c) for c in CASES])
def test_no_snake_case_key_reaches_an_azure_resource(case: Path | Variant) -> None:
    found = [
        f"{r.urn.split('::')[-1]} ({r.type}): {key}"
        for r in preview(case).resources
        if r.type.startswith("azure-native:")
        for key in snake_keys(r.type, r.inputs)
    ]
    assert found == []


def test_the_check_sees_a_plain_dict_left_in_snake_case() -> None:
    criteria = {"criteria": {"odata_type": "x", "all_of": [{"metric_name": "ActiveMessages"}]}}
    assert snake_keys("azure-native:monitor:MetricAlert", criteria) == [
        ".criteria.odata_type",
        ".criteria.all_of",
        ".criteria.all_of[0].metric_name",
    ]
    assert snake_keys("azure-native:resources:ResourceGroup", {"tags": {"cost_center": "x"}}) == []
