"""Fixture program: a component with an explicit AWS provider and a few resources, from the spec.

`fixture:fail` (stack config) makes it fail on purpose: `runerror` raises pulumi.RunError (the
program refusing its input), `crash` raises an ordinary exception (a bug). It prints to stdout
too, to prove the program's prints cannot corrupt the worker's result.
"""

import pulumi
import pulumi_aws as aws

from accelstack.spec import parse_spec
from accelstack.spec.loader import TOP_KEYS

config = pulumi.Config("accelstack")
# Structured values arrive as JSON strings; parse_spec decodes them (get_object would reject plain strings).
raw = {key: value for key in TOP_KEYS if (value := config.get(key)) is not None}
spec = parse_spec(raw, pulumi.get_stack())
print("fixture program running for", pulumi.get_stack())

fail = pulumi.Config("fixture").get("fail")
if fail == "runerror":
    raise pulumi.RunError("fixture refuses this stack: fixture:fail is set")
if fail == "crash":
    raise ZeroDivisionError("fixture crashed on purpose")

root = pulumi.ComponentResource("fixture:cluster:Cluster", spec.stack)
provider = aws.Provider(
    f"{spec.stack}-aws",
    region=spec.account.region,
    allowed_account_ids=[spec.account.id],
    opts=pulumi.ResourceOptions(parent=root),
)
opts = pulumi.ResourceOptions(parent=root, provider=provider)
checkpoints = aws.s3.Bucket(
    "checkpoints", opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=True, retain_on_delete=True))
)
aws.s3.BucketVersioning(
    "checkpoints-versioning",
    bucket=checkpoints.id,
    versioning_configuration={"status": "Enabled"},
    opts=opts,
)
token = aws.ssm.Parameter(
    "cluster-token", type="SecureString", value=pulumi.Output.secret("s3cr3t-fixture-token"), opts=opts
)
nodes = pulumi.ComponentResource("fixture:cluster:Nodes", "nodes", opts=pulumi.ResourceOptions(parent=root))
# One group whatever the node count: the resource count must not grow with nodes.count.
aws.ec2.LaunchTemplate(
    "nodes",
    instance_type=spec.training.nodes.instance_type,
    opts=pulumi.ResourceOptions(parent=nodes, provider=provider),
)
pulumi.export("checkpointBucket", checkpoints.bucket)
pulumi.export("nodeCount", spec.training.nodes.count)
pulumi.export("token", token.value)
