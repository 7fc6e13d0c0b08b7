"""The concept table names real type tokens: each is a resource class of the installed pulumi-aws SDK,
and every alias the SDK declares for a tabled resource sits in the same concept."""

from __future__ import annotations

import re
from pathlib import Path

import pulumi_aws

from accelstack.policies import concepts

TOKEN = re.compile(r"super\(\w+, __self__\)\.__init__\(\s*'(aws:[^']+)'")
ALIAS = re.compile(r'Alias\(type_="(aws:[^"]+)"\)')


def sdk() -> tuple[set[str], dict[str, str]]:
    """Every resource type token of the installed SDK, and alias token -> current token."""
    tokens: set[str] = set()
    aliases: dict[str, str] = {}
    for path in Path(pulumi_aws.__file__).parent.rglob("*.py"):
        text = path.read_text()
        for match in TOKEN.finditer(text):
            tokens.add(match.group(1))
            aliases.update({alias: match.group(1) for alias in ALIAS.findall(text)})
    return tokens, aliases


def test_every_tabled_token_is_a_resource_of_the_installed_sdk() -> None:
    tokens, aliases = sdk()
    assert len(tokens) > 1000
    unknown = [t for ts in concepts.AWS.values() for t in ts if t not in tokens and t not in aliases]
    assert unknown == []


def test_sdk_aliases_share_their_resources_concept() -> None:
    _, aliases = sdk()
    split = {
        alias: current
        for alias, current in aliases.items()
        if concepts.concept_of(current) and concepts.concept_of(alias) != concepts.concept_of(current)
    }
    assert split == {}


def test_the_shipped_stacks_use_only_tabled_kinds() -> None:
    """Checked end to end by test_policy_real_mutations' no-verdict test; here the table's own shape."""
    seen = [t for ts in concepts.AWS.values() for t in ts]
    assert len(seen) == len(set(seen)), "a token sits in two concepts"
    assert set(concepts.STATEFUL) <= set(concepts.AWS)
