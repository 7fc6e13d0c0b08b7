"""A user unit-tests their own stack with Pulumi mocks: `accelstack.testing.mocks(cloud)` answers every lookup
the components make, the example test of docs/testing-your-stacks.md passes as written, and the components expose what it asserts on."""

from __future__ import annotations

import ast
import dataclasses
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pytest
from markdown_it import MarkdownIt
from pulumi.runtime.sync_await import _sync_await

from accelstack import testing
from accelstack.clouds import registry
from accelstack.clouds.aws import AWS
from accelstack.components import build_stack
from accelstack.components.aws.batch import BatchScheduler
from accelstack.components.aws.scheduler import SlurmCluster
from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.examples import example_files
from accelstack.spec import load_stack, parse_spec
from accelstack.spec.loader import apply_overrides, read_stack_file

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "testing-your-stacks.md"  # the README links it
STACKS = REPO / "stacks"
SECTION = "Test your own stack"


def page_section_fences(title: str) -> dict[str, str]:
    """The code blocks under the page's heading `title` (until the next heading of the same level), by language."""
    tokens = MarkdownIt("commonmark").parse(PAGE.read_text())
    fences: dict[str, str] = {}
    level = None
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            if level is not None and int(token.tag[1]) <= level:
                break
            if tokens[index + 1].content == title:
                level = int(token.tag[1])
        elif level is not None and token.type == "fence":
            fences.setdefault(token.info.strip(), token.content)
    assert level is not None, f"{PAGE.name} has no section {title!r}"
    return fences


def run_pytest_in(project: Path, test_file: str) -> subprocess.CompletedProcess[str]:
    """pytest in a user's own project folder (outside this repository), with the installed accelstack."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST", "PYTHONPATH"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-rA", test_file],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_docs_example_test_passes_in_a_project_of_its_own(tmp_path: Path) -> None:
    fences = page_section_fences(SECTION)
    example, pytest_config = fences["python"], fences["toml"]
    test_file = example.splitlines()[0].removeprefix("# ").strip()
    assert test_file == "tests/test_my_stacks.py", "the example's first line names the file it lives in"
    (tmp_path / "tests").mkdir()
    (tmp_path / test_file).write_text(example)
    (tmp_path / "pyproject.toml").write_text(pytest_config)
    (tmp_path / "stacks").mkdir()
    shutil.copy(STACKS / "Pulumi.aws-serving.yaml", tmp_path / "stacks")

    result = run_pytest_in(tmp_path, test_file)

    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-6000:]
    assert "6 passed" in report, report[-3000:]
    assert "warning" not in report.lower(), "the page's pytest config must silence pulumi_aws's deprecations"


# The recipe from Pulumi's unit-testing guide, as a user would write it for their own training stack: their own
# Mocks class, or accelstack's. With Pulumi's plain mocks the zone lookup answers nothing and the build crashes
# in the network component; with accelstack.testing.mocks the same test passes.
PULUMI_RECIPE = """
import pulumi
import pytest

from accelstack import testing
from accelstack.components import build_stack
from accelstack.spec import load_stack


class PlainMocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return [args.name + "_id", args.inputs]

    def call(self, args):
        return {}


@pytest.mark.parametrize("mocks", ["plain", "accelstack"])
@pulumi.runtime.test
def test_training_cluster_builds(mocks):
    spec = load_stack(STACK_FILE)
    chosen = PlainMocks() if mocks == "plain" else testing.mocks(spec.cloud, account=spec.account)
    pulumi.runtime.set_mocks(chosen, preview=False)
    cluster = build_stack(spec)

    def check(values):
        assert values == ["PERSISTENT_2", "cluster", 32]

    return pulumi.Output.all(
        cluster.file_system.deployment_type, cluster.placement_group.strategy, cluster.outputs["fabricInterfacesPerNode"]
    ).apply(check)
"""


def test_pulumis_documented_recipe_works_with_accelstack_mocks_where_plain_mocks_crash(tmp_path: Path) -> None:
    stack_file = STACKS / "Pulumi.aws-training.yaml"
    (tmp_path / "test_recipe.py").write_text(
        f"from pathlib import Path\n\nSTACK_FILE = Path({str(stack_file)!r})\n" + textwrap.dedent(PULUMI_RECIPE)
    )

    result = run_pytest_in(tmp_path, "test_recipe.py")

    report = result.stdout + result.stderr
    assert "PASSED test_recipe.py::test_training_cluster_builds[accelstack]" in report, report[-6000:]
    # The crash the plain recipe hits (and accelstack's mocks fix): the zones lookup answered nothing.
    assert "FAILED test_recipe.py::test_training_cluster_builds[plain]" in report, report[-6000:]
    assert "components/aws/network.py" in report and "'NoneType' object is not iterable" in report, report[-6000:]


# --- the neutral lookup: a cloud's mocks come from its registry entry ---------------------------------------------


def test_mocks_answer_as_the_stacks_account_and_region() -> None:
    mocks = testing.mocks("aws", account={"id": "222222222222", "region": "eu-north-1"})
    identity, _ = mocks.call(pulumi.runtime.MockCallArgs("aws:index/getCallerIdentity:getCallerIdentity", {}, ""))
    zones, _ = mocks.call(pulumi.runtime.MockCallArgs("aws:index/getAvailabilityZones:getAvailabilityZones", {}, ""))
    assert identity["accountId"] == "222222222222"
    assert zones["names"] == ["eu-north-1a", "eu-north-1b", "eu-north-1c"]


@pytest.mark.parametrize("stack_file", example_files(STACKS), ids=lambda p: p.stem)
def test_the_engine_and_a_users_test_get_the_same_answers(stack_file: Path) -> None:
    raw = read_stack_file(stack_file)
    engine = testing.mocks_for_config(config_for_pulumi(raw))
    user = testing.mocks(raw["cloud"], account=load_stack(stack_file).account)
    assert type(engine) is type(user)
    for token in (
        "aws:index/getCallerIdentity:getCallerIdentity",
        "aws:index/getAvailabilityZones:getAvailabilityZones",
    ):
        args = pulumi.runtime.MockCallArgs(token, {}, "")
        assert engine.call(args) == user.call(args)


def test_an_unknown_cloud_is_refused_naming_the_registered_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown cloud 'nimbus'; registered: .*aws"):
        testing.mocks("nimbus")


def test_a_cloud_without_components_has_no_mocks_and_says_which_clouds_do() -> None:
    with (
        registry.registered(dataclasses.replace(AWS, name="paper", components=None)),
        pytest.raises(ValueError, match=r"'paper' has no components to test yet; clouds with components: aws"),
    ):
        testing.mocks("paper")


def test_a_plug_in_clouds_mocks_are_found_through_its_registry_entry(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "nimbus_components"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mocks.py").write_text(
        textwrap.dedent(
            """
            import pulumi

            class NimbusMocks(pulumi.runtime.Mocks):
                def __init__(self, account):
                    self.account = account

                def new_resource(self, args):
                    return args.name, dict(args.inputs)

                def call(self, args):
                    return {"project": self.account["project"]}, []

            def mocks(account):
                return NimbusMocks(account)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with registry.registered(dataclasses.replace(AWS, name="nimbus", components="nimbus_components")):
        mocks = testing.mocks("nimbus", account={"project": "acme-ml"})
        assert type(mocks).__name__ == "NimbusMocks"
        assert mocks.call(pulumi.runtime.MockCallArgs("nimbus:getProject", {}, ""))[0] == {"project": "acme-ml"}
        # The engine's preview takes the same route from a stack's config.
        config = config_for_pulumi({"cloud": "nimbus", "account": {"project": "acme-ml"}})
        assert type(testing.mocks_for_config(config)).__name__ == "NimbusMocks"


def test_a_cloud_that_ships_no_mocks_module_is_named(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "bare_components").mkdir()
    (tmp_path / "bare_components" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with (
        registry.registered(dataclasses.replace(AWS, name="bare", components="bare_components")),
        pytest.raises(ValueError, match=r"cloud 'bare' ships no mocks: bare_components.mocks does not exist"),
    ):
        testing.mocks("bare")


def cloud_modules_imported_by(path: Path) -> list[str]:
    """Imports of any registered cloud's own modules or Pulumi SDK packages in one source file."""
    clouds = registry.clouds().values()
    prefixes = [f"accelstack.{layer}.{cloud.name}" for cloud in clouds for layer in ("components", "clouds")]
    prefixes += [f"pulumi_{package}" for cloud in clouds for package in cloud.pulumi_packages]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        found += [n for n in names if any(n == p or n.startswith(p + ".") for p in prefixes)]
    return found


def test_the_neutral_mocks_lookup_and_the_engine_import_no_cloud(tmp_path: Path) -> None:
    """Each cloud's answers live in its own folder: accelstack.testing and the engine reach them by registry only."""
    sources = [REPO / "accelstack" / "testing.py", *sorted((REPO / "accelstack" / "engine").rglob("*.py"))]
    assert {str(path.relative_to(REPO)): cloud_modules_imported_by(path) for path in sources} == {
        str(path.relative_to(REPO)): [] for path in sources
    }
    planted = tmp_path / "planted.py"  # the checker must see such an import when there is one
    planted.write_text("def lazy():\n    from accelstack.components.aws.mocks import AwsMocks\n    import pulumi_aws\n")
    assert cloud_modules_imported_by(planted) == [
        "accelstack.components.aws.mocks",
        "accelstack.components.aws.mocks.AwsMocks",
        "pulumi_aws",
    ]


def test_a_stack_naming_no_deployable_cloud_reaches_the_programs_own_refusal() -> None:
    """The engine still runs the program, so the user reads the spec's message, not a mocks error."""
    mocks = testing.mocks_for_config(config_for_pulumi({"cloud": "nimbus", "account": {"id": "1"}}))
    assert mocks.call(pulumi.runtime.MockCallArgs("aws:index/getRegion:getRegion", {}, "")) == ({}, [])


# --- what a test asserts on: the components' attributes -------------------------------------------------------------


def built(stack: str, *overrides: str) -> tuple[pulumi.ComponentResource, Capture]:
    """The stack's workload component, as `build_stack` returns it, and what the build registered."""
    raw = apply_overrides(read_stack_file(STACKS / f"Pulumi.{stack}.yaml"), list(overrides))
    spec = parse_spec(raw, stack)
    components: list[pulumi.ComponentResource] = []
    cap = capture(lambda: components.append(build_stack(spec)), config_for_pulumi(raw), stack=stack)
    return components[0], cap


def urn(resource: pulumi.Resource) -> str:
    return _sync_await(resource.urn.future())


def registered_urn(cap: Capture, type_token: str, name: str) -> str:
    return next(r.urn for r in cap.by_type(type_token) if r.name == name)


def test_a_training_cluster_exposes_its_file_system_placement_group_nodes_and_scheduler() -> None:
    cluster, cap = built("aws-training")
    assert urn(cluster.file_system) == registered_urn(
        cap, "aws:fsx/lustreFileSystem:LustreFileSystem", "aws-training-storage-lustre"
    )
    assert urn(cluster.placement_group) == registered_urn(
        cap, "aws:ec2/placementGroup:PlacementGroup", "aws-training-nodes"
    )
    assert urn(cluster.launch_template) == registered_urn(
        cap, "aws:ec2/launchTemplate:LaunchTemplate", "aws-training-nodes"
    )
    assert urn(cluster.group) == registered_urn(cap, "aws:autoscaling/group:Group", "aws-training-nodes")
    assert isinstance(cluster.scheduler, SlurmCluster)
    assert urn(cluster.scheduler) == registered_urn(cap, "accelstack:aws:SlurmCluster", "aws-training-slurm")


def test_a_cluster_without_lustre_or_placement_says_none() -> None:
    cluster, cap = built("aws-finetune")
    assert cap.by_type("aws:fsx/lustreFileSystem:LustreFileSystem") == [] and cluster.file_system is None
    assert cap.by_type("aws:ec2/placementGroup:PlacementGroup") == [] and cluster.placement_group is None


def test_a_managed_scheduler_runs_the_fleet_so_the_cluster_has_no_launch_template_or_group() -> None:
    cluster, cap = built("aws-training", "training.scheduler.kind=managed")
    assert isinstance(cluster.scheduler, BatchScheduler)
    assert cluster.launch_template is None and cluster.group is None
    assert cap.by_type("aws:autoscaling/group:Group") == []


def test_a_serving_service_exposes_its_queue_edge_replicas_and_scaling_policy() -> None:
    service, cap = built("aws-serving")
    assert service.queue is service.queues["requests"]
    assert urn(service.queue) == registered_urn(cap, "aws:sqs/queue:Queue", "aws-serving-requests")
    assert urn(service.load_balancer) == registered_urn(cap, "aws:lb/loadBalancer:LoadBalancer", "aws-serving-alb")
    assert isinstance(service.web_acl, aws.wafv2.WebAcl)
    assert urn(service.web_acl) == registered_urn(cap, "aws:wafv2/webAcl:WebAcl", "aws-serving-edge")
    assert urn(service.launch_template) == registered_urn(
        cap, "aws:ec2/launchTemplate:LaunchTemplate", "aws-serving-replica"
    )
    policy = next(
        r for r in cap.by_type("aws:autoscaling/policy:Policy") if r.name == "aws-serving-backlog-per-instance"
    )
    assert urn(service.scaling_policy) == policy.urn
    assert policy.inputs["targetTrackingConfiguration"]["targetValue"] == service.plan.backlog_per_instance_target


def test_a_gcp_training_cluster_exposes_the_same_attributes_under_gcp_mocks() -> None:
    """The same attributes on Google Cloud (built with `testing.mocks("gcp")` through `built`): the Managed
    Lustre instance, the workload policy, the instance template with every NIC, the group and Slurm."""
    from accelstack.components.gcp.scheduler import SlurmCluster as GcpSlurm

    cluster, cap = built("gcp-training")
    assert urn(cluster.file_system) == registered_urn(cap, "gcp:lustre/instance:Instance", "gcp-training-lustre")
    assert urn(cluster.placement_group) == registered_urn(
        cap, "gcp:compute/resourcePolicy:ResourcePolicy", "gcp-training-placement"
    )
    assert urn(cluster.launch_template) == registered_urn(
        cap, "gcp:compute/instanceTemplate:InstanceTemplate", "gcp-training-node"
    )
    assert urn(cluster.group) == registered_urn(
        cap, "gcp:compute/instanceGroupManager:InstanceGroupManager", "gcp-training-nodes"
    )
    assert isinstance(cluster.scheduler, GcpSlurm)
    assert cluster.outputs["fabricInterfacesPerNode"] == 8
