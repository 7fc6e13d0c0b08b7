"""The concept tables name real type tokens: each is a resource class (or an alias one declares) of
the installed pulumi-aws, pulumi-azure-native and pulumi-gcp SDKs, and every alias the SDK declares for
a tabled resource sits in the same concept."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pulumi_aws
import pulumi_azure_native
import pulumi_gcp
import pytest

from accelstack.policies import concepts

TOKEN = re.compile(r"super\(\w+, __self__\)\.__init__\(\s*'([a-z-]+:[^']+)'")
ALIAS = re.compile(r'Alias\(type_="([a-z-]+:[^"]+)"\)')
SDKS: dict[str, ModuleType] = {"aws": pulumi_aws, "azure-native": pulumi_azure_native, "gcp": pulumi_gcp}


@cache
def sdk(cloud: str) -> tuple[frozenset[str], dict[str, str]]:
    """Every resource type token of the installed SDK, and alias token -> current token. For
    azure-native only the default modules are read (the API-version modules are `canonical` twins)."""
    tokens: set[str] = set()
    aliases: dict[str, str] = {}
    root = Path(SDKS[cloud].__file__).parent
    for path in root.rglob("*.py"):
        if cloud == "azure-native" and re.search(r"/v\d{8}", str(path.relative_to(root))):
            continue
        text = path.read_text()
        for match in TOKEN.finditer(text):
            tokens.add(match.group(1))
            aliases.update({alias: match.group(1) for alias in ALIAS.findall(text)})
    return frozenset(tokens), aliases


@pytest.mark.parametrize("cloud", sorted(SDKS))
def test_every_tabled_token_is_a_resource_of_the_installed_sdk(cloud: str) -> None:
    tokens, aliases = sdk(cloud)
    assert len(tokens) > 500
    unknown = [t for ts in concepts.TABLES[cloud].values() for t in ts if t not in tokens and t not in aliases]
    assert unknown == []


@pytest.mark.parametrize("cloud", sorted(SDKS))
def test_sdk_aliases_share_their_resources_concept(cloud: str) -> None:
    _, aliases = sdk(cloud)
    split = {
        alias: current
        for alias, current in aliases.items()
        if concepts.concept_of(current) and concepts.concept_of(alias) != concepts.concept_of(current)
    }
    assert split == {}


def test_api_version_modules_are_the_same_kind() -> None:
    assert concepts.concept_of("azure-native:storage/v20240101:StorageAccount") == "storage-account"
    assert concepts.concept_of("azure-native:network/v20230201preview:Subnet") == "network"
    assert concepts.cloud_of("azure-native:compute/v20241101:VirtualMachineScaleSet") == "azure-native"
    assert concepts.concept_of("azure-native:storage:StorageAccountV2") is None


def test_every_dynamic_resource_spelling_is_the_dynamic_kind() -> None:
    """`pulumi.dynamic.Resource` subclasses name their type `dynamic[/<module>]:<name>`."""
    import pulumi.dynamic

    class Import(pulumi.dynamic.Resource, module="lustre", name="Import"):
        pass

    token = f"pulumi-python:{Import._resource_type_name}"
    assert token == "pulumi-python:dynamic/lustre:Import"
    assert concepts.concept_of(token) == "dynamic-operation"
    assert concepts.concept_of("pulumi-python:dynamic:Resource") == "dynamic-operation"
    assert concepts.concept_of("pulumi-python:other:Resource") is None


def test_the_tables_are_well_formed() -> None:
    """No token sits in two concepts; every stateful concept exists somewhere; each cloud's stateful
    storage has a row (a missing row would let a stack skip `protect`)."""
    seen = [t for table in concepts.TABLES.values() for ts in table.values() for t in ts]
    assert len(seen) == len(set(seen)), "a token sits in two concepts"
    assert set(concepts.STATEFUL) <= {c for table in concepts.TABLES.values() for c in table}
    for cloud in ("aws", "azure-native", "gcp"):
        assert {"bucket", "parallel-file-system", "volume", "key"} <= set(concepts.TABLES[cloud]), cloud


def test_one_clouds_tokens_never_leak_into_anothers_rules() -> None:
    assert concepts.tokens("bucket") == concepts.AWS["bucket"]
    assert concepts.tokens("bucket", cloud="gcp") == ("gcp:storage/bucket:Bucket",)
    assert concepts.is_a("gcp:storage/bucket:Bucket", "bucket")
    assert concepts.is_a("azure-native:storage:BlobContainer", "bucket")
