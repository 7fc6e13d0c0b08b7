"""One STS session of the artifact reader role, started when a Vultr replica's clock is created: a Pulumi dynamic
resource around STS AssumeRole, because no provider resource starts a session that is kept in state (pulumi-aws's
`assume_role` provider block is the provider's own; a `get_*` invoke would start a new session, hence new user data,
hence a replaced replica, on every `up`).

`AssumeRole(RoleArn, RoleSessionName, DurationSeconds, Policy)` answers Credentials {AccessKeyId (ASIA...),
SecretAccessKey, SessionToken, Expiration} (docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html):
DurationSeconds 900..the role's MaxSessionDuration, and at most 3600 when the caller is itself a role session (role
chaining: docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_terms-and-concepts.html#iam-term-role-chaining); the
session policy (`Policy`) can only narrow what the role allows: the same reads of the artifact prefix.

Semantics: the session is started at create and its credentials kept in state as secrets; `diff` reports no change
while the triggers (the replica's clock, the role, the session policy, the duration) hold, so an `up` that changes
nothing starts nothing and replaces no replica; a changed trigger replaces the session, and with it the replica whose
user data carries it. Delete revokes nothing (a session expires; `aws iam` can revoke every session of the role).

Credentials: the deployer's, through boto3's default chain (environment, profile, SSO), the same the aws provider
reads; the role trusts exactly that principal (components/aws/handoff_vultr_reader.py). A role created moments before
may not be assumable yet (IAM is eventually consistent): AccessDenied is retried for a while.
"""

from __future__ import annotations

import time
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider

MOST_SECONDS = 3600
DEFAULT_PROPAGATION_SECONDS = 120.0
DEFAULT_RETRY_SECONDS = 10.0
RESTART_KEYS = ("role_arn", "session_name", "policy", "duration_seconds", "clock", "region")
TYPE_TOKEN = "pulumi-python:dynamic/handoff:AwsSession"


class SessionError(Exception):
    """STS refused the session; the message says why and what the deployer needs."""


class SessionProvider(ResourceProvider):
    """Calls STS in the store's Region; `endpoint` (an STS endpoint URL) and `credentials` ((access key, secret)
    for the caller) are for tests and private endpoints."""

    serialize_as_secret_always = False  # the pickled provider holds no secret (the caller's come from the chain)

    def __init__(
        self,
        endpoint: str | None = None,
        credentials: tuple[str, str] | None = None,
        propagation_seconds: float = DEFAULT_PROPAGATION_SECONDS,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ):
        super().__init__()
        self.endpoint, self.credentials = endpoint, credentials
        self.propagation_seconds, self.retry_seconds = propagation_seconds, retry_seconds

    def _client(self, region: str) -> Any:
        import boto3  # imported here: the provider is pickled into the state without it

        keys = {}
        if self.credentials is not None:
            keys = {"aws_access_key_id": self.credentials[0], "aws_secret_access_key": self.credentials[1]}
        endpoint = self.endpoint or f"https://sts.{region}.amazonaws.com"  # the regional endpoint, not the global
        return boto3.client("sts", region_name=region, endpoint_url=endpoint, **keys)

    def _assume(self, props: dict[str, Any]) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        client = self._client(str(props["region"]))
        deadline = time.monotonic() + self.propagation_seconds
        while True:
            try:
                answer = client.assume_role(
                    RoleArn=props["role_arn"],
                    RoleSessionName=props["session_name"],
                    DurationSeconds=int(props["duration_seconds"]),
                    Policy=props["policy"],
                )
                break
            except ClientError as failure:
                code = failure.response.get("Error", {}).get("Code", "")
                if code == "AccessDenied" and time.monotonic() < deadline:
                    time.sleep(self.retry_seconds)  # a new role or trust not yet visible to STS
                    continue
                hint = ""
                if code == "AccessDenied":
                    hint = (
                        f" (the role trusts only serving.artifactDeployer; run the deploy as that principal, which also "
                        f"needs sts:AssumeRole on {props['role_arn']} in its own policies)"
                    )
                raise SessionError(f"AssumeRole {props['role_arn']}: {code}{hint}: {failure}") from None
        credentials = answer["Credentials"]
        expiration = credentials["Expiration"]
        return {
            "access_key_id": str(credentials["AccessKeyId"]),
            "secret_access_key": str(credentials["SecretAccessKey"]),
            "session_token": str(credentials["SessionToken"]),
            "expiration": expiration.isoformat() if hasattr(expiration, "isoformat") else str(expiration),
        }

    def create(self, props: dict[str, Any]) -> CreateResult:
        started = self._assume(props)
        return CreateResult(id_=f"{props['session_name']}@{props['clock']}", outs={**props, **started})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in RESTART_KEYS if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_=id_, outs=props)  # a refresh keeps the session: nothing to read back

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to undo: a session expires."""


class AwsSession(Resource, module="handoff", name="AwsSession"):
    """One session of `role_arn` named `session_name`, narrowed by `policy` (JSON), lasting `duration_seconds`,
    started when `clock` (the replica's time_static) is first known; its credentials are secret outputs."""

    access_key_id: pulumi.Output[str]
    secret_access_key: pulumi.Output[str]
    session_token: pulumi.Output[str]
    expiration: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        role_arn: pulumi.Input[str],
        session_name: str,
        policy: str,
        duration_seconds: int,
        region: str,
        clock: pulumi.Input[str],
        provider: SessionProvider | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        if not 900 <= duration_seconds <= MOST_SECONDS:
            raise ValueError(f"duration_seconds {duration_seconds}: 900..{MOST_SECONDS} (AssumeRole, role chaining)")
        props = {
            "role_arn": role_arn,
            "session_name": session_name,
            "policy": policy,
            "duration_seconds": duration_seconds,
            "region": region,
            "clock": clock,
            "access_key_id": None,
            "secret_access_key": None,
            "session_token": None,
            "expiration": None,
        }
        secret = pulumi.ResourceOptions(
            additional_secret_outputs=["access_key_id", "secret_access_key", "session_token"]
        )
        super().__init__(provider or SessionProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
