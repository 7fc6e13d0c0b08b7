"""The stack's one explicit AWS provider: pinned to the stack's account, region and deploy role."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from accelstack.spec import StackSpec
from accelstack.spec.accounts import AwsAccount


def stack_tags(spec: StackSpec) -> dict[str, str]:
    """Tags every resource carries (through the provider's default_tags, and explicitly where a
    resource type ignores default tags). Stable across config edits: a changing value here (the
    config digest) would update the tags of every taggable resource on every edit and bury the real
    changes in `pulumi preview` (pulumi/pulumi-aws#2585)."""
    return {"accelstack:workload": spec.workload, "accelstack:stack": spec.stack}


def group_stack_tags(spec: StackSpec, digest: str) -> dict[str, str]:
    """An Auto Scaling group's tags: the stack's, plus the config digest its instances are launched
    under (propagated at launch, an in-place tag update of the group only)."""
    return {**stack_tags(spec), "accelstack:config-digest": digest}


def launch_template_tag_specifications(spec: StackSpec, name: str) -> list[aws.ec2.LaunchTemplateTagSpecificationArgs]:
    """Tags for what a launch template starts (instances, volumes, interfaces), which default tags do
    not reach: the stable stack tags only. Tag specifications are part of a template VERSION, so the
    config digest here would make every config edit a new version, and the serving group rolls its
    whole fleet on a new version. Instances still get the digest from their group's propagated tags."""
    tags = {"accelstack:workload": spec.workload, "accelstack:stack": spec.stack, "Name": name}
    return [
        aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
        for kind in ("instance", "volume", "network-interface")
    ]


def group_tags(tags: dict[str, str], name: str) -> list[aws.autoscaling.GroupTagArgs]:
    """Auto Scaling groups ignore the provider's default tags: they list the stack's tags themselves."""
    return [
        aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
        for k, v in {"Name": name, **tags}.items()
    ]


def aws_provider(spec: StackSpec, parent: pulumi.Resource) -> aws.Provider:
    """Refuses to touch any account but the stack's (`allowed_account_ids`), assumes the deploy role
    when one is given, and stamps the stack's (stable) tags on every resource that supports tags."""
    account = spec.account
    if not isinstance(account, AwsAccount):
        raise TypeError(
            f"stack {spec.stack}: the AWS provider needs an AWS account block, got {type(account).__name__}"
        )
    role: pulumi.Input[str] | None = account.deploy_role
    account_id: pulumi.Input[str] = account.id
    if spec.landing is not None:
        # The landing stack made the account: its id and deploy role come from the landing stack's outputs, so the
        # provider refuses any account but the one the landing stack created for this side.
        landing = pulumi.StackReference(
            f"{spec.stack}-landing", stack_name=spec.landing.stack, opts=pulumi.ResourceOptions(parent=parent)
        )
        account_id = landing.require_output(f"{spec.workload}AccountId")
        role = landing.require_output(f"{spec.workload}DeployRoleArn")
    assume_roles = (
        [aws.ProviderAssumeRoleArgs(role_arn=role, session_name=f"accelstack-{spec.stack}")] if role else None
    )
    return aws.Provider(
        f"{spec.stack}-aws",
        region=account.region,
        allowed_account_ids=[account_id],
        assume_roles=assume_roles,
        default_tags=aws.ProviderDefaultTagsArgs(tags=stack_tags(spec)),
        opts=pulumi.ResourceOptions(parent=parent),
    )
