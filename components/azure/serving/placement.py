"""Where the serving service's resources go: its resource group (by resource and by its fixed name), the
subscription, the stack's tags, and the options that make a resource a child of the service."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native


@dataclass(frozen=True)
class Placement:
    resource_group: azure_native.resources.ResourceGroup
    # Fixed (provider.resource_group), known before the group exists: the gateway's sub-resource ids use it.
    resource_group_name: str
    subscription_id: str
    tags: dict[str, str]
    opts: pulumi.ResourceOptions
