"""The replica boot's fetch of another cloud's artifacts (accelstack.spec.handoff), with the replica's own platform
token exchanged for a short-lived credential of the training cloud: no key is written anywhere, the token lives in
/run (tmpfs, root only) and is fetched again on every prepare.

The token, by serving cloud: Compute Engine's metadata server issues a Google ID token for an audience
(cloud.google.com/compute/docs/instances/verifying-instance-identity); Azure IMDS a managed identity's token for a
resource (learn.microsoft.com/entra/identity/managed-identities-azure-resources/how-to-use-vm-token); AWS STS a
signed JWT for the instance role (GetWebIdentityToken, outbound identity federation). GCP's external-account
credential reads AWS and Azure instance metadata itself (cloud.google.com/iam/docs/workload-identity-federation-
with-other-clouds, "Create a credential configuration").

Each tool is the training cloud's own CLI, installed by its boot function when the image lacks it.
"""

from __future__ import annotations

import json
import shlex

from accelstack.components.aws.node_platform import AWS_CLI_FUNCTION
from accelstack.components.azure.node_platform import AZCOPY_FUNCTION
from accelstack.components.gcp.node_platform import GCLOUD_FUNCTION
from accelstack.components.handoff import ReaderValues
from accelstack.spec.handoff import ArtifactHandoff, artifact_location

RUN_DIR = "/run/accelstack"
TOKEN_FILE = f"{RUN_DIR}/artifact-token"
CREDENTIAL_FILE = f"{RUN_DIR}/artifact-credential.json"
AZURE_IMDS = "http://169.254.169.254"
AWS_IMDS = "http://169.254.169.254"
GCE_METADATA = "http://metadata.google.internal"


def token_command(serving_cloud: str, values: ReaderValues) -> str:
    """Write the replica's own identity token for `values.token_audience` to TOKEN_FILE (mode 0600)."""
    audience = values.token_audience
    if serving_cloud == "gcp":
        url = (
            f"{GCE_METADATA}/computeMetadata/v1/instance/service-accounts/default/identity"
            f"?audience={audience}&format=full"
        )
        fetch = f"curl -fsS --retry 5 -H 'Metadata-Flavor: Google' {shlex.quote(url)}"
    elif serving_cloud == "azure":
        url = (
            f"{AZURE_IMDS}/metadata/identity/oauth2/token?api-version=2018-02-01"
            f"&resource={audience}&client_id={values.serving_client_id}"
        )
        fetch = (
            f"curl -fsS --retry 5 -H Metadata:true {shlex.quote(url)} "
            "| python3 -c 'import json, sys; print(json.load(sys.stdin)[\"access_token\"])'"
        )
    else:
        fetch = (
            f"aws sts get-web-identity-token --audience {shlex.quote(audience)} --signing-algorithm RS256 "
            "--duration-seconds 3600 --query WebIdentityToken --output text"
        )
    return f"(umask 077 && mkdir -p {RUN_DIR} && {fetch} > {TOKEN_FILE})"


def gcp_credential(serving_cloud: str, values: ReaderValues) -> dict[str, object]:
    """The external-account credential configuration `gcloud` reads (what `gcloud iam workload-identity-pools
    create-cred-config` writes): AWS signs a GetCallerIdentity request with the instance role (IMDSv2); Azure
    reads the managed identity's token from IMDS."""
    base: dict[str, object] = {
        "type": "external_account",
        "audience": values.provider_audience,
        "token_url": "https://sts.googleapis.com/v1/token",
    }
    if serving_cloud == "aws":
        return base | {
            "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
            "credential_source": {
                "environment_id": "aws1",
                "region_url": f"{AWS_IMDS}/latest/meta-data/placement/availability-zone",
                "url": f"{AWS_IMDS}/latest/meta-data/iam/security-credentials",
                "regional_cred_verification_url": "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
                "imdsv2_session_token_url": f"{AWS_IMDS}/latest/api/token",
            },
        }
    return base | {
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "credential_source": {
            "url": (
                f"{AZURE_IMDS}/metadata/identity/oauth2/token?api-version=2018-02-01"
                f"&resource={values.token_audience}&client_id={values.serving_client_id}"
            ),
            "headers": {"Metadata": "True"},
            "format": {"type": "json", "subject_token_field_name": "access_token"},
        },
    }


def fetch_setup(handoff: ArtifactHandoff, values: ReaderValues) -> str:
    """What runs before the fetches: the training cloud's tool, and the credential (a token file, or GCP's
    credential configuration, which holds no secret)."""
    source, serving = handoff.training_cloud, handoff.serving_cloud
    tool = {"aws": AWS_CLI_FUNCTION + "ensure_aws_cli\n", "gcp": GCLOUD_FUNCTION + "ensure_gcloud\n"}.get(
        source, AZCOPY_FUNCTION + "ensure_azcopy\n"
    )
    # An AWS replica's boot installs the AWS CLI itself (ensure_aws_cli), which asks STS for its token.
    if source == "gcp":
        credential = json.dumps(gcp_credential(serving, values), sort_keys=True)
        return (
            tool
            + f"(umask 077 && mkdir -p {RUN_DIR} && printf '%s\\n' {shlex.quote(credential)} > {CREDENTIAL_FILE})\n"
        )
    return tool + token_command(serving, values) + "\n"


def fetch_command(handoff: ArtifactHandoff, values: ReaderValues, uri: str, destination: str) -> str:
    """One artifact prefix onto the replica's disk, new and changed files only, never deleting."""
    source, dst = handoff.training_cloud, shlex.quote(destination)
    if source == "aws":
        return (
            f"mkdir -p {dst} && env AWS_ROLE_ARN={shlex.quote(values.role_arn)} AWS_WEB_IDENTITY_TOKEN_FILE={TOKEN_FILE} "
            f"AWS_ROLE_SESSION_NAME=accelstack-replica aws s3 sync --only-show-errors {shlex.quote(uri)} {dst} "
            f"--region {shlex.quote(handoff.region)}"
        )
    if source == "gcp":
        return (
            f"mkdir -p {dst} && env CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE={CREDENTIAL_FILE} "
            f"gcloud storage rsync --recursive --quiet {shlex.quote(uri)} {dst}"
        )
    location = artifact_location(uri)
    blob_url = location.blob_url if location else uri
    # AzCopy's WORKLOAD login exchanges the federated token for an Entra token of the reader identity.
    return (
        f"mkdir -p {dst} && env AZCOPY_AUTO_LOGIN_TYPE=WORKLOAD AZURE_FEDERATED_TOKEN_FILE={TOKEN_FILE} "
        f"AZURE_CLIENT_ID={shlex.quote(values.client_id)} AZURE_TENANT_ID={shlex.quote(values.tenant_id)} "
        f"azcopy sync {shlex.quote(blob_url)} {dst} --recursive"
    )


def fetch_script(handoff: ArtifactHandoff, values: ReaderValues, syncs: list[tuple[str, str]]) -> list[str]:
    """The setup, then one fetch per (uri, destination): the lines a replica's prepare step runs."""
    return [fetch_setup(handoff, values).rstrip("\n")] + [fetch_command(handoff, values, u, d) for u, d in syncs]
