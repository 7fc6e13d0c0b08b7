"""The `account` block, one model per cloud: what a stack deploys into, in that cloud's own terms.

Every cloud scopes quota and identity to a different thing (an AWS account, an Azure subscription, a
GCP project, an OCI compartment, the Vultr account an API key belongs to), so the block's keys differ.
`StackSpec` picks the model from `cloud` (`account_model`); each model names the key that identifies
the account (what `separation.trainingAccounts` / `servingAccounts` list) and checks its format, so the
separation contract is checked the same way on every cloud.

The five models here are the clouds accelstack is designed for; a cloud registered from outside names
its own model in `Cloud.account_model` ("module:Class", a subclass of `Account`).
"""

from __future__ import annotations

import importlib
import re
from typing import ClassVar

from pydantic import ConfigDict, Field, field_validator, model_validator

from accelstack.clouds import registry
from accelstack.spec.base import GUID, Grammars, Model, quoted_account_ids
from accelstack.spec.text_grammar import object_uri_problem, role_arn_problem


class Account(Model):
    """Where a stack deploys: the account (subscription, project, compartment) and its region."""

    region: str = Field(min_length=1)
    """Region every resource of the stack is created in (must be in separation.allowedRegions when that is set)."""

    ID_FIELD: ClassVar[str] = ""  # the attribute that names the account, e.g. "id", "subscription_id"
    ID_KIND: ClassVar[str] = ""  # said in messages: "an AWS account id (12 digits, quoted)"
    ID_PATTERN: ClassVar[re.Pattern[str]] = re.compile(r"^$")
    ID_EXAMPLE: ClassVar[str] = ""

    @property
    def account_id(self) -> str:
        """The value separation lists name this account by."""
        return str(getattr(self, self.ID_FIELD))

    @classmethod
    def key_of(cls, field: str) -> str:
        """The config key (camelCase alias) of a field."""
        info = cls.model_fields[field]
        return info.alias or field

    @classmethod
    def id_key(cls) -> str:
        return cls.key_of(cls.ID_FIELD)

    @classmethod
    def region_key(cls) -> str:
        return cls.key_of("region")

    @classmethod
    def keys(cls) -> list[str]:
        return [info.alias or name for name, info in cls.model_fields.items()]

    @classmethod
    def id_problem(cls, value: str) -> str | None:
        """None if `value` is an account id of this cloud's format, else why not."""
        if cls.ID_PATTERN.fullmatch(value):
            return None
        return f"{value!r} is not {cls.ID_KIND} (e.g. {cls.ID_EXAMPLE})"

    @classmethod
    def _checked_id(cls, value: str) -> str:
        problem = cls.id_problem(value)
        if problem:
            raise ValueError(problem)
        return value


def _azure_location_problem(value: str) -> str | None:
    if re.fullmatch(r"[a-z][a-z0-9]*", value):
        return None
    return f"{value!r} is not an Azure location name (lowercase letters and digits, e.g. eastus)"


def _uuid(value: str, what: str) -> str:
    if not GUID.fullmatch(value):
        raise ValueError(f"{value!r} is not {what} (a GUID, e.g. 00000000-0000-0000-0000-000000000000)")
    return value


class AwsAccount(Account):
    """An AWS account: its 12-digit id, a Region, and the role the provider assumes to deploy."""

    id: str = Field(min_length=1)
    """Account id: 12 digits, quoted in YAML so leading zeros survive. The provider refuses any other account (allowedAccountIds)."""
    region: str = Field(min_length=1)
    """AWS Region every resource of the stack is created in, e.g. us-east-1 (must be in separation.allowedRegions when that is set)."""
    deploy_role: str | None = None
    """IAM role ARN in this account that the provider assumes to deploy (during preview too); none: the caller's own credentials."""

    TEXT_GRAMMARS: ClassVar[Grammars] = {"deploy_role": role_arn_problem}

    ID_FIELD: ClassVar[str] = "id"
    ID_KIND: ClassVar[str] = "an AWS account id (12 digits, quoted in YAML)"
    ID_PATTERN: ClassVar[re.Pattern[str]] = re.compile(r"^\d{12}$")
    ID_EXAMPLE: ClassVar[str] = '"111111111111"'

    @field_validator("id", mode="before")
    @classmethod
    def _quoted(cls, value: object) -> object:
        return quoted_account_ids(value)

    @field_validator("id")
    @classmethod
    def _id_format(cls, value: str) -> str:
        return cls._checked_id(value)


class AzureAccount(Account):
    """An Azure subscription (the quota boundary) in its Microsoft Entra tenant, and a location."""

    subscription_id: str
    """Subscription id (a GUID): the provider deploys only into it, and quota is per subscription."""
    tenant_id: str
    """Microsoft Entra tenant id (a GUID) the subscription belongs to."""
    region: str = Field(min_length=1, alias="location")
    """Azure location (region) every resource is created in, e.g. eastus or westeurope (lowercase, no spaces)."""
    deploy_identity: str | None = None
    """Client id (a GUID) of the service principal or user-assigned managed identity the provider deploys as; none: the caller's own login."""
    hpc_cache_principal_id: str | None = None
    """Object id (a GUID) of the "HPC Cache Resource Provider" service principal in this tenant, which Azure Managed Lustre's Blob integration acts as (`az ad sp show --id 4392ab71-2ce2-4b0d-8770-b352745c73f5 --query id -o tsv`); required with training.storage.lustre."""
    standby_pool_principal_id: str | None = None
    """Object id (a GUID) of the "Standby Pool Resource Provider" service principal in this tenant, which creates and starts a serving stack's standby VMs (`az ad sp list --display-name "Standby Pool Resource Provider" --query [].id -o tsv`); required with a serving standby pool."""

    # Only the keys Azure uses: `region: eastus` from an AWS-shaped block is refused, not read as the location.
    model_config = ConfigDict(**{**Model.model_config, "populate_by_name": False})

    ID_FIELD: ClassVar[str] = "subscription_id"
    ID_KIND: ClassVar[str] = "an Azure subscription id (a GUID)"
    ID_PATTERN: ClassVar[re.Pattern[str]] = GUID
    ID_EXAMPLE: ClassVar[str] = "00000000-0000-0000-0000-000000000000"

    @field_validator("subscription_id")
    @classmethod
    def _subscription(cls, value: str) -> str:
        return cls._checked_id(value)

    @field_validator("tenant_id")
    @classmethod
    def _tenant(cls, value: str) -> str:
        return _uuid(value, "a Microsoft Entra tenant id")

    @field_validator("deploy_identity")
    @classmethod
    def _identity(cls, value: str | None) -> str | None:
        return None if value is None else _uuid(value, "a client id of a service principal or managed identity")

    @field_validator("hpc_cache_principal_id", "standby_pool_principal_id")
    @classmethod
    def _hpc_cache_principal(cls, value: str | None) -> str | None:
        return None if value is None else _uuid(value, "a service principal object id")

    # Checked before the safe text every string keeps (accelstack.spec.base.Model), so "East US" hears the location's form.
    TEXT_GRAMMARS: ClassVar[Grammars] = {"region": _azure_location_problem}


# Resource Manager: "6 to 30 lowercase ASCII letters, digits, or hyphens; starts with a letter; no trailing hyphen".
GCP_PROJECT_ID = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
# IAM: a service account id is 6 to 30 characters of the same alphabet; user-managed accounts live in a project.
GCP_SERVICE_ACCOUNT = re.compile(
    r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@(?P<project>[a-z][a-z0-9-]{4,28}[a-z0-9])\.iam\.gserviceaccount\.com$"
)


class GcpAccount(Account):
    """A Google Cloud project (the quota boundary), a region, and the service account to deploy as."""

    project_id: str
    """Project id (6 to 30 lowercase letters, digits or hyphens; starts with a letter, no trailing hyphen), e.g. acme-train."""
    region: str = Field(min_length=1)
    """Region every regional resource is created in, e.g. us-central1 or europe-west4."""
    deploy_service_account: str | None = None
    """Service account the provider impersonates to deploy, e.g. accelstack-deploy@acme-train.iam.gserviceaccount.com; none: the caller's own credentials."""
    project_number: str | None = Field(default=None, pattern=r"^[1-9][0-9]{5,18}$")
    """The project's number (`gcloud projects describe PROJECT --format='value(projectNumber)'`), another name of the same project: the policy packs place members that name the project by number (Compute Engine's default service account, which Cluster Director's VMs run as) as this stack's own; unset, such a member fails closed unless a resource of the stack carries the number."""

    ID_FIELD: ClassVar[str] = "project_id"
    ID_KIND: ClassVar[str] = (
        "a Google Cloud project id (6 to 30 lowercase letters, digits or hyphens, starting with a letter, "
        "not ending with a hyphen)"
    )
    ID_PATTERN: ClassVar[re.Pattern[str]] = GCP_PROJECT_ID
    ID_EXAMPLE: ClassVar[str] = "acme-train"

    @field_validator("project_id")
    @classmethod
    def _project(cls, value: str) -> str:
        return cls._checked_id(value)

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z]+-[a-z]+[0-9]+", value):
            raise ValueError(f"{value!r} is not a Google Cloud region name (e.g. us-central1; a zone ends in -a/-b/-c)")
        return value

    @field_validator("deploy_service_account")
    @classmethod
    def _service_account(cls, value: str | None) -> str | None:
        if value is not None and not GCP_SERVICE_ACCOUNT.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a service account email (<name>@<project>.iam.gserviceaccount.com, "
                "e.g. accelstack-deploy@acme-train.iam.gserviceaccount.com)"
            )
        return value


# "ocid1.<resource type>.<realm>.[region][.future use].<unique id>"; tenancies and compartments have no region.
OCI_OCID = re.compile(r"^ocid1\.(?P<type>[a-z0-9]+)\.(?P<realm>oc[0-9]+)\.\.(?P<unique>[a-z0-9]+)$")


class OciAccount(Account):
    """An OCI tenancy and the compartment (the quota and policy boundary) a stack deploys into."""

    tenancy_ocid: str
    """Tenancy OCID (ocid1.tenancy.oc1..<unique id>): the provider signs requests for it."""
    compartment_ocid: str
    """Compartment OCID (ocid1.compartment.oc1..<unique id>) every resource is created in; the tenancy OCID means the root compartment."""
    region: str = Field(min_length=1)
    """Region identifier, e.g. us-ashburn-1 or eu-frankfurt-1."""

    ID_FIELD: ClassVar[str] = "compartment_ocid"
    ID_KIND: ClassVar[str] = "a compartment OCID (ocid1.compartment.<realm>..<unique id>)"
    ID_PATTERN: ClassVar[re.Pattern[str]] = OCI_OCID
    ID_EXAMPLE: ClassVar[str] = "ocid1.compartment.oc1..aaaaaaaaexample"

    @classmethod
    def id_problem(cls, value: str) -> str | None:
        match = OCI_OCID.fullmatch(value)
        if match is None or match["type"] not in ("compartment", "tenancy"):
            return f"{value!r} is not {cls.ID_KIND} (e.g. {cls.ID_EXAMPLE})"
        return None

    @field_validator("tenancy_ocid")
    @classmethod
    def _tenancy(cls, value: str) -> str:
        match = OCI_OCID.fullmatch(value)
        if match is None or match["type"] != "tenancy":
            raise ValueError(f"{value!r} is not a tenancy OCID (e.g. ocid1.tenancy.oc1..aaaaaaaaexample)")
        return value

    @field_validator("compartment_ocid")
    @classmethod
    def _compartment(cls, value: str) -> str:
        return cls._checked_id(value)

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z]+-[a-z]+-[0-9]+", value):
            raise ValueError(f"{value!r} is not an OCI region identifier (e.g. us-ashburn-1)")
        return value

    @model_validator(mode="after")
    def _same_tenancy(self) -> OciAccount:
        compartment = OCI_OCID.fullmatch(self.compartment_ocid)
        tenancy = OCI_OCID.fullmatch(self.tenancy_ocid)
        if compartment and tenancy:
            if compartment["type"] == "tenancy" and self.compartment_ocid != self.tenancy_ocid:
                raise ValueError("compartmentOcid is a tenancy OCID other than tenancyOcid; name a compartment of it")
            if compartment["realm"] != tenancy["realm"]:
                raise ValueError(
                    f"compartmentOcid is in realm {compartment['realm']}, tenancyOcid in {tenancy['realm']}; "
                    "a compartment belongs to its tenancy's realm"
                )
        return self


# A reference to where the key is kept, never the key: the deployer's environment or a secret stack config value.
SECRET_REFERENCE = re.compile(r"^(env:[A-Z_][A-Z0-9_]{0,127}|config:[a-z][a-zA-Z0-9-]*:[a-zA-Z][a-zA-Z0-9_-]{0,127})$")
# Vultr API keys are 36 uppercase letters and digits; one written here would end up in git.
VULTR_API_KEY_SHAPE = re.compile(r"^[A-Z0-9]{36}$")


# Under 15 minutes a GPU instance may still be provisioning when its URL expires; over a day the URL is no longer
# short-lived (SigV4 itself allows 7 days), and the Vultr pack refuses it (policies/vultr/readers.py).
WEIGHTS_KEY_URL_MINUTES = (15, 24 * 60)
# OCI weights read from Vultr: each replica's pre-authenticated request lasts this long after its clock unless
# serving.artifactUrlLifetimeMinutes says otherwise; at most a day (the separation pack refuses longer).
PAR_LIFETIME_MINUTES = (15, 120, 24 * 60)  # (least, default, most)
# Google Cloud weights read from Vultr: each replica's OAuth access token (IAM Credentials generateAccessToken) lives
# at most 1 h unless the org policy constraint iam.allowServiceAccountCredentialLifetimeExtension lets the reader
# service account ask for up to 12 h (cloud.google.com/iam/docs/reference/credentials/rest/v1/
# projects.serviceAccounts/generateAccessToken, `lifetime`).
TOKEN_LIFETIME_MINUTES = (15, 60, 60)  # (least, default, most)
TOKEN_LIFETIME_EXTENDED_MINUTES = 12 * 60
# AWS weights read from Vultr: each replica's STS session (AssumeRole by the deployer): DurationSeconds 900 at least,
# and at most 1 h when the deployer is itself a role session (role chaining: docs.aws.amazon.com/IAM/latest/UserGuide/
# id_roles_terms-and-concepts.html#iam-term-role-chaining), which a deploy through SSO or a CI role always is.
SESSION_LIFETIME_MINUTES = (15, 60, 60)


class VultrWeightsKey(Model):
    """How each replica gets the read-only, prefix-scoped Object Storage key the weights are read with
    (docs/deploy-vultr.md, "The weights credential"): the key sits in one object, and each replica's user data
    carries a presigned GET URL for that object, signed when the replica is created and expiring soon after."""

    object: str = Field(min_length=1)
    """The object holding the scoped key, s3://<bucket>/<key> in the region's Vultr Object Storage: an env file with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY lines, outside every prefix the replicas sync (the weights' and the adapters')."""
    signer_secret: str
    """Where the key that signs the URL is kept (env:<VARIABLE> or config:<namespace>:<key>), a secret JSON value {"accessKey": ..., "secretKey": ...} of an Object Storage key that can read `object`; it never leaves the deployer."""
    url_lifetime_minutes: int = Field(default=120, ge=WEIGHTS_KEY_URL_MINUTES[0], le=WEIGHTS_KEY_URL_MINUTES[1])
    """How long a replica's URL works after the replica's creation began (15..1440): enough for the instance to be provisioned and boot, short enough that a URL read from the user data later fetches nothing."""

    @field_validator("signer_secret")
    @classmethod
    def _signer_reference(cls, value: str) -> str:
        if not SECRET_REFERENCE.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a reference to the signing key; allowed: env:<VARIABLE> or config:<namespace>:<key>"
            )
        return value

    @field_validator("object")
    @classmethod
    def _object_uri(cls, value: str) -> str:
        # The same grammar as every object-store URI of the spec: its key is signed into a URL the replica's
        # cloud-init fetches, where a quote, '$' or '..' would mean another object or another command.
        bucket, _, key = value.removeprefix("s3://").partition("/")
        if not value.startswith("s3://") or not bucket or not key or key.endswith("/"):
            raise ValueError(f"{value!r} is not an object; allowed: s3://<bucket>/<key> (one object, not a prefix)")
        problem = object_uri_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class VultrAccount(Account):
    """A Vultr account, known only by its API key: the block names where the key is kept, never the key."""

    api_key_secret: str
    """Where the deployer's Vultr API key is kept: env:<VARIABLE> (e.g. env:VULTR_API_KEY) or config:<namespace>:<key> (a `pulumi config set --secret` value, e.g. config:vultr:apiKey). Separation lists name accounts by these references."""
    region: str = Field(min_length=1)
    """Vultr region id, three lowercase letters, e.g. ewr (New Jersey) or fra (Frankfurt)."""
    weights_key: VultrWeightsKey | None = None
    """Serving: how the replicas get the read-only key to the weights (Vultr instances have no identity of their own); required for a serving stack."""

    ID_FIELD: ClassVar[str] = "api_key_secret"
    ID_KIND: ClassVar[str] = "a reference to the API key (env:<VARIABLE> or config:<namespace>:<key>)"
    ID_PATTERN: ClassVar[re.Pattern[str]] = SECRET_REFERENCE
    ID_EXAMPLE: ClassVar[str] = "env:VULTR_API_KEY"

    @classmethod
    def id_problem(cls, value: str) -> str | None:
        if VULTR_API_KEY_SHAPE.fullmatch(value):
            return (
                "looks like an API key itself; never write the key into a stack file (it ends up in git): keep it "
                "in the environment or as a secret (`pulumi config set --secret vultr:apiKey`) and reference it, "
                "e.g. env:VULTR_API_KEY or config:vultr:apiKey"
            )
        return super().id_problem(value)

    @field_validator("api_key_secret")
    @classmethod
    def _reference(cls, value: str) -> str:
        return cls._checked_id(value)

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z]{3}", value):
            raise ValueError(f"{value!r} is not a Vultr region id (three lowercase letters, e.g. ewr)")
        return value


# The account model of each cloud accelstack is designed for; a cloud may name its own (Cloud.account_model).
ACCOUNT_MODELS: dict[str, type[Account]] = {
    "aws": AwsAccount,
    "azure": AzureAccount,
    "gcp": GcpAccount,
    "oci": OciAccount,
    "vultr": VultrAccount,
}


def account_model(cloud: str) -> type[Account]:
    """The model of `cloud`'s account block: the one its registration names, else the built-in one."""
    named = registry.get(cloud).account_model
    if named is None:
        try:
            return ACCOUNT_MODELS[cloud]
        except KeyError:
            raise ValueError(
                f"cloud {cloud!r} names no account model (Cloud.account_model) and accelstack has none for it"
            ) from None
    module, _, attribute = named.partition(":")
    model = getattr(importlib.import_module(module), attribute)
    if not (isinstance(model, type) and issubclass(model, Account)):
        raise TypeError(f"{cloud}: Cloud.account_model {named!r} is not an accelstack.spec.accounts.Account")
    return model
