"""A policy vendor by plug-in (docs/extending.md): an installed distribution registers its `Vendor` under the
`accelstack.policy_vendors` entry point group and the packs read its concept table and readers beside the built-in
vendors, with no core file edited. Its kinds are known only while it is installed (without it they fail
`known-resource-kinds`), and a plug-in that cannot be used stops the packs with its name, never a silent pass."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from policy_baseline import training_export

from accelstack.engine.policy_runner import PACKS_DIR
from accelstack.policies import vendors
from accelstack.policies.common import make_context
from accelstack.policies.separation import rules as separation
from accelstack.policies.vendor import Vendor

REPO = Path(__file__).resolve().parents[2]
# The packs as the Pulumi CLI and the offline runner import them: from their folder (policies/separation/__main__.py).
if str(PACKS_DIR.parent) not in sys.path:
    sys.path.insert(0, str(PACKS_DIR.parent))
packs_vendor_module = importlib.import_module(f"{PACKS_DIR.name}.vendor")
packs_vendors = importlib.import_module(f"{PACKS_DIR.name}.vendors")
BUCKET = "acme:storage:Bucket"
GROUP = "accelstack.policy_vendors"

# The plug-in's module, as a third party writes it: its own concept table and one reader, built with accelstack's
# Vendor (imported as `accelstack.policies`, while the Pulumi CLI runs the packs as `policies`).
PLUGIN = """
from accelstack.policies.vendor import GuardrailReaders, Vendor


def public_buckets(resource):
    if resource.resource_type == "acme:storage:Bucket" and resource.props.get("publicRead"):
        yield f"acme bucket {resource.name} is public"


VENDOR = Vendor(
    package="acme",
    concepts={"bucket": ("acme:storage:Bucket",)},
    pin_inputs={"acme": "tenancy"},
    guardrails=GuardrailReaders(public_storage=public_buckets),
)
"""


def install(site: Path, module_source: str, value: str = "acme_accelstack:VENDOR") -> Path:
    """A distribution `acme-accelstack` installed into `site` as pip leaves one: its module and its dist-info."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "acme_accelstack.py").write_text(textwrap.dedent(module_source))
    info = site / "acme_accelstack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-accelstack\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\nacme = {value}\n")
    return site


def entry(value: str, name: str = "acme") -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=value, group=GROUP)


def resource(kind: str, name: str = "data", **props: Any) -> Any:
    provider = SimpleNamespace(resource_type="pulumi:providers:acme", props={}, urn="p", name="acme")
    return SimpleNamespace(
        resource_type=kind, name=name, urn=f"urn:pulumi:s::p::{kind}::{name}", props=props, provider=provider
    )


def known_kinds(subject: Any) -> list[str]:
    ctx = make_context({"workload": "training", "trainingAccounts": ["t1"], "servingAccounts": ["s1"]}, [])
    check = next(p for p in separation.POLICIES if p.name == "known-resource-kinds").check
    return list(check(subject, ctx))


def test_an_installed_plugin_is_listed_after_the_built_in_vendors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(install(tmp_path / "site", PLUGIN)))
    monkeypatch.delitem(sys.modules, "acme_accelstack", raising=False)
    found = vendors.listed()
    assert found[: len(vendors.BUILT_IN)] == vendors.BUILT_IN
    assert [v.package for v in found[len(vendors.BUILT_IN) :]] == ["acme"]
    # Unlisted, its kind fails closed; listed as the packs list it at import, the kind is known and its reader runs.
    assert known_kinds(resource(BUCKET)) == [
        f"{BUCKET} data: package acme is not known to the packs (it may act with ambient credentials)"
    ]
    monkeypatch.setattr(vendors, "VENDORS", found)
    assert known_kinds(resource(BUCKET)) == []
    assert known_kinds(resource("acme:storage:Share")) == [
        "acme:storage:Share data: a resource kind the packs do not know; add it to policies/concepts.py with its rules"
    ]
    public = next(p for p in vendors.VENDORS if p.package == "acme").guardrails.public_storage
    assert public is not None and list(public(resource(BUCKET, publicRead=True))) == ["acme bucket data is public"]


def test_a_plugin_built_with_the_other_import_of_the_packs_is_read_as_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the Pulumi CLI the packs are `policies.*` and the plug-in's Vendor is `accelstack.policies`'s: the
    same class imported twice. The packs rebuild it as theirs, readers and all."""
    monkeypatch.syspath_prepend(str(install(tmp_path / "site", PLUGIN)))
    monkeypatch.delitem(sys.modules, "acme_accelstack", raising=False)
    assert packs_vendor_module.Vendor is not Vendor
    acme = packs_vendors.listed()[-1]
    assert isinstance(acme, packs_vendor_module.Vendor)
    assert acme.concepts == {"bucket": (BUCKET,)} and acme.pin_inputs == {"acme": "tenancy"}
    assert acme.packages == frozenset({"acme"})
    assert acme.guardrails.public_storage is not None
    assert list(acme.guardrails.public_storage(resource(BUCKET, publicRead=True))) == ["acme bucket data is public"]


def test_a_plugin_function_builds_its_vendor_with_the_packs_own_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """Readers that build the packs' values (access edges, links) need the packs' own classes: a plug-in whose entry
    point is a function is handed the packs' package, whichever import of it lists the vendors."""
    handed = []

    def vendor(packs: Any) -> Any:
        handed.append(packs.__name__)
        built = sys.modules[f"{packs.__name__}.vendor"]
        return built.Vendor(package="acme", concepts={"bucket": (BUCKET,)}, pin_inputs={"acme": "tenancy"})

    monkeypatch.setitem(sys.modules, "acme_factory", SimpleNamespace(vendor=vendor))
    under_the_cli = packs_vendors.listed(lambda: [entry("acme_factory:vendor")])[-1]
    assert type(under_the_cli) is packs_vendor_module.Vendor and under_the_cli.concepts == {"bucket": (BUCKET,)}
    assert type(vendors.listed(lambda: [entry("acme_factory:vendor")])[-1]) is Vendor
    assert handed == ["policies", "accelstack.policies"]


def test_a_plugin_that_fails_to_import_is_named_with_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(install(tmp_path / "site", "import acme_sdk_not_installed\n")))
    monkeypatch.delitem(sys.modules, "acme_accelstack", raising=False)
    with pytest.raises(vendors.VendorPluginError) as raised:
        vendors.listed()
    assert str(raised.value) == (
        "policy vendor plug-in 'acme' (accelstack.policy_vendors: acme_accelstack:VENDOR, from acme-accelstack 1.0) "
        "failed to load: ModuleNotFoundError: No module named 'acme_sdk_not_installed'"
    )


@pytest.mark.parametrize(
    ("value", "refusal"),
    [
        ("json:__name__", "is a str, not a Vendor (policies/vendor.py)"),
        ("json:dumps", "failed: TypeError: Object of type module is not JSON serializable"),
        ("accelstack.policies.aws:VENDOR", "claims the Pulumi package 'aws', already the 'aws' vendor's"),
    ],
)
def test_a_plugin_that_is_no_vendor_or_claims_a_built_in_package_is_refused(value: str, refusal: str) -> None:
    with pytest.raises(vendors.VendorPluginError) as raised:
        vendors.listed(lambda: [entry(value)])
    assert str(raised.value) == f"policy vendor plug-in 'acme' ({GROUP}: {value}) {refusal}"


def test_a_plugin_cannot_remap_another_vendors_kind_or_claim_a_local_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row naming aws:s3's bucket as something else would make it no longer stateful; `random` makes no cloud
    calls (concepts.LOCAL_PACKAGES)."""
    module = SimpleNamespace(
        REMAP=Vendor(package="acme", concepts={"log": ("aws:s3/bucket:Bucket",)}, pin_inputs={}),
        LOCAL=Vendor(package="random", concepts={}, pin_inputs={}),
    )
    monkeypatch.setitem(sys.modules, "acme_rogue", module)
    with pytest.raises(vendors.VendorPluginError, match=r"concept 'log' lists 'aws:s3/bucket:Bucket'; its tokens"):
        vendors.listed(lambda: [entry("acme_rogue:REMAP")])
    with pytest.raises(vendors.VendorPluginError, match=r"claims the Pulumi package 'random', which is not a cloud's"):
        vendors.listed(lambda: [entry("acme_rogue:LOCAL")])


def test_without_plugins_the_list_is_the_built_in_vendors() -> None:
    assert vendors.listed(lambda: []) == vendors.BUILT_IN
    assert [v.package for v in vendors.BUILT_IN] == ["aws", "azure-native", "gcp", "oci", "vultr"]


# --- end to end: `accelstack policy --file` in a fresh interpreter, where the packs list their vendors at import ---


def acme_export() -> dict[str, Any]:
    """The hand-built AWS training export with an acme provider and one acme bucket."""
    document = training_export()
    resources = document["deployment"]["resources"]
    provider_urn = "urn:pulumi:aws-training::accelstack::pulumi:providers:acme::acme"
    resources.append(
        {"urn": provider_urn, "custom": True, "id": "acme-id", "type": "pulumi:providers:acme", "inputs": {}}
    )
    resources.append(
        {
            "urn": f"urn:pulumi:aws-training::accelstack::{BUCKET}::archive",
            "custom": True,
            "id": "archive",
            "type": BUCKET,
            "inputs": {"publicRead": True},
            "outputs": {},
            "provider": f"{provider_urn}::acme-id",
            "protect": True,
        }
    )
    return document


def run_policy(tmp_path: Path, site: Path | None) -> tuple[int, str, str]:
    export = tmp_path / "export.json"
    export.write_text(json.dumps(acme_export()))
    path = [str(site)] if site else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(REPO)])}
    args = ["policy", "--file", str(export), "--stack-file", str(REPO / "stacks" / "Pulumi.aws-training.yaml")]
    done = subprocess.run(
        [sys.executable, "-m", "accelstack.cli", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    return done.returncode, done.stdout, done.stderr


def test_the_packs_know_a_plugins_kinds_only_while_it_is_installed(tmp_path: Path) -> None:
    urn = f"urn:pulumi:aws-training::accelstack::{BUCKET}::archive"
    code, out, err = run_policy(tmp_path, None)
    assert code == 1, err
    assert (
        f"accelstack-separation/known-resource-kinds [mandatory] {urn}: {BUCKET} archive: package acme is not known"
        in out
    )
    assert "acme bucket archive is public" not in out
    code, out, err = run_policy(tmp_path, install(tmp_path / "site", PLUGIN))
    assert code == 1, err  # its own reader finds the public bucket
    assert "known-resource-kinds" not in out
    assert f"accelstack-guardrails/no-public-buckets [mandatory] {urn}: acme bucket archive is public" in out


def test_the_packs_refuse_to_run_without_a_plugin_that_fails_to_load(tmp_path: Path) -> None:
    code, out, err = run_policy(tmp_path, install(tmp_path / "site", "raise RuntimeError('no licence file')\n"))
    assert code == 2, out
    assert "policy vendor plug-in 'acme'" in err and "RuntimeError: no licence file" in err
    assert "Traceback" not in err
