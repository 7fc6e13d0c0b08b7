"""One short-lived OAuth access token of the reader service account, minted when a Vultr replica's clock is created: a
Pulumi dynamic resource around IAM Credentials' generateAccessToken, because no provider resource mints one that is
kept in state (pulumi-gcp's `serviceaccount.get_account_access_token` is an invoke: it would mint a new token, hence
new user data, hence a replaced replica, on every `up`).

`POST https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/<email>:generateAccessToken` with
{"scope": ["https://www.googleapis.com/auth/devstorage.read_only"], "lifetime": "<seconds>s"} answers
{"accessToken", "expireTime"} (cloud.google.com/iam/docs/reference/credentials/rest/v1/projects.serviceAccounts/
generateAccessToken). The caller needs iam.serviceAccounts.getAccessToken on the service account
(roles/iam.serviceAccountTokenCreator); `lifetime` is at most 3600 s unless the org policy constraint
iam.allowServiceAccountCredentialLifetimeExtension lists the account (then 43200 s).

Semantics: the token is minted at create and kept in state as a secret; `diff` reports no change while the
triggers (the replica's clock, the service account, the scope, the lifetime) are unchanged, so an `up` that changes
nothing mints nothing and replaces no replica; a changed trigger replaces the token, and with it the replica whose
user data carries it. Delete revokes nothing (an access token cannot be revoked: it expires).

Credentials: Application Default Credentials of the deployer (`gcloud auth application-default login`, or the
deploying workload's service account), through google-auth, with the cloud-platform scope (as
components/gcp/lustre_import.py). A service account created moments before may not be visible to IAM Credentials
yet (cloud.google.com/iam/docs/access-change-propagation): 403/404 answers are retried for a while.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider

DEFAULT_ENDPOINT = "https://iamcredentials.googleapis.com"
READ_ONLY_SCOPE = "https://www.googleapis.com/auth/devstorage.read_only"
MOST_SECONDS = 3600  # without iam.allowServiceAccountCredentialLifetimeExtension
# A new service account or grant takes up to a few minutes to propagate; past this the create fails saying why.
DEFAULT_PROPAGATION_SECONDS = 180.0
DEFAULT_RETRY_SECONDS = 10.0
# What a new token is minted for: a change of any replaces the token (and the replica carrying it).
REMINT_KEYS = ("service_account", "scope", "lifetime_seconds", "clock")
TYPE_TOKEN = "pulumi-python:dynamic/handoff:GcpAccessToken"


class AccessTokenError(Exception):
    """IAM Credentials refused to mint the token; the message says why and what the deployer needs."""


def deployer_token() -> str:
    """An OAuth access token of the deploying identity (google-auth's Application Default Credentials)."""
    import google.auth  # imported here: the provider is pickled into the state without it
    import google.auth.transport.requests

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    credentials.refresh(google.auth.transport.requests.Request())
    return str(credentials.token)


class AccessTokenProvider(ResourceProvider):
    """Calls IAM Credentials; `endpoint`, `token` (a callable returning the deployer's bearer token) and the
    timings are for tests and private endpoints."""

    # The pickled provider holds no secret (the deployer's token is fetched when it runs).
    serialize_as_secret_always = False

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        token: Any = None,
        propagation_seconds: float = DEFAULT_PROPAGATION_SECONDS,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ):
        super().__init__()
        self.endpoint = endpoint.rstrip("/")
        self.token = token
        self.propagation_seconds = propagation_seconds
        self.retry_seconds = retry_seconds

    def _mint(self, props: dict[str, Any]) -> dict[str, Any]:
        email = str(props["service_account"])
        path = f"/v1/projects/-/serviceAccounts/{urllib.parse.quote(email, safe='@.')}:generateAccessToken"
        body = json.dumps({"scope": [props["scope"]], "lifetime": f"{int(props['lifetime_seconds'])}s"}).encode()
        deadline = time.monotonic() + self.propagation_seconds
        while True:
            bearer = self.token() if self.token is not None else deployer_token()
            request = urllib.request.Request(
                self.endpoint + path,
                data=body,
                method="POST",
                headers={"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    answer = json.loads(response.read())
                return {"access_token": str(answer["accessToken"]), "expire_time": str(answer["expireTime"])}
            except urllib.error.HTTPError as failure:
                detail = failure.read().decode(errors="replace")[:300]
                if failure.code in (403, 404) and time.monotonic() < deadline:
                    time.sleep(self.retry_seconds)  # a new account or grant not yet visible to IAM Credentials
                    continue
                hint = ""
                if failure.code in (403, 404):
                    hint = (
                        f" (the deploying identity needs roles/iam.serviceAccountTokenCreator on {email}, or on the "
                        "training project; a lifetime over 3600 s also needs the org policy constraint "
                        "iam.allowServiceAccountCredentialLifetimeExtension to list the account)"
                    )
                raise AccessTokenError(
                    f"generateAccessToken for {email}: HTTP {failure.code}{hint}: {detail}"
                ) from None

    def create(self, props: dict[str, Any]) -> CreateResult:
        minted = self._mint(props)
        return CreateResult(id_=f"{props['service_account']}@{props['clock']}", outs={**props, **minted})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in REMINT_KEYS if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_=id_, outs=props)  # a refresh keeps the minted token: nothing to read back

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """Nothing to undo: an access token cannot be revoked, it expires."""


class GcpAccessToken(Resource, module="handoff", name="GcpAccessToken"):
    """One access token of `service_account` for `scope`, valid `lifetime_seconds` from its minting, minted when
    `clock` (the replica's time_static) is first known; the token is a secret output."""

    access_token: pulumi.Output[str]
    expire_time: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        service_account: pulumi.Input[str],
        clock: pulumi.Input[str],
        lifetime_seconds: int,
        scope: str = READ_ONLY_SCOPE,
        provider: AccessTokenProvider | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        if not 0 < lifetime_seconds <= MOST_SECONDS:
            raise ValueError(f"lifetime_seconds {lifetime_seconds}: 1..{MOST_SECONDS} (generateAccessToken's limit)")
        props = {
            "service_account": service_account,
            "scope": scope,
            "lifetime_seconds": lifetime_seconds,
            "clock": clock,
            "access_token": None,
            "expire_time": None,
        }
        secret = pulumi.ResourceOptions(additional_secret_outputs=["access_token"])
        super().__init__(provider or AccessTokenProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret))
