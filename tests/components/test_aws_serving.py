"""The real program (`__main__.py`) on the example serving stack, captured under mocks.

What an operator relies on: HTTPS only at the edge, a WAF rate limit per client, health checks
that respect cold start, a dead-letter queue behind the admission queue, scaling on backlog per
instance exactly as AWS documents it (never on CPU), a sized warm pool of on-demand replicas, and
a model grant that can only read the training account's artifact prefix.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

import pytest

from accelstack.components.replica.boot_status import STATUS_COMMAND
from accelstack.engine.capture import Capture, Registration, capture, config_for_pulumi
from accelstack.planner.serving import DEFAULT_TARGET_UTILIZATION
from accelstack.planner.serving_plan import plan_serving
from accelstack.spec import load_stack
from accelstack.spec.loader import apply_overrides, read_stack_file
from tests.planner.aws_inputs import AWS_CATALOG

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "__main__.py"
EXAMPLE = REPO / "stacks" / "Pulumi.aws-serving.yaml"
STACK = "aws-serving"

GROUP = "aws:autoscaling/group:Group"
POLICY = "aws:autoscaling/policy:Policy"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
LISTENER = "aws:lb/listener:Listener"
QUEUE = "aws:sqs/queue:Queue"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"


@cache
def run(*overrides: str) -> Capture:
    raw = apply_overrides(read_stack_file(EXAMPLE), list(overrides))
    return capture(MAIN, config_for_pulumi(raw), stack=STACK)


def named(cap: Capture, type_token: str, suffix: str) -> Registration:
    found = [r for r in cap.by_type(type_token) if r.name.endswith(suffix)]
    assert len(found) == 1, f"{type_token} *{suffix}: {[r.name for r in cap.by_type(type_token)]}"
    return found[0]


def plan():
    return plan_serving(load_stack(EXAMPLE).serving, AWS_CATALOG)


def test_https_listener_with_tls13_and_http_only_redirects():
    cap = run()
    https = named(cap, LISTENER, "-https").inputs
    assert https["protocol"] == "HTTPS" and https["port"] == 443
    assert https["sslPolicy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"
    assert https["certificateArn"] == load_stack(EXAMPLE).serving.load_balancer.certificate
    assert https["defaultActions"][0]["type"] == "forward"
    http = named(cap, LISTENER, "-http-redirect").inputs
    assert http["protocol"] == "HTTP" and http["port"] == 80
    (action,) = http["defaultActions"]
    assert action["type"] == "redirect"
    assert action["redirect"] == {"protocol": "HTTPS", "port": "443", "statusCode": "HTTP_301"}
    # Nothing but the two listeners: no plain-HTTP forward anywhere.
    assert len(cap.by_type(LISTENER)) == 2


def test_alb_is_internet_facing_hardened_and_logs_to_sse_s3_bucket():
    cap = run()
    alb = cap.one("aws:lb/loadBalancer:LoadBalancer").inputs
    assert alb["internal"] is False and alb["loadBalancerType"] == "application"
    assert alb["dropInvalidHeaderFields"] is True and alb["enableDeletionProtection"] is True
    assert alb["accessLogs"]["enabled"] is True and alb["accessLogs"]["prefix"] == "alb"
    (bucket,) = [b for b in cap.by_type("aws:s3/bucket:Bucket") if b.name == "aws-serving-alb-logs"]
    assert bucket.protect and alb["accessLogs"]["bucket"] == bucket.name
    (sse,) = [
        r.inputs
        for r in cap.by_type("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")
        if r.inputs["bucket"] == bucket.id
    ]
    # ALB log delivery supports SSE-S3 only.
    assert sse["rules"][0]["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}
    (policy,) = [
        json.loads(p.inputs["policy"])
        for p in cap.by_type("aws:s3/bucketPolicy:BucketPolicy")
        if p.inputs["bucket"] == bucket.id
    ]
    writers = {json.dumps(s["Principal"]) for s in policy["Statement"] if s["Effect"] == "Allow"}
    assert '{"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}' in writers
    assert '{"AWS": "arn:aws:iam::127311923021:root"}' in writers  # us-east-1 predates August 2022
    for statement in policy["Statement"]:
        if statement["Effect"] == "Allow":
            assert statement["Action"] == "s3:PutObject"
            assert statement["Resource"].endswith("/alb/AWSLogs/222222222222/*")


def test_security_groups_only_alb_reaches_replicas():
    cap = run()
    alb_sg = named(cap, "aws:ec2/securityGroup:SecurityGroup", "-alb")
    replica_sg = named(cap, "aws:ec2/securityGroup:SecurityGroup", "-replicas")
    ingress = cap.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    public = sorted(r.inputs["fromPort"] for r in ingress if r.inputs.get("cidrIpv4") == "0.0.0.0/0")
    assert public == [80, 443]
    (to_replicas,) = [r for r in ingress if r.name.endswith("replicas-from-alb")]
    assert to_replicas.inputs["fromPort"] == to_replicas.inputs["toPort"] == 8000
    assert to_replicas.inputs["referencedSecurityGroupId"] == alb_sg.outputs.get("id", f"{alb_sg.name}-id")
    replica_rules = [r for r in ingress if r.inputs["securityGroupId"] == f"{replica_sg.name}-id"]
    assert replica_rules == [to_replicas]


def test_health_check_on_readiness_path_with_cold_start_timing():
    cap = run()
    expected = plan()
    check = cap.one("aws:lb/targetGroup:TargetGroup").inputs["healthCheck"]
    assert check["path"] == "/health" and check["port"] == "traffic-port" and check["matcher"] == "200"
    assert check["interval"] == expected.health_check_interval_seconds
    assert check["timeout"] < check["interval"]
    assert check["healthyThreshold"] == 2 and check["unhealthyThreshold"] == 3
    group = cap.one(GROUP).inputs
    assert group["healthCheckType"] == "ELB"
    assert group["healthCheckGracePeriod"] == expected.health_check_grace_seconds
    (hook,) = group["initialLifecycleHooks"]
    # The hook, not the grace period, waits out the cold start; the grace covers the first verdict.
    assert expected.health_check_grace_seconds < expected.cold_start_seconds
    assert hook["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_LAUNCHING"
    # The hook's timeout is a constant (a ForceNew field of a fixed-name group); the boot script's
    # heartbeats hold it open for the planner's budget, which covers the cold start.
    assert hook["heartbeatTimeout"] == 300
    assert f'while [ "$SECONDS" -lt {expected.lifecycle_heartbeat_seconds} ]' in user_data(cap)
    assert expected.lifecycle_heartbeat_seconds >= expected.cold_start_seconds
    minutes = int(group["waitForCapacityTimeout"].removesuffix("m"))
    assert (
        minutes * 60
        >= expected.lifecycle_heartbeat_seconds + hook["heartbeatTimeout"] + expected.health_check_grace_seconds
    )


def test_waf_rate_rule_per_client_ip_from_admission_policy():
    cap = run("serving.admission.perClientRate=250", "serving.admission.rateWindowSeconds=120")
    acl = cap.one("aws:wafv2/webAcl:WebAcl")
    assert acl.inputs["scope"] == "REGIONAL"
    rule, known_bad = sorted(acl.inputs["rules"], key=lambda r: r["priority"])
    rate = rule["statement"]["rateBasedStatement"]
    assert rate == {"aggregateKeyType": "IP", "limit": 250, "evaluationWindowSec": 120}
    assert "block" in rule["action"]
    # The managed group blocks on its own (override `none`), after the rate rule.
    assert known_bad["statement"]["managedRuleGroupStatement"] == {
        "vendorName": "AWS",
        "name": "AWSManagedRulesKnownBadInputsRuleSet",
    }
    assert known_bad["overrideAction"] == {"none": {}}
    association = cap.one("aws:wafv2/webAclAssociation:WebAclAssociation").inputs
    alb = cap.one("aws:lb/loadBalancer:LoadBalancer")
    assert association["resourceArn"] == alb.outputs["arn"]
    assert association["webAclArn"] == acl.outputs["arn"]


def test_key_policy_lets_auto_scaling_use_the_key_without_naming_its_service_linked_role():
    """KMS refuses a key policy naming a principal that does not exist, and the Auto Scaling
    service-linked role exists only after the account's first group: a fresh serving account would
    fail at the key. EBS use goes through EC2 for any principal of this account (the aws/ebs key's
    policy), which covers the role once Auto Scaling creates it."""
    policy = json.loads(named(run(), "aws:kms/key:Key", "-key").inputs["policy"])
    assert "AWSServiceRoleForAutoScaling" not in json.dumps(policy)
    named_principals = [p for s in policy["Statement"] for p in [s["Principal"].get("AWS")] if p and p != "*"]
    assert named_principals == ["arn:aws:iam::222222222222:root"]
    (ebs,) = [s for s in policy["Statement"] if s["Principal"].get("AWS") == "*"]
    assert {"kms:CreateGrant", "kms:GenerateDataKey*", "kms:Decrypt", "kms:ReEncrypt*", "kms:DescribeKey"} <= set(
        ebs["Action"]
    )
    assert ebs["Condition"] == {
        "StringEquals": {"kms:CallerAccount": "222222222222", "kms:ViaService": "ec2.us-east-1.amazonaws.com"},
        # The Auto Scaling service-linked role lives there; ordinary principals need IAM grants.
        "ArnLike": {"aws:PrincipalArn": "arn:aws:iam::222222222222:role/aws-service-role/*"},
    }


def test_admission_queue_ttl_encryption_and_dead_letter_wiring():
    cap = run()
    requests = named(cap, QUEUE, "-requests")
    dead = named(cap, QUEUE, "-dead-letters")
    redrive = json.loads(requests.inputs["redrivePolicy"])
    assert redrive == {"deadLetterTargetArn": dead.outputs["arn"], "maxReceiveCount": 3}
    assert requests.inputs["messageRetentionSeconds"] == 300  # the request TTL
    assert requests.inputs["visibilityTimeoutSeconds"] == plan().visibility_timeout_seconds
    key_arn = named(cap, "aws:kms/key:Key", "-key").outputs["arn"]
    for queue in cap.by_type(QUEUE):
        assert queue.inputs["kmsMasterKeyId"] == key_arn
    allow = json.loads(cap.one("aws:sqs/redriveAllowPolicy:RedriveAllowPolicy").inputs["redriveAllowPolicy"])
    responses = named(cap, QUEUE, "-responses")
    assert json.loads(responses.inputs["redrivePolicy"])["deadLetterTargetArn"] == dead.outputs["arn"]
    # Only our own queues may move messages into the dead-letter queue.
    assert allow == {
        "redrivePermission": "byQueue",
        "sourceQueueArns": [requests.outputs["arn"], responses.outputs["arn"]],
    }


def test_queue_age_and_depth_alarms():
    cap = run()
    age = named(cap, ALARM, "-queue-age").inputs
    assert age["metricName"] == "ApproximateAgeOfOldestMessage" and age["namespace"] == "AWS/SQS"
    assert age["threshold"] == 240  # 80% of the 300 s TTL
    assert age["dimensions"] == {"QueueName": named(cap, QUEUE, "-requests").outputs["name"]}
    depth = named(cap, ALARM, "-queue-depth").inputs
    assert depth["metricName"] == "ApproximateNumberOfMessagesVisible" and depth["threshold"] == 2000
    assert depth["comparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_backlog_per_instance_metric_math_counts_waiting_and_in_flight_messages():
    cap = run()
    (policy,) = cap.by_type(POLICY)
    assert policy.inputs["policyType"] == "TargetTrackingScaling"
    tracking = policy.inputs["targetTrackingConfiguration"]
    # The requests each replica's worker keeps in flight, at the 70% target utilization.
    assert tracking["targetValue"] == plan().backlog_per_instance_target == round(0.7 * plan().concurrency, 2)
    visible, not_visible, in_service, e1 = tracking["customizedMetricSpecification"]["metrics"]
    queue_name = named(cap, QUEUE, "-requests").outputs["name"]
    group_name = cap.one(GROUP).inputs["name"]
    # Waiting (Visible) and held by a replica's worker (NotVisible): Visible alone reads 0 whenever
    # replicas keep up, and the group scaled in to min and out again all day.
    for query, metric_id, metric_name in (
        (visible, "m1", "ApproximateNumberOfMessagesVisible"),
        (not_visible, "m2", "ApproximateNumberOfMessagesNotVisible"),
    ):
        assert query["id"] == metric_id and query["returnData"] is False
        assert query["metricStat"]["metric"] == {
            "metricName": metric_name,
            "namespace": "AWS/SQS",
            "dimensions": [{"name": "QueueName", "value": queue_name}],
        }
        assert query["metricStat"]["stat"] == "Sum"
    assert in_service["id"] == "m3" and in_service["returnData"] is False
    assert in_service["metricStat"]["metric"] == {
        "metricName": "GroupInServiceInstances",
        "namespace": "AWS/AutoScaling",
        "dimensions": [{"name": "AutoScalingGroupName", "value": group_name}],
    }
    assert in_service["metricStat"]["stat"] == "Average"
    assert e1["id"] == "e1" and e1["expression"] == "(m1 + m2) / m3" and e1["returnData"] is True
    # Only the expression returns data: target tracking takes exactly one time series.
    assert [q["returnData"] for q in tracking["customizedMetricSpecification"]["metrics"]] == [
        False,
        False,
        False,
        True,
    ]
    # The denominator only exists if the group publishes its metrics.
    assert "GroupInServiceInstances" in cap.one(GROUP).inputs["enabledMetrics"]


def test_no_cpu_based_scaling_anywhere():
    for cap in (run(), run("serving.replicas.min=0")):
        text = json.dumps([r.inputs for r in cap.by_type(POLICY) + cap.by_type(ALARM)])
        assert "ASGAverageCPUUtilization" not in text and "CPUUtilization" not in text
        for policy in cap.by_type(POLICY):
            assert "predefinedMetricSpecification" not in policy.inputs.get("targetTrackingConfiguration", {})


def test_scale_from_zero_step_policy_only_when_min_is_zero():
    assert [p.inputs["policyType"] for p in run().by_type(POLICY)] == ["TargetTrackingScaling"]
    cap = run("serving.replicas.min=0")
    step = named(cap, POLICY, "-scale-from-zero")
    assert step.inputs["policyType"] == "StepScaling"
    assert step.inputs["stepAdjustments"] == [{"scalingAdjustment": 1, "metricIntervalLowerBound": "0"}]
    alarm = named(cap, ALARM, "-queue-waiting-at-zero").inputs
    assert alarm["alarmActions"] == [step.outputs["arn"]]
    queries = {q["id"]: q for q in alarm["metricQueries"]}
    assert queries["depth"]["metric"]["metricName"] == "ApproximateNumberOfMessagesVisible"
    assert queries["inservice"]["metric"]["metricName"] == "GroupInServiceInstances"
    # A minute without a group datapoint must read as "none in service", not make the alarm miss data.
    assert queries["waiting"]["expression"] == "IF(depth > 0 AND FILL(inservice, 0) == 0, 1, 0)"
    assert queries["waiting"]["returnData"] is True and not queries["depth"].get("returnData")
    assert alarm["threshold"] == 1


def test_warm_pool_present_sized_and_reused():
    cap = run()
    group = cap.one(GROUP).inputs
    pool = group["warmPool"]
    expected = plan().warm_pool_size
    assert 1 <= expected <= 8 - 1
    assert pool["poolState"] == "Stopped" and pool["minSize"] == expected
    assert pool["maxGroupPreparedCapacity"] == 1 + expected
    assert pool["instanceReusePolicy"] == {"reuseOnScaleIn": True}
    pinned = run("serving.replicas.warmPool=2").one(GROUP).inputs["warmPool"]
    assert pinned["minSize"] == 2


def test_replicas_on_demand_only_across_two_private_azs_with_rolling_refresh():
    cap = run()
    group = cap.one(GROUP).inputs
    assert "mixedInstancesPolicy" not in group
    template = cap.one("aws:ec2/launchTemplate:LaunchTemplate").inputs
    assert "instanceMarketOptions" not in template
    assert len(group["vpcZoneIdentifiers"]) == 2
    private = {
        f"{r.name}-id": r.inputs["availabilityZone"]
        for r in cap.by_type("aws:ec2/subnet:Subnet")
        if "-private-" in r.name
    }
    assert set(group["vpcZoneIdentifiers"]) == set(private) and len(set(private.values())) == 2
    assert group["minSize"] == 1 and group["maxSize"] == 8
    assert group["targetGroupArns"] == [cap.one("aws:lb/targetGroup:TargetGroup").outputs["arn"]]
    refresh = group["instanceRefresh"]
    assert refresh["strategy"] == "Rolling"
    assert refresh["preferences"]["minHealthyPercentage"] == 100
    assert refresh["preferences"]["maxHealthyPercentage"] == 200  # at most 100 above the minimum
    # StartInstanceRefresh rejects AutoRollback when the template's image is an SSM parameter, which
    # the default image is: the first model update would fail at `pulumi up`.
    assert template_image_is_ssm_parameter(cap) and not refresh["preferences"].get("autoRollback")
    # The refresh waits the group's default warmup, not a cold start after a replica is already serving.
    assert (
        "instanceWarmup" not in refresh["preferences"] and group["defaultInstanceWarmup"] == plan().warm_start_seconds
    )
    assert not cap.by_type("aws:ec2/placementGroup:PlacementGroup")


def template_image_is_ssm_parameter(cap: Capture) -> bool:
    return cap.one("aws:ec2/launchTemplate:LaunchTemplate").inputs["imageId"].startswith("resolve:ssm:")


def test_launch_template_imdsv2_encrypted_no_public_ip():
    cap = run()
    template = cap.one("aws:ec2/launchTemplate:LaunchTemplate").inputs
    assert template["metadataOptions"]["httpTokens"] == "required"
    (nic,) = template["networkInterfaces"]
    assert nic["associatePublicIpAddress"] == "false"
    assert "interfaceType" not in nic  # no EFA for independent replicas
    (disk,) = template["blockDeviceMappings"]
    assert disk["ebs"]["encrypted"] == "true" and disk["ebs"]["volumeType"] == "gp3"
    assert disk["ebs"]["kmsKeyId"] == named(cap, "aws:kms/key:Key", "-key").outputs["arn"]
    assert template["instanceType"] == "g6e.xlarge"
    assert template["imageId"].startswith("resolve:ssm:/aws/service/deeplearning/")


def user_data(cap: Capture) -> str:
    return base64.b64decode(cap.one("aws:ec2/launchTemplate:LaunchTemplate").inputs["userData"]).decode()


def worker_env(script: str) -> dict[str, str]:
    unit = script.split("accelstack-queue-worker.service <<'UNIT'\n", 1)[1].split("\nUNIT\n", 1)[0]
    return dict(
        line.removeprefix("Environment=").split("=", 1) for line in unit.splitlines() if line.startswith("Environment=")
    )


def test_user_data_serves_base_model_with_every_lora_adapter():
    cap = run()
    script = user_data(cap)
    assert "aws s3 sync --only-show-errors s3://acme-train-checkpoints/models/llama-3.1-8b-instruct/" in script
    assert "--enable-lora" in script
    assert (
        "--lora-modules acme-support=/models/adapters/acme-support globex-legal=/models/adapters/globex-legal" in script
    )
    assert "--max-lora-rank 32" in script and "--dtype bfloat16" in script and "--max-model-len 16384" in script
    assert "autoscaling/target-lifecycle-state" in script  # warm-pool boots prepare, then stop
    assert script.count("docker run") == 1  # one deployment for all adapters


def test_worker_runs_the_plans_concurrency_and_the_target_counts_it():
    """The N requests the queue worker keeps in flight is the N the scaling target is multiplied by:
    the policy counts the messages replicas hold, so its target is N at the target utilization."""
    cap = run()
    env = worker_env(user_data(cap))
    serving_plan = plan()
    assert int(env["WORKER_CONCURRENCY"]) == serving_plan.concurrency > 1
    (policy,) = cap.by_type(POLICY)
    target = policy.inputs["targetTrackingConfiguration"]["targetValue"]
    assert target == round(DEFAULT_TARGET_UTILIZATION * int(env["WORKER_CONCURRENCY"]), 2)
    # The queue the worker drains is the one the policy's metric reads, and the TTL is the admission TTL.
    assert env["REQUEST_QUEUE_URL"] == named(cap, QUEUE, "-requests").outputs["url"]
    assert env["RESPONSE_QUEUE_URL"] == named(cap, QUEUE, "-responses").outputs["url"]
    assert int(env["TTL_SECONDS"]) == named(cap, QUEUE, "-requests").inputs["messageRetentionSeconds"]
    # The worker's lease is the queue's visibility timeout: each extension renews what a receive hides.
    assert int(env["LEASE_SECONDS"]) == named(cap, QUEUE, "-requests").inputs["visibilityTimeoutSeconds"]


def test_replica_user_data_fits_ec2s_limit_and_ships_the_worker_verbatim(tmp_path):
    from accelstack.components.aws.replica import sqs_queue
    from accelstack.components.aws.serving import USER_DATA_LIMIT_BYTES
    from accelstack.components.replica import queue_worker

    script = user_data(run())
    assert len(script.encode()) < USER_DATA_LIMIT_BYTES == 16384  # EC2 limit on the raw user data
    # Run the script's own decoding steps (paths moved to tmp): they write both modules byte for byte,
    # side by side, where the unit's ExecStart runs the worker and the worker finds the client it names.
    start = script.index("python3 -c 'import base64, bz2")
    end = script.index("\nB85\n", start) + len("\nB85\n")
    step = script[start:end].replace("python3 -c", f"{sys.executable} -c", 1).replace("/opt/accelstack", str(tmp_path))
    subprocess.run(["bash", "-euo", "pipefail", "-c", step], check=True, timeout=30)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["queue_worker.py", "replica-status.py", "sqs_queue.py"]
    assert (tmp_path / "queue_worker.py").read_bytes() == Path(queue_worker.__file__).read_bytes()
    assert (tmp_path / "sqs_queue.py").read_bytes() == Path(sqs_queue.__file__).read_bytes()
    assert "ExecStart=/usr/bin/python3 /opt/accelstack/queue_worker.py" in script
    assert worker_env(script)["QUEUE_CLIENT"] == "sqs_queue"


def test_cross_account_model_grant_is_read_only_and_scoped_to_prefix():
    cap = run()
    policy = json.loads(named(cap, ROLE_POLICY, "-model-read").inputs["policy"])
    actions = {a for s in policy["Statement"] for a in s["Action"]}
    assert actions == {"s3:GetObject", "s3:ListBucket", "kms:Decrypt"}
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    assert by_sid["ReadModelArtifacts"]["Resource"] == [
        "arn:aws:s3:::acme-train-checkpoints/models/adapters/acme-support/*",
        "arn:aws:s3:::acme-train-checkpoints/models/adapters/globex-legal/*",
        "arn:aws:s3:::acme-train-checkpoints/models/llama-3.1-8b-instruct/*",
    ]
    (listing,) = [s for s in policy["Statement"] if s["Action"] == ["s3:ListBucket"]]
    assert listing["Resource"] == "arn:aws:s3:::acme-train-checkpoints"
    assert "models/llama-3.1-8b-instruct/*" in listing["Condition"]["StringLike"]["s3:prefix"]
    decrypt = by_sid["DecryptModelArtifactsViaS3"]
    # Only the training account's keys, only through S3, in whichever Region its bucket is: S3 calls
    # KMS in the bucket's Region, which the spec does not name (a us-west-2 bucket read from a
    # us-east-1 stack is denied by a policy pinned to s3.us-east-1).
    assert decrypt["Resource"] == "arn:aws:kms:*:111111111111:key/*"
    assert decrypt["Condition"] == {"StringLike": {"kms:ViaService": "s3.*.amazonaws.com"}}
    # Nothing anywhere in the serving stack can write to, or delete from, the training bucket.
    statements = [s for r in cap.by_type(ROLE_POLICY) for s in json.loads(r.inputs["policy"])["Statement"]]
    touching_training = [s for s in statements if "acme-train-checkpoints" in json.dumps(s)]
    assert touching_training
    for statement in touching_training:
        for verb in ("s3:Put", "s3:Delete", "s3:*", "s3:Abort", "s3:Restore", "s3:Replicate"):
            assert verb not in json.dumps(statement["Action"])


def test_every_custom_resource_on_the_serving_provider():
    cap = run()
    (provider,) = [r for r in cap.resources if r.is_provider]
    assert "222222222222" in provider.inputs["allowedAccountIds"]
    assert "111111111111" not in provider.inputs["allowedAccountIds"]
    reference = f"{provider.urn}::{provider.id}"
    custom = [r for r in cap.resources if r.custom and not r.is_provider]
    assert len(custom) > 40
    assert {r.provider for r in custom} == {reference}


def test_stack_outputs():
    outputs = run().stack_outputs
    assert outputs["endpoint"].startswith("https://")
    assert outputs["replicaGroup"] == "accelstack-aws-serving-replicas"
    assert outputs["backlogPerInstanceTarget"] == plan().backlog_per_instance_target


@pytest.mark.parametrize("override", ["serving.loadBalancer.accessLogs=false"])
def test_access_logs_can_be_disabled(override):
    cap = run(override)
    assert [b.name for b in cap.by_type("aws:s3/bucket:Bucket")] == ["aws-serving-net-flow-logs"]
    assert "accessLogs" not in cap.one("aws:lb/loadBalancer:LoadBalancer").inputs


FAKE_COMMAND = """#!/bin/bash
echo "$(basename "$0") $*" >> "$BOOT_LOG"
case "$(basename "$0") $*" in
  "curl -sfX PUT"*) echo token ;;
  *meta-data/instance-id*) echo i-0123456789abcdef0 ;;
  *meta-data/autoscaling/target-lifecycle-state*) echo "$TARGET_STATE" ;;
  "python3 -c"*) exit 1 ;;  # boto3 not installed yet
esac
"""


def boot_twice_as_a_warm_pool_replica(
    tmp_path: Path, heartbeat_every: str | None = None, pull_seconds: float = 0
) -> tuple[list[str], list[str]]:
    """Run the replica's boot script as EC2 would for a warm-pool instance: first start while the
    group targets Warmed:Stopped, then (after the stop) a start while it targets InService.
    Commands are fakes that log their arguments; returns each boot's log. `heartbeat_every` shortens
    the heartbeat period, `pull_seconds` makes the image pull that slow."""
    script = user_data(run())
    boot = script.split("cat > /opt/accelstack/boot.sh <<'BOOT'\n", 1)[1].split("\nBOOT\n", 1)[0]
    boot = boot.replace("/opt/accelstack/models", str(tmp_path / "models"))
    boot = boot.replace(STATUS_COMMAND, str(tmp_path / "bin" / "accelstack-replica-status"))
    if heartbeat_every is not None:
        assert "sleep 60 & sleeper=$!" in boot
        boot = boot.replace("sleep 60 & sleeper=$!", f"sleep {heartbeat_every} & sleeper=$!")
    if pull_seconds:
        boot = boot.replace("  docker pull ", f"  sleep {pull_seconds}; docker pull ", 1)
    (tmp_path / "models").mkdir()
    (tmp_path / "boot.sh").write_text(boot)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command in ("aws", "docker", "curl", "systemctl", "python3", "accelstack-replica-status"):
        (bin_dir / command).write_text(FAKE_COMMAND)
        (bin_dir / command).chmod(0o755)
    logs = []
    for state in ("Warmed:Stopped", "InService"):
        log = tmp_path / f"{state.replace(':', '-')}.log"
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "BOOT_LOG": str(log), "TARGET_STATE": state}
        subprocess.run(["bash", str(tmp_path / "boot.sh")], env=env, check=True, timeout=30)
        logs.append(log.read_text().splitlines())
    return logs[0], logs[1]


def test_warm_pool_replica_prepares_on_first_start_and_serves_on_the_second(tmp_path):
    hook = (
        "aws autoscaling complete-lifecycle-action --region us-east-1 --auto-scaling-group-name "
        "accelstack-aws-serving-replicas --lifecycle-hook-name replica-ready --instance-id i-0123456789abcdef0 "
        "--lifecycle-action-result CONTINUE"
    )
    prepare, serve = boot_twice_as_a_warm_pool_replica(tmp_path)
    # First start: weights, image and the worker's dependency onto EBS, then release the hook so the
    # group stops the instance into the pool; nothing is served.
    assert [line.split()[:3] for line in prepare if line.startswith("aws s3")] == [["aws", "s3", "sync"]] * 3
    assert any(line.startswith("docker pull vllm/vllm-openai:") for line in prepare)
    assert "python3 -m pip install --quiet boto3" in prepare
    assert not [line for line in prepare if line.startswith("systemctl")]
    assert prepare[-1] == hook
    # The boot status says the pooled instance is prepared, not serving (components/replica/boot_status.py).
    statuses = [line.split(" ", 1)[1] for line in prepare if line.startswith("accelstack-replica-status")]
    assert statuses == ["prepare running", "prepare ok", "prepared ok"]
    # Second start: nothing downloaded (a warm start must not wait on S3, the registry or PyPI);
    # server, then health, then worker, then the hook.
    assert not [line for line in serve if line.startswith(("aws s3", "docker", "python3"))]
    order = [line for line in serve if line.startswith(("systemctl", "curl -sf http://127.0.0.1", "aws autoscaling"))]
    assert order == [
        "systemctl start accelstack-inference.service",
        "curl -sf http://127.0.0.1:8000/health",
        "systemctl start accelstack-queue-worker.service",
        hook,
    ]
    statuses = [line.split(" ", 1)[1] for line in serve if line.startswith("accelstack-replica-status")]
    assert statuses == ["prepare running", "prepare ok", "server running", "health running", "serving ok"]


def test_replica_holds_the_launch_hook_open_while_it_loads_and_stops_when_done(tmp_path):
    """U4: a slow first prepare (weights, a registry pull through NAT) must not outlive the hook's
    short timeout: heartbeats keep it open, and stop once the hook is completed."""
    prepare, _serve = boot_twice_as_a_warm_pool_replica(tmp_path, heartbeat_every="0.2", pull_seconds=2)
    beats = [i for i, line in enumerate(prepare) if "record-lifecycle-action-heartbeat" in line]
    done = max(i for i, line in enumerate(prepare) if "complete-lifecycle-action" in line)
    assert len(beats) >= 3 and max(beats) < done
    assert "--lifecycle-hook-name replica-ready --instance-id i-0123456789abcdef0" in prepare[beats[0]]
    time.sleep(0.5)  # a heartbeat loop left running would keep logging
    assert (tmp_path / "Warmed-Stopped.log").read_text().splitlines() == prepare


def test_replica_role_may_heartbeat_and_complete_only_its_own_hook():
    [policy] = [p for p in run().by_type(ROLE_POLICY) if p.name.endswith("-replica-queues")]
    [hook] = [s for s in json.loads(policy.inputs["policy"])["Statement"] if s["Sid"] == "CompleteOwnLaunchHook"]
    assert hook["Action"] == ["autoscaling:CompleteLifecycleAction", "autoscaling:RecordLifecycleActionHeartbeat"]
    assert hook["Resource"].endswith(":autoScalingGroupName/accelstack-aws-serving-replicas")


def test_a_config_edit_that_does_not_touch_replicas_does_not_roll_the_fleet() -> None:
    """A new launch template version starts an instance refresh of every replica; an edge rate limit or
    queue-depth alarm edit changes the config digest (tags) but must not change the template."""
    template = "aws:ec2/launchTemplate:LaunchTemplate"
    base, edited = run(), run("serving.admission.perClientRate=500", "serving.admission.maxDepth=5000")
    assert named(base, template, "-replica").inputs == named(edited, template, "-replica").inputs
    # The digest still reaches the instances, through the group's propagated tags.
    tags = {t["key"]: t for t in named(edited, GROUP, "-replicas").inputs["tags"]}
    assert tags["accelstack:config-digest"]["propagateAtLaunch"] is True
    assert (
        tags["accelstack:config-digest"]["value"]
        != {t["key"]: t for t in named(base, GROUP, "-replicas").inputs["tags"]}["accelstack:config-digest"]["value"]
    )


def test_waf_logs_every_verdict_to_an_encrypted_aws_waf_logs_group_with_credentials_redacted():
    """WAF refuses a destination not named aws-waf-logs-*; CloudWatch Logs refuses a key its policy
    does not open to logs.REGION for that group; delivery needs the group's resource policy first."""
    cap = run()
    group = cap.one("aws:cloudwatch/logGroup:LogGroup")
    assert group.inputs["name"] == "aws-waf-logs-aws-serving"
    assert group.inputs["retentionInDays"] == 365
    key = named(cap, "aws:kms/key:Key", "-key")
    assert group.inputs["kmsKeyId"] == key.outputs["arn"]
    [logs] = [s for s in json.loads(key.inputs["policy"])["Statement"] if s["Principal"].get("Service")]
    assert logs["Principal"] == {"Service": "logs.us-east-1.amazonaws.com"}
    assert logs["Condition"] == {
        "ArnEquals": {
            "kms:EncryptionContext:aws:logs:arn": "arn:aws:logs:us-east-1:222222222222:log-group:aws-waf-logs-aws-serving"
        }
    }
    config = cap.one("aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration")
    assert config.inputs["resourceArn"] == cap.one("aws:wafv2/webAcl:WebAcl").outputs["arn"]
    assert config.inputs["logDestinationConfigs"] == [group.outputs["arn"]]
    redacted = [f["singleHeader"]["name"] for f in config.inputs["redactedFields"]]
    assert "authorization" in redacted and all(name == name.lower() for name in redacted)
    resource_policy = cap.one("aws:cloudwatch/logResourcePolicy:LogResourcePolicy")
    assert resource_policy.urn in config.dependencies
    [delivery] = json.loads(resource_policy.inputs["policyDocument"])["Statement"]
    assert delivery["Principal"] == {"Service": "delivery.logs.amazonaws.com"}
    assert delivery["Resource"] == f"{group.outputs['arn']}:*"
    assert delivery["Condition"]["StringEquals"] == {"aws:SourceAccount": "222222222222"}


def test_accelstack_render_writes_the_user_data_the_replicas_boot_with(tmp_path):
    from typer.testing import CliRunner

    from accelstack.cli import app

    deployed = user_data(run())
    env = worker_env(deployed)
    result = CliRunner().invoke(app, ["render", STACK, "--out", str(tmp_path), "--project-dir", str(REPO)])
    assert result.exit_code == 0, result.output
    rendered = (tmp_path / "replica-user-data.sh").read_text()
    # Identical up to the queue URLs, which exist only once the queues do.
    assert "${REQUEST_QUEUE_URL}" in rendered and "${RESPONSE_QUEUE_URL}" in rendered
    expected = deployed.replace(env["REQUEST_QUEUE_URL"], "${REQUEST_QUEUE_URL}").replace(
        env["RESPONSE_QUEUE_URL"], "${RESPONSE_QUEUE_URL}"
    )
    assert rendered == expected
    assert (tmp_path / "replica-user-data.sh").stat().st_mode & 0o111
