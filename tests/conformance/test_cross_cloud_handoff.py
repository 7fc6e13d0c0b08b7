"""Issue 31: a serving stack on each cloud reads the weights a training stack published on each other cloud (six
pairs, mocks). Each pair validates; the serving stack declares, through a provider pinned to the TRAINING account,
a reader there that trusts exactly its replicas' identity and reads only the artifact prefix; its replicas' boot
carries the fetch with the federated credential; and the fetch itself runs (tests/boot style, with the clouds'
CLIs as stubs that record what they were asked and with which credential)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from accelstack.components.handoff import ReaderValues
from accelstack.components.handoff.fetch import fetch_script
from accelstack.engine.capture import Capture, capture, config_for_pulumi
from accelstack.spec.handoff import artifact_handoff
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from tests.stack_edits import MAIN, STACKS

TRAINING = {
    "aws": ("aws:111111111111", "us-east-1", "s3://acme-train-checkpoints/models/llama-3.1-8b/"),
    "gcp": ("gcp:acme-train", None, "gs://acme-train-checkpoints/models/llama-3.1-8b/"),
    "azure": (
        "azure:3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c",
        "eastus",
        "https://acmetrainckpts.blob.core.windows.net/checkpoints/models/llama-3.1-8b",
    ),
}
FEDERATED = [(training, serving) for serving in ("aws", "azure", "gcp") for training in TRAINING if training != serving]
# Train where the RDMA fabric is, serve where steady inference is cheap: OCI's bucket read from Vultr through PARs.
OCI_TENANCY = "ocid1.tenancy.oc1..aaaaaaaaacmetenancy"
TRAINING["oci"] = (
    "oci:ocid1.compartment.oc1..aaaaaaaaacmetrain",
    "us-ashburn-1",
    "oci://acme-train-checkpoints@acmetenancy/models/llama-3.1-8b/",
)
# Vultr replicas have no identity: from Google Cloud each reads with an access token of its own (issue 31).
PAIRS = [*FEDERATED, ("oci", "vultr"), ("gcp", "vultr"), ("aws", "vultr")]
# The principal an AWS -> Vultr deploy runs as (serving.artifactDeployer): an IAM Identity Center role, with its path.
DEPLOYER = "arn:aws:iam::111111111111:role/aws-reserved/sso.amazonaws.com/us-east-1/AWSReservedSSO_AcmeDeploy_0123abcd"


def overrides(training: str, serving: str = "") -> list[str]:
    account, region, uri = TRAINING[training]
    if (training, serving) == ("aws", "vultr"):  # s3:// is Vultr's own store there: AWS is named by its S3 URL
        uri = "https://acme-train-checkpoints.s3.us-east-1.amazonaws.com/models/llama-3.1-8b/"
    extra = []
    if training == "oci":  # the reader's provider signs for the training tenancy; Vultr's own key is not fetched
        extra = [f"serving.artifactTenancy={OCI_TENANCY}", "account.weightsKey=null"]
    elif serving == "vultr":  # a credential per replica: Vultr's own key is not fetched
        extra = ["account.weightsKey=null"] + ([f"serving.artifactDeployer={DEPLOYER}"] if training == "aws" else [])
    return [
        f'separation.trainingAccounts=["{account}"]',
        f'serving.artifactAccount="{account}"',
        f"serving.artifactRegion={region or 'null'}",
        f"serving.model.weightsUri={uri}",
        "serving.model.adapters=[]",  # adapters come from the same store: the shipped ones are on S3
        *extra,
    ]


def pair_config(training: str, serving: str) -> dict:
    return apply_overrides(read_stack_file(STACKS / f"Pulumi.{serving}-serving.yaml"), overrides(training, serving))


_CAPTURES: dict[tuple[str, str], Capture] = {}


def pair_capture(training: str, serving: str) -> Capture:
    if (training, serving) not in _CAPTURES:
        config = config_for_pulumi(pair_config(training, serving))
        _CAPTURES[(training, serving)] = capture(
            MAIN, config, stack=f"{serving}-serving", preview=False
        )  # as `up` runs: ids resolved
    return _CAPTURES[(training, serving)]


@pytest.mark.parametrize(("training", "serving"), PAIRS)
def test_pair_validates_and_resolves_a_handoff(training, serving):
    spec = parse_spec(pair_config(training, serving))
    handoff = artifact_handoff(spec)
    assert handoff is not None and (handoff.training_cloud, handoff.serving_cloud) == (training, serving)
    assert handoff.location.prefix == "models/llama-3.1-8b/"


@pytest.mark.parametrize(("training", "serving"), PAIRS)
def test_reader_lives_in_the_training_account_and_trusts_the_replicas_only(training, serving):
    cap = pair_capture(training, serving)
    account = TRAINING[training][0].split(":", 1)[1]
    providers = [
        r
        for r in cap.resources
        if r.type
        == f"pulumi:providers:{ {'gcp': 'gcp', 'aws': 'aws', 'azure': 'azure-native', 'oci': 'oci'}[training] }"
        and "artifacts" in r.name
    ]
    assert len(providers) == 1
    pin = providers[0].inputs
    if training == "oci":
        # An oci provider signs for a tenancy: the training one, in the store's region; the PARs name no compartment.
        assert (pin["tenancyOcid"], pin["region"]) == (OCI_TENANCY, "us-ashburn-1"), pin
        pars = cap.by_type("oci:ObjectStorage/preauthrequest:Preauthrequest")
        clocks = {c.name: c.outputs["rfc3339"] for c in cap.by_type("time:index/static:Static")}
        assert len(pars) == len(cap.by_type("vultr:index/instance:Instance")) == 2
        for par in pars:
            assert par.provider.split("::")[-2].endswith("artifacts-oci"), par.provider  # the pinned provider
            assert any("key-clock" in urn for urn in par.property_dependencies["timeExpires"])
            inputs = par.inputs
            assert inputs["accessType"] == "AnyObjectRead" and inputs["bucketListingAction"] == "ListObjects"
            assert (inputs["bucket"], inputs["namespace"], inputs["objectName"]) == (
                "acme-train-checkpoints",
                "acmetenancy",
                "models/llama-3.1-8b/",
            )
            clock = clocks[par.name.replace("-weights-par", "-key-clock")]
            assert inputs["timeExpires"] == "2026-12-05T14:00:00Z" and clock == "2026-12-05T12:00:00Z"
        return
    assert account in json.dumps(pin), pin
    if (training, serving) == ("gcp", "vultr"):
        # No identity to trust: a keyless reader service account, its conditioned grant, and a token per replica.
        reader = cap.one("gcp:serviceaccount/account:Account")
        email = f"{reader.inputs['accountId']}@acme-train.iam.gserviceaccount.com"
        grant = cap.one("gcp:storage/bucketIAMMember:BucketIAMMember")
        assert (grant.inputs["role"], grant.inputs["member"]) == (
            "roles/storage.objectViewer",
            f"serviceAccount:{email}",
        )
        assert "objects/models/llama-3.1-8b/" in grant.inputs["condition"]["expression"]
        assert not cap.by_type("gcp:serviceaccount/key:Key")
        for resource in (reader, grant):
            assert resource.provider.split("::")[-2].endswith("artifacts-gcp"), resource.provider
        tokens = [r for r in cap.resources if r.type == "pulumi-python:dynamic/handoff:GcpAccessToken"]
        assert len(tokens) == len(cap.by_type("vultr:index/instance:Instance")) == 2
        for token in tokens:
            assert token.inputs["service_account"] == email
            assert token.inputs["scope"] == "https://www.googleapis.com/auth/devstorage.read_only"
            assert token.inputs["lifetime_seconds"] == 3600
            assert any("key-clock" in urn for urn in token.property_dependencies["clock"])
        return
    if (training, serving) == ("aws", "vultr"):
        # No identity to trust: a reader role the deployer alone assumes, and one STS session of it per replica.
        role = cap.one("aws:iam/role:Role")
        [trust] = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
        assert (trust["Action"], trust["Principal"]) == ("sts:AssumeRole", {"AWS": "arn:aws:iam::111111111111:root"})
        assert trust["Condition"] == {"ArnEquals": {"aws:PrincipalArn": DEPLOYER}}
        assert role.inputs["maxSessionDuration"] == 3600
        policy = cap.one("aws:iam/rolePolicy:RolePolicy").inputs["policy"]
        assert json.loads(policy)["Statement"][0]["Resource"] == [
            "arn:aws:s3:::acme-train-checkpoints/models/llama-3.1-8b/*"
        ]
        for resource in (role, cap.one("aws:iam/rolePolicy:RolePolicy")):
            assert resource.provider.split("::")[-2].endswith("artifacts-aws"), resource.provider
        sessions = [r for r in cap.resources if r.type == "pulumi-python:dynamic/handoff:AwsSession"]
        assert len(sessions) == len(cap.by_type("vultr:index/instance:Instance")) == 2
        names = set()
        for session in sessions:
            inputs = session.inputs
            assert inputs["role_arn"] == f"arn:aws:iam::111111111111:role/{role.inputs['name']}"
            assert (inputs["policy"], inputs["duration_seconds"], inputs["region"]) == (policy, 3600, "us-east-1")
            assert any("key-clock" in urn for urn in session.property_dependencies["clock"])
            names.add(inputs["session_name"])
        assert len(names) == 2  # each replica's session says which replica it is (CloudTrail)
        return
    if training == "aws":
        role = next(r for r in cap.by_type("aws:iam/role:Role") if r.name.endswith("artifact-reader"))
        trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
        assert len(trust) == 1 and trust[0]["Action"] == "sts:AssumeRoleWithWebIdentity"
        assert "*" not in json.dumps(trust[0]["Condition"]) and trust[0]["Condition"]["StringEquals"]
        policy = json.loads(
            next(r for r in cap.by_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("artifact-read")).inputs[
                "policy"
            ]
        )
        actions = (
            {a for s in policy["Statement"] for a in s["Action"]}
            if False
            else {
                a for s in policy["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
            }
        )
        assert actions == {"s3:GetObject", "s3:ListBucket", "kms:Decrypt"}
        assert policy["Statement"][0]["Resource"] == ["arn:aws:s3:::acme-train-checkpoints/models/llama-3.1-8b/*"]
    elif training == "gcp":
        assert cap.by_type("gcp:iam/workloadIdentityPool:WorkloadIdentityPool")
        provider = cap.one("gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider")
        assert ("aws" in provider.inputs) == (serving == "aws")
        assert "==" in provider.inputs["attributeCondition"]  # one subject, never any identity of the pool
        grant = cap.one("gcp:storage/bucketIAMMember:BucketIAMMember")
        assert grant.inputs["role"] == "roles/storage.objectViewer"
        assert "objects/models/llama-3.1-8b/" in grant.inputs["condition"]["expression"]
    else:
        credential = cap.one("azure-native:managedidentity:FederatedIdentityCredential")
        assert credential.inputs["audiences"] == ["api://AzureADTokenExchange"]
        assert credential.inputs.get("subject") not in (None, "", "*")
        assignment = next(
            r for r in cap.by_type("azure-native:authorization:RoleAssignment") if r.name.endswith("artifact-read")
        )
        assert "StringStartsWith 'models/llama-3.1-8b/'" in assignment.inputs["condition"]
        assert "'acmetrainckpts'" in assignment.inputs["condition"]


STUB = """#!/bin/bash
{ printf '%s' "$(basename "$0")"; printf ' %s' "$@"; printf ' | token=%s cred=%s role=%s client=%s\\n' \
  "${AWS_WEB_IDENTITY_TOKEN_FILE:-${AZURE_FEDERATED_TOKEN_FILE:-}}" "${CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE:-}" \
  "${AWS_ROLE_ARN:-}" "${AZURE_CLIENT_ID:-}"; } >> "$CALLS"
case "$(basename "$0")" in
  curl) case "$*" in *169.254.169.254*) echo '{"access_token": "entra-jwt"}';; *) echo google-jwt;; esac;;
  aws) case "$*" in *get-web-identity-token*) echo aws-jwt;; esac;;
esac
"""


@pytest.mark.parametrize(("training", "serving"), FEDERATED)
def test_the_replica_fetch_runs_with_the_federated_credential(training, serving, tmp_path: Path):
    """The prepare step's fetch, as the replica runs it, with each CLI a stub (the tool is there: no install)."""
    handoff = artifact_handoff(parse_spec(pair_config(training, serving)))
    assert handoff is not None
    values = ReaderValues(
        token_audience="api://AzureADTokenExchange"
        if training == "azure" or serving == "azure"
        else "sts.amazonaws.com",
        role_arn="arn:aws:iam::111111111111:role/reader",
        provider_audience="//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q",
        client_id="11111111-1111-1111-1111-111111111111",
        tenant_id="22222222-2222-2222-2222-222222222222",
        serving_client_id="33333333-3333-3333-3333-333333333333",
    )
    run = tmp_path / "run"
    lines = fetch_script(
        handoff, values, [(handoff.location.cloud and handoff_uri(training), str(tmp_path / "models/base"))]
    )
    script = "set -euo pipefail\n" + "\n".join(lines).replace("/run/accelstack", str(run)) + "\n"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("curl", "aws", "gcloud", "azcopy"):
        (bin_dir / tool).write_text(STUB)
        (bin_dir / tool).chmod(0o755)
    calls = tmp_path / "calls"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "CALLS": str(calls), "HOME": str(tmp_path)}
    result = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    recorded = calls.read_text()
    tool = {"aws": "aws s3 sync", "gcp": "gcloud storage rsync", "azure": "azcopy sync"}[training]
    fetch = next(line for line in recorded.splitlines() if line.startswith(tool))
    if training == "gcp":
        credential = json.loads((run / "artifact-credential.json").read_text())
        assert credential["type"] == "external_account" and "private_key" not in json.dumps(credential)
        assert f"cred={run}/artifact-credential.json" in fetch
    else:
        token = (run / "artifact-token").read_text().strip()
        assert token == {"gcp": "google-jwt", "azure": "entra-jwt", "aws": "aws-jwt"}[serving]
        assert oct(os.stat(run / "artifact-token").st_mode & 0o777) == "0o600"
        assert f"token={run}/artifact-token" in fetch
    assert (tmp_path / "models/base").is_dir()


def handoff_uri(training: str) -> str:
    return TRAINING[training][2]


# --- Azure weights read from another cloud: the checkpoint account's firewall admits the serving NAT's addresses ---

AZURE_READERS = ["aws", "gcp"]
SERVING_ACCOUNT = {"aws": "aws:222222222222", "gcp": "gcp:acme-serve"}


@pytest.mark.parametrize("serving", AZURE_READERS)
def test_a_serving_stack_reading_azure_weights_exports_its_stable_nat_addresses(serving):
    """Its replicas reach the Blob endpoint from the internet through NAT: the stack exports the NAT's addresses
    (egressAddresses) for training.artifactReaderAddresses, and they are addresses that stay (Elastic IPs; on
    Google Cloud reserved addresses, MANUAL_ONLY, instead of AUTO_ONLY ones Google may change)."""
    from accelstack.components.gcp.serving.network import FETCH_PORTS_PER_REPLICA, egress_address_count
    from accelstack.components.gcp.serving.replicas import REGIONAL_GROUP_ZONES

    cap = pair_capture("azure", serving)
    exported = cap.stack_outputs["egressAddresses"]
    if serving == "aws":
        eips = cap.by_type("aws:ec2/eip:Eip")
        gateways = cap.by_type("aws:ec2/natGateway:NatGateway")
        assert len(exported) == len(eips) == len(gateways) == 2  # one NAT gateway per zone, each its Elastic IP
        return
    nat = cap.one("gcp:compute/routerNat:RouterNat").inputs
    addresses = cap.by_type("gcp:compute/address:Address")
    spec = parse_spec(pair_config("azure", "gcp"))
    assert len(addresses) == egress_address_count(spec.serving, REGIONAL_GROUP_ZONES) >= 1
    assert all(a.inputs["addressType"] == "EXTERNAL" and a.inputs["region"] == "us-central1" for a in addresses)
    assert nat["natIpAllocateOption"] == "MANUAL_ONLY" and len(nat["natIps"]) == len(addresses)
    assert nat["minPortsPerVm"] == FETCH_PORTS_PER_REPLICA
    assert exported == [a.outputs["address"] for a in addresses]


@pytest.mark.parametrize(("training", "serving"), [("aws", "gcp"), ("gcp", "aws"), ("aws", "azure")])
def test_a_store_that_admits_by_grant_alone_leaves_the_nat_as_it_was(training, serving):
    cap = pair_capture(training, serving)
    assert "egressAddresses" not in cap.stack_outputs
    if serving == "gcp":
        assert cap.one("gcp:compute/routerNat:RouterNat").inputs["natIpAllocateOption"] == "AUTO_ONLY"
        assert not cap.by_type("gcp:compute/address:Address")


def azure_training_admitting(*serving: str) -> list[str]:
    accounts = ["7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098", *(SERVING_ACCOUNT[s] for s in serving)]
    return [
        "separation.servingAccounts=[" + ", ".join(f'"{a}"' for a in accounts) + "]",
        'training.artifactReaderAddresses=["52.1.2.3", "52.4.5.6", "34.118.0.10"]',  # the serving stacks' outputs
    ]


def test_the_azure_training_side_admits_the_other_clouds_and_previews_with_no_violation():
    """The training half of Azure -> AWS and Azure -> GCP: the serving accounts of the other clouds, their NATs'
    addresses admitted by the checkpoint account's firewall; validate is quiet about them and both packs pass."""
    from accelstack.engine.policy_runner import policy_verdicts
    from accelstack.engine.preview import preview_stack
    from accelstack.spec.loader import spec_warnings

    edits = azure_training_admitting(*AZURE_READERS)
    spec = parse_spec(apply_overrides(read_stack_file(STACKS / "Pulumi.azure-training.yaml"), edits))
    assert [w for w in spec_warnings(spec) if "artifactReader" in w.message] == []
    preview = preview_stack(STACKS / "Pulumi.azure-training.yaml", edits, MAIN.parent)
    accounts = [
        r for r in preview.capture.by_type("azure-native:storage:StorageAccount") if r.name.endswith("checkpoints")
    ]
    assert [rule["iPAddressOrRange"] for rule in accounts[0].inputs["networkRuleSet"]["ipRules"]] == [
        "52.1.2.3",
        "52.4.5.6",
        "34.118.0.10",
    ]
    assert [v.line() for v in policy_verdicts(preview.export, preview.spec)] == []


def test_az_scheme_names_the_same_blob_store():
    config = pair_config("azure", "gcp")
    config["serving"]["model"]["weightsUri"] = "az://acmetrainckpts/checkpoints/models/llama-3.1-8b/"
    handoff = artifact_handoff(parse_spec(config))
    assert handoff is not None
    assert handoff.location.blob_url == "https://acmetrainckpts.blob.core.windows.net/checkpoints/models/llama-3.1-8b/"


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        ({"artifactAccount": "acme-serve-other"}, "serving.artifactAccount"),  # not the weights' cloud
        ({"artifactRegion": None}, "serving.artifactRegion"),  # S3 needs the store's region
    ],
)
def test_a_pair_that_does_not_match_is_refused_at_its_key(edit, path):
    from accelstack.spec.problems import SpecError

    config = pair_config("aws", "gcp")
    config["serving"].update(edit)
    with pytest.raises(SpecError) as raised:
        parse_spec(config)
    assert path in str(raised.value)
