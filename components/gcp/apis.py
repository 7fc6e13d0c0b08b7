"""The Google Cloud APIs a stack calls, enabled by the stack itself, each resource waiting for its own.

A fresh project has few APIs enabled, and a create call to a disabled one fails ("SERVICE_DISABLED"), after
whatever did not need it already exists. So the stack root owns one `projects.Service` per API its resources
call (accelstack.clouds.gcp.services maps type tokens to APIs) and a transformation, inherited by every resource
under the root, adds the resource's APIs to its `depends_on`: a new resource type gets its API by its table row,
not by someone remembering. Services are created on first need, so a stack enables only what it uses.

- `disable_on_destroy=False`: destroying a stack never switches off an API the project's other workloads (or the
  retained buckets, keys and Lustre) still use; `disable_dependent_services=False` for the same reason.
- A service agent (`projects.ServiceIdentity`) exists only for an enabled API, so it waits for the API it names.
- Invokes are not resources: the project-number and Cloud Storage agent look-ups wait through `depends_on`,
  and what is built from their results (the agents' IAM members) inherits the wait.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from accelstack.clouds.gcp import services
from accelstack.components.gcp.lustre_import import LustreImport


class ProjectApis:
    """The `projects.Service` of each API the stack's resources call, created under the stack root on first need."""

    def __init__(self, stack: str, project_id: str, opts: pulumi.ResourceOptions):
        self.stack = stack
        self.project_id = project_id
        self._opts = opts  # the root's parent and explicit provider; no transformation (the Services are the roots)
        self._services: dict[str, gcp.projects.Service] = {}

    def service(self, api: str) -> gcp.projects.Service:
        if api not in self._services:
            self._services[api] = gcp.projects.Service(
                f"{self.stack}-api-{api.split('.', 1)[0]}",
                project=self.project_id,
                service=api,
                disable_on_destroy=False,
                disable_dependent_services=False,
                opts=self._opts,
            )
        return self._services[api]

    def enabled(self, *apis: str) -> list[pulumi.Resource]:
        return [self.service(api) for api in apis]

    def apis_of(self, type_token: str, props: Any, resource: pulumi.Resource | None) -> tuple[str, ...]:
        """The APIs a resource's create call needs: its type's row, the API a service agent is created for, and
        the Lustre API for the Managed Lustre import (a dynamic resource: its type names no API)."""
        if isinstance(resource, LustreImport):
            return (services.LUSTRE,)
        found = services.ACCOUNT_SERVICES.services_of(type_token) if type_token.startswith("gcp:") else ()
        apis = tuple(found or ())  # a type without a row: the tests fail on it (tests/components/gcp)
        if type_token == services.SERVICE_IDENTITY_TYPE and isinstance(props, dict):
            named = props.get("service")
            if isinstance(named, str):
                apis += (named,)
        return apis

    def transformation(self, args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
        if args.type_ == services.SERVICE_TYPE:
            return None
        apis = self.apis_of(args.type_, args.props, args.resource)
        if not apis:
            return None
        waits = pulumi.ResourceOptions(depends_on=self.enabled(*apis))
        return pulumi.ResourceTransformationResult(args.props, pulumi.ResourceOptions.merge(args.opts, waits))

    def project_number(self, parent: pulumi.Resource) -> pulumi.Output[str]:
        """The project's number (service agents are named by it). Its look-up waits for Resource Manager, and the
        result carries a wait for Compute Engine, whose agent (compute-system) exists once its API is enabled."""
        return gcp.organizations.get_project_output(
            project_id=self.project_id,
            opts=pulumi.InvokeOutputOptions(
                parent=parent, depends_on=self.enabled(services.RESOURCE_MANAGER, services.COMPUTE)
            ),
        ).number

    def storage_agent(self, parent: pulumi.Resource) -> pulumi.Output[str]:
        """Cloud Storage's service agent as an IAM member: reading it creates it (storage.getProjectServiceAccount:
        "if it does not exist, it is created"), which a KMS grant to it on a fresh project needs."""
        account = gcp.storage.get_project_service_account_output(
            project=self.project_id,
            opts=pulumi.InvokeOutputOptions(parent=parent, depends_on=self.enabled(services.STORAGE)),
        )
        return account.email_address.apply(lambda email: f"serviceAccount:{email}")


# The running program's (one stack per program; a later program in the same process, as the tests run them,
# replaces it when its root is built).
_CURRENT: dict[str, ProjectApis] = {}


def enable_apis(stack: str, project_id: str, opts: pulumi.ResourceOptions) -> ProjectApis:
    """Start the stack's API set (at its root, before any resource that calls an API)."""
    _CURRENT[stack] = apis = ProjectApis(stack, project_id, opts)
    return apis


def project_apis(stack: str) -> ProjectApis:
    """The stack's API set, as its root started it."""
    try:
        return _CURRENT[stack]
    except KeyError:
        raise RuntimeError(
            f"stack {stack}: its root did not start the project's APIs (components/gcp/apis.py)"
        ) from None
