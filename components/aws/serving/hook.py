"""The replica group's fixed name and its launch lifecycle hook: the group declares the hook, the boot
script heartbeats and completes it."""

from accelstack.clouds.aws.names import replica_group_name as replica_group_name  # one place for AWS names

READY_HOOK = "replica-ready"
# The launch hook's fields are constants on purpose: `initial_lifecycle_hook` is ForceNew on
# aws_autoscaling_group, and the group has a fixed name, so any change deletes the whole group (every
# replica and the warm pool) before creating it again. The planner's cold-start budget lives in the
# replica's boot script instead (heartbeats), which a new template version rolls out in place.
# A separate aws.autoscaling.LifecycleHook would update in place, but is attached only after the
# group's first instances launched (provider docs), so those would skip preparation.
READY_HOOK_HEARTBEAT_TIMEOUT_SECONDS = 300
READY_HOOK_HEARTBEAT_EVERY_SECONDS = 60
