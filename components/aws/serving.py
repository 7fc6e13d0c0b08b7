"""The AWS serving service: ALB (HTTPS only, WAF rate limit per client) -> replicas in private
subnets, an SQS admission queue the replicas drain, and an Auto Scaling group that scales on
backlog per instance with a warm pool of stopped, pre-pulled replicas.

Sizing (cold start, warm pool, health-check timing, backlog target) is pure and lives in the planner
(`accelstack.planner.serving_plan.ServingPlan`), so it can be tested and reported without Pulumi.
"""

from __future__ import annotations

import base64
import bz2
import hashlib
import json
import math
import shlex
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import pulumi
import pulumi_aws as aws

from accelstack.spec import StackSpec
from accelstack.planner.serving_plan import (
    AGE_ALARM_TTL_FRACTION,
    HEALTHY_THRESHOLD,
    ROOT_VOLUME_IOPS,
    ROOT_VOLUME_THROUGHPUT_MIBPS,
    UNHEALTHY_THRESHOLD,
    ServingPlan,
    plan_serving,
)
from accelstack.spec.aws_serving_rules import LOAD_BALANCER_SUFFIX, TARGET_GROUP_SUFFIX
from accelstack.spec.models import ServingSpec
from accelstack.spec.tables import aws as tables
from components.aws.kms import service_host, stack_key_policy
from components.aws.network import ServingNetwork
from components.aws.provider import group_stack_tags, group_tags, launch_template_tag_specifications
from components.aws.storage import SecureBucket
from components.slurm import aws_cli_function

# Sizing (cold start, warm pool, health-check timing, backlog target, timeouts) is pure planner code,
# shared with `accelstack preview`'s derived-defaults table so both always show the same numbers.
ROOT_DEVICE = "/dev/sda1"  # Ubuntu DLAMI root device
MODEL_DIR = "/opt/accelstack/models"


# --- ELB access-log delivery ----------------------------------------------------------------------

# Source: ELB User Guide "Enable access logs for your Application Load Balancer", step 2 (checked
# 2026-12-02): Regions available before August 2022 deliver logs as the regional ELB account; newer
# Regions use the logdelivery.elasticloadbalancing.amazonaws.com service principal (granted always).
ELB_LOG_ACCOUNTS: dict[str, str] = {
    "us-east-1": "127311923021", "us-east-2": "033677994240", "us-west-1": "027434742980",
    "us-west-2": "797873946194", "af-south-1": "098369216593", "ap-east-1": "754344448648",
    "ap-southeast-3": "589379963580", "ap-south-1": "718504428378", "ap-northeast-3": "383597477331",
    "ap-northeast-2": "600734575887", "ap-southeast-1": "114774131450", "ap-southeast-2": "783225319266",
    "ap-northeast-1": "582318560864", "ca-central-1": "985666609251", "eu-central-1": "054676820928",
    "eu-west-1": "156460612806", "eu-west-2": "652711504416", "eu-south-1": "635631232127",
    "eu-west-3": "009996457667", "eu-north-1": "897822967062", "me-south-1": "076674570225",
    "sa-east-1": "507241528517", "us-gov-west-1": "048591011584", "us-gov-east-1": "190560391635",
    "cn-north-1": "638102146993", "cn-northwest-1": "037604701340",
}  # fmt: skip
ACCESS_LOG_PREFIX = "alb"
ACCESS_LOG_NONCURRENT_VERSION_DAYS = 30
WAF_LOG_PREFIX = "aws-waf-logs-"
WAF_LOG_RETENTION_DAYS = 365  # a year, as the S3 log buckets (Checkov CKV_AWS_338)
# Credentials never reach the logs: WAF writes these headers as REDACTED.
WAF_REDACTED_HEADERS = ("authorization", "cookie", "x-api-key")
KNOWN_BAD_INPUTS = "AWSManagedRulesKnownBadInputsRuleSet"


def elb_log_delivery_statements(bucket_arn: str, account_id: str, region: str, partition: str) -> list[dict[str, Any]]:
    objects = f"{bucket_arn}/{ACCESS_LOG_PREFIX}/AWSLogs/{account_id}/*"
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ElbLogDelivery",
            "Effect": "Allow",
            "Principal": {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"},
            "Action": "s3:PutObject",
            "Resource": objects,
        }
    ]
    if region in ELB_LOG_ACCOUNTS:
        statements.append(
            {
                "Sid": "ElbLogDeliveryLegacyRegion",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:{partition}:iam::{ELB_LOG_ACCOUNTS[region]}:root"},
                "Action": "s3:PutObject",
                "Resource": objects,
            }
        )
    return statements


# --- The serving key ------------------------------------------------------------------------------


def waf_log_group_name(stack: str) -> str:
    """WAF logs only to destinations named `aws-waf-logs-*` (WAF developer guide, "Logging
    destinations"): PutLoggingConfiguration refuses any other log group."""
    return f"{WAF_LOG_PREFIX}{stack}"


def serving_key_policy(account_id: str, region: str, partition: str, *, waf_log_group: str | None = None) -> dict[str, Any]:
    """Replica volumes (encrypted EBS launched by Auto Scaling) use the key through EC2; the queues'
    producers and consumers use it through their IAM permissions. CloudWatch Logs encrypts the WAF
    log group with it: CreateLogGroup with a key fails unless the key policy lets the Region's logs
    service principal use it, for that log group only (CloudWatch Logs user guide, "Encrypt log data
    in CloudWatch Logs using AWS KMS", kms:EncryptionContext:aws:logs:arn)."""
    logs = []
    if waf_log_group:
        logs.append(
            {
                "Sid": "CloudWatchLogsEncryptsTheWafLogGroup",
                "Effect": "Allow",
                "Principal": {"Service": f"logs.{region}.amazonaws.com"},
                "Action": ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
                "Resource": "*",
                "Condition": {
                    "ArnEquals": {
                        "kms:EncryptionContext:aws:logs:arn": f"arn:{partition}:logs:{region}:{account_id}:log-group:{waf_log_group}"
                    }
                },
            }
        )
    return stack_key_policy(
        account_id, region, ["ec2"], sid="EbsThroughEc2InThisAccount", partition=partition, extra_statements=logs
    )


# --- Cross-account model read -----------------------------------------------------------------------


def s3_location(uri: str) -> tuple[str, str]:
    """`s3://bucket/models/x/` -> ("bucket", "models/x/")."""
    parts = urlsplit(uri)
    return parts.netloc, parts.path.lstrip("/")


def model_read_policy(serving: ServingSpec, account_id: str, partition: str) -> dict[str, Any]:
    """Read-only access to exactly the model's and adapters' prefixes: GetObject below each prefix,
    ListBucket limited to it, and KMS decrypt only through S3 (the training account's key)."""
    locations = sorted({s3_location(u) for u in [serving.model.weights_uri, *(a.uri for a in serving.model.adapters)]})
    key_account = serving.artifact_account or account_id
    statements: list[dict[str, Any]] = [
        {
            "Sid": "ReadModelArtifacts",
            "Effect": "Allow",
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:{partition}:s3:::{bucket}/{prefix}*" for bucket, prefix in locations],
        }
    ]
    for index, bucket in enumerate(sorted({bucket for bucket, _ in locations})):
        statements.append(
            {
                "Sid": f"ListModelPrefix{index}",
                "Effect": "Allow",
                "Action": ["s3:ListBucket"],
                "Resource": f"arn:{partition}:s3:::{bucket}",
                "Condition": {"StringLike": {"s3:prefix": [f"{p}*" for b, p in locations if b == bucket]}},
            }
        )
    # The artifact bucket (and so its key) may be in another Region than this stack: the spec names
    # its account, not its Region. S3 calls KMS in the bucket's Region, so any Region, via S3 only.
    statements.append(
        {
            "Sid": "DecryptModelArtifactsViaS3",
            "Effect": "Allow",
            "Action": ["kms:Decrypt"],
            "Resource": f"arn:{partition}:kms:*:{key_account}:key/*",
            "Condition": {"StringLike": {"kms:ViaService": service_host("s3", "*")}},
        }
    )
    return {"Version": "2012-10-17", "Statement": statements}


# --- Replica boot ---------------------------------------------------------------------------------


def server_arguments(serving: ServingSpec, plan: ServingPlan) -> list[str]:
    """vLLM OpenAI-compatible server flags: one base model, every LoRA adapter served beside it."""
    model = serving.model
    args = [
        "--model", f"/models/base",
        "--served-model-name", model.name,
        "--port", str(serving.load_balancer.port),
        "--max-model-len", str(model.context_length),
        "--tensor-parallel-size", str(plan.tensor_parallel),
    ]  # fmt: skip
    dtype = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}.get(model.precision)
    if dtype:
        args += ["--dtype", dtype]
    elif model.precision == "fp8":
        args += ["--quantization", "fp8"]  # dynamic FP8 on Ada/Hopper; pre-quantized checkpoints load as-is
    # int8/int4: the checkpoint itself is quantized (AWQ/GPTQ); vLLM reads the method from its config.
    if model.adapters:
        args += [
            "--enable-lora",
            "--max-loras", str(len(model.adapters)),
            "--max-lora-rank", str(max(a.rank for a in model.adapters)),
            "--lora-modules", *(f"{a.name}=/models/adapters/{a.name}" for a in model.adapters),
        ]  # fmt: skip
    return args


# The admission-queue worker is a real module (tested against a local SQS and inference server);
# it ships verbatim inside the user data, bzip2-compressed and base64-encoded: raw it would push the
# script past EC2's 16 KB user-data limit. Not gzip: zlib and zlib-ng (Fedora's zlib) compress the
# same bytes differently, and changed user data means a new launch template version and a rolling
# instance refresh of the whole fleet; bzip2's output has not changed in over a decade.
QUEUE_WORKER_SOURCE = resources.files("components.aws.replica").joinpath("queue_worker.py").read_bytes()
USER_DATA_LIMIT_BYTES = 16_384  # EC2: raw user data, before base64


def embedded_worker() -> str:
    """The worker's source as base64 lines of its bzip2 (deterministic: same source, same text)."""
    return base64.encodebytes(bz2.compress(QUEUE_WORKER_SOURCE, 9)).decode().rstrip("\n")


def worker_environment(
    serving: ServingSpec, plan: ServingPlan, *, region: str, request_queue_url: str, response_queue_url: str
) -> dict[str, str]:
    """What the worker reads (`components.aws.replica.queue_worker.Config.from_env`)."""
    return {
        "AWS_REGION": region,
        "REQUEST_QUEUE_URL": request_queue_url,
        "RESPONSE_QUEUE_URL": response_queue_url,
        "SERVER_PORT": str(serving.load_balancer.port),
        "TTL_SECONDS": str(serving.admission.ttl_seconds),
        "WORKER_CONCURRENCY": str(plan.concurrency),  # the same N the backlog target is multiplied by
        "VISIBILITY_TIMEOUT": str(plan.visibility_timeout_seconds),
        "GENERATION_TIMEOUT_SECONDS": str(plan.generation_timeout_seconds),
        "DRAIN_SECONDS": str(plan.worker_drain_seconds),
    }


def replica_user_data(
    serving: ServingSpec,
    plan: ServingPlan,
    *,
    region: str,
    group_name: str,
    hook_name: str,
    request_queue_url: str,
    response_queue_url: str,
) -> str:
    """Cloud-init script. It installs a boot unit that runs on EVERY boot, because warm-pool
    instances boot twice: once to prepare (pull image and weights onto EBS, then stop) and again
    when they enter service (start the server). Each boot completes the launch lifecycle hook only
    when its job is done, so an instance never goes to the pool or into service half-prepared."""
    model = serving.model
    syncs = [f"aws s3 sync --only-show-errors {shlex.quote(model.weights_uri)} {MODEL_DIR}/base"]
    syncs += [
        f"aws s3 sync --only-show-errors {shlex.quote(a.uri)} {MODEL_DIR}/adapters/{a.name}" for a in model.adapters
    ]
    server = " ".join(shlex.quote(a) for a in server_arguments(serving, plan))
    image = shlex.quote(serving.replicas.server_image)
    port = serving.load_balancer.port
    health = shlex.quote(serving.load_balancer.health_path)
    sync_block = "\n".join(f"  {line}" for line in syncs)
    env = worker_environment(
        serving, plan, region=region, request_queue_url=request_queue_url, response_queue_url=response_queue_url
    )
    env_lines = "\n".join(f"Environment={key}={value}" for key, value in env.items())
    # systemd waits for: the last long poll (20 s), the drain, and the release of what is left.
    stop_timeout = plan.worker_drain_seconds + 30
    worker_sha256 = hashlib.sha256(QUEUE_WORKER_SOURCE).hexdigest()
    budget = plan.lifecycle_heartbeat_seconds
    heartbeat_every = READY_HOOK_HEARTBEAT_EVERY_SECONDS
    return f"""#!/bin/bash
set -euo pipefail
{aws_cli_function()}ensure_aws_cli  # the boot script syncs weights and completes the hook with it
mkdir -p /opt/accelstack {MODEL_DIR}
# components/aws/replica/queue_worker.py, sha256 {worker_sha256}
python3 -c 'import base64, bz2, sys; sys.stdout.buffer.write(bz2.decompress(base64.b64decode(sys.stdin.read())))' \\
  > /opt/accelstack/queue_worker.py <<'B64'
{embedded_worker()}
B64
cat > /etc/systemd/system/accelstack-inference.service <<'UNIT'
[Unit]
Description=accelstack inference server ({model.name})
After=docker.service
Requires=docker.service
[Service]
Restart=always
ExecStartPre=-/usr/bin/docker rm -f inference
ExecStart=/usr/bin/docker run --name inference --gpus all --network host --ipc host -v {MODEL_DIR}:/models:ro {image} {server}
[Install]
WantedBy=multi-user.target
UNIT
cat > /etc/systemd/system/accelstack-queue-worker.service <<'UNIT'
[Unit]
Description=accelstack admission-queue worker
After=accelstack-inference.service
[Service]
Restart=always
RestartSec=5
{env_lines}
ExecStart=/usr/bin/python3 /opt/accelstack/queue_worker.py
# SIGTERM: stop receiving, finish in-flight requests for DRAIN_SECONDS, release the rest.
KillSignal=SIGTERM
TimeoutStopSec={stop_timeout}
UNIT
cat > /opt/accelstack/boot.sh <<'BOOT'
#!/bin/bash
set -euo pipefail
imds() {{
  local token
  token=$(curl -sfX PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
  curl -sf -H "X-aws-ec2-metadata-token: $token" "http://169.254.169.254/latest/meta-data/$1"
}}
hook() {{
  aws autoscaling "$1" --region {region} --auto-scaling-group-name {group_name} \\
    --lifecycle-hook-name {hook_name} --instance-id "$(imds instance-id)" "${{@:2}}" || true
}}
# The hook's own timeout is short and fixed; a heartbeat every {heartbeat_every} s holds it open while
# weights and the image load, for at most the planner's budget. A replica still not ready then, or
# one that hangs, is abandoned (and replaced) one hook timeout later.
heartbeats() {{
  local sleeper
  trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  while [ "$SECONDS" -lt {budget} ]; do
    sleep {heartbeat_every} & sleeper=$!
    wait "$sleeper"
    hook record-lifecycle-action-heartbeat
  done
}}
heartbeats & heartbeat_pid=$!
complete() {{
  # Stop the heartbeats, and let one in flight finish, before the hook's result goes out.
  kill "$heartbeat_pid" 2>/dev/null || true
  wait "$heartbeat_pid" 2>/dev/null || true
  hook complete-lifecycle-action --lifecycle-action-result "$1"
}}
trap 'complete ABANDON' ERR
if [ ! -f {MODEL_DIR}/.complete ]; then
  # Weights live on the encrypted EBS root volume: instance-store NVMe is wiped when a warm-pool
  # instance stops, EBS keeps the download across the stop.
{sync_block}
  docker pull {image}
  # The worker's one dependency, installed while preparing: a warm start must not need the network.
  python3 -c 'import boto3' 2>/dev/null || python3 -m pip install --quiet boto3
  touch {MODEL_DIR}/.complete
fi
state=$(imds autoscaling/target-lifecycle-state || echo InService)
if [[ "$state" == Warmed:* ]]; then
  complete CONTINUE  # prepared: the group stops the instance into the warm pool
  exit 0
fi
systemctl start accelstack-inference.service
until curl -sf http://127.0.0.1:{port}{health} >/dev/null; do sleep 5; done
systemctl start accelstack-queue-worker.service
complete CONTINUE
BOOT
chmod +x /opt/accelstack/boot.sh
cat > /etc/systemd/system/accelstack-boot.service <<'UNIT'
[Unit]
Description=accelstack replica boot (prepare or serve)
After=network-online.target docker.service
Wants=network-online.target
[Service]
Type=oneshot
ExecStart=/opt/accelstack/boot.sh
[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable accelstack-boot.service
systemctl start --no-block accelstack-boot.service
"""


def user_data_size_problem(serving: ServingSpec, plan: ServingPlan, *, region: str, account_id: str, group_name: str) -> str | None:
    """The replica user data rendered with the longest queue URLs SQS can give (names <= 80
    characters) must stay under EC2's limit; each LoRA adapter adds a sync line and a server flag."""
    longest_url = f"https://sqs.{region}.amazonaws.com/{account_id}/{'q' * 80}"
    size = len(
        replica_user_data(
            serving, plan, region=region, group_name=group_name, hook_name=READY_HOOK,
            request_queue_url=longest_url, response_queue_url=longest_url,
        ).encode()
    )  # fmt: skip
    if size < USER_DATA_LIMIT_BYTES:
        return None
    return (
        f"serving.model.adapters: {len(serving.model.adapters)} adapter(s) make the replica user data {size} bytes, "
        f"over EC2's {USER_DATA_LIMIT_BYTES}-byte limit; serve fewer adapters per stack or shorten their names and URIs"
    )


# --- The component ----------------------------------------------------------------------------------

GROUP_METRICS = [
    "GroupInServiceInstances",  # the denominator of backlog per instance
    "GroupDesiredCapacity",
    "GroupPendingInstances",
    "GroupTotalInstances",
    "GroupMinSize",
    "GroupMaxSize",
    "WarmPoolWarmedCapacity",
    "WarmPoolPendingCapacity",
    "WarmPoolDesiredCapacity",
]
TLS_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"
# CloudWatch metric math: IF(condition, true, false) with comparison and AND operators, FILL(m, 0).
SCALE_FROM_ZERO_EXPRESSION = "IF(depth > 0 AND FILL(inservice, 0) == 0, 1, 0)"
READY_HOOK = "replica-ready"
# The launch hook's fields are constants on purpose: `initial_lifecycle_hook` is ForceNew on
# aws_autoscaling_group, and the group has a fixed name, so any change deletes the whole group (every
# replica and the warm pool) before creating it again. The planner's cold-start budget lives in the
# replica's boot script instead (heartbeats), which a new template version rolls out in place.
# A separate aws.autoscaling.LifecycleHook would update in place, but is attached only after the
# group's first instances launched (provider docs), so those would skip preparation.
READY_HOOK_HEARTBEAT_TIMEOUT_SECONDS = 300
READY_HOOK_HEARTBEAT_EVERY_SECONDS = 60


class ServingService(pulumi.ComponentResource):
    def __init__(self, spec: StackSpec, digest: str, opts: pulumi.ResourceOptions):
        super().__init__("accelstack:aws:ServingService", spec.stack, None, opts)
        assert spec.serving is not None
        self.spec, self.serving = spec, spec.serving
        self.plan = plan_serving(spec.serving)
        self.region = spec.account.region
        self.account_id = spec.account.id
        self.partition = tables.REGIONS.get(self.region, "aws")
        self.tags = group_stack_tags(spec, digest)
        name = spec.stack
        self.child = pulumi.ResourceOptions(parent=self)

        self.network = ServingNetwork(
            f"{name}-net", self.serving.network, self.region, opts=self.child, instance_type=self.serving.replicas.instance_type
        )
        self.key = self._kms_key(name)
        self.queues = self._queues(name)
        self.alb_sg, self.replica_sg = self._security_groups(name)
        self.load_balancer, self.target_group = self._load_balancer(name)
        self._waf(name)
        self.group = self._replica_group(name)
        self._scaling(name)
        self._alarms(name)

        endpoint = self.load_balancer.dns_name.apply(lambda dns: f"https://{dns}")
        outputs = {
            "endpoint": endpoint,
            "requestQueueUrl": self.queues["requests"].url,
            "responseQueueUrl": self.queues["responses"].url,
            "deadLetterQueueUrl": self.queues["dead-letters"].url,
            "replicaGroupName": self.group.name,
            "coldStartSeconds": self.plan.cold_start_seconds,
            "warmPoolSize": self.plan.warm_pool_size,
            "backlogPerInstanceTarget": self.plan.backlog_per_instance_target,
            "configDigest": digest,
        }
        for key, value in outputs.items():
            pulumi.export(key, value)
        self.register_outputs(outputs)

    # KMS: EBS volumes and queues. Auto Scaling launches replicas as its service-linked role, which
    # must be able to use the key or instances with encrypted volumes fail to launch. The role is
    # not named here: it exists only once the account's first group is created, and KMS refuses a
    # key policy naming a missing principal (MalformedPolicyDocumentException) -- exactly the case
    # in a fresh serving account. The statement is the AWS managed aws/ebs key's: any principal of
    # this account, only through EC2 in this Region (the service-linked role calls KMS via EC2).
    def _kms_key(self, name: str) -> aws.kms.Key:
        policy = serving_key_policy(self.account_id, self.region, self.partition, waf_log_group=waf_log_group_name(name))
        key = aws.kms.Key(
            f"{name}-key",
            description=f"accelstack serving {name}: replica volumes and admission queues",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            policy=json.dumps(policy),
            # Encrypts replica volumes (weights) and queued requests: deleting it loses them.
            opts=pulumi.ResourceOptions.merge(self.child, pulumi.ResourceOptions(protect=True)),
        )
        aws.kms.Alias(
            f"{name}-key",
            name=f"alias/accelstack-{name}-serving",
            target_key_id=key.key_id,
            # Alias names are unique per account and Region: a replacement must free the name first.
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
        )
        return key

    def _queues(self, name: str) -> dict[str, aws.sqs.Queue]:
        admission, plan = self.serving.admission, self.plan
        encryption = {"kms_master_key_id": self.key.arn, "kms_data_key_reuse_period_seconds": 300}
        dead_letters = aws.sqs.Queue(
            f"{name}-dead-letters",
            message_retention_seconds=1_209_600,  # 14 days, the maximum: time to inspect failures
            **encryption,
            opts=self.child,
        )
        redrive = dead_letters.arn.apply(
            lambda arn: json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": admission.max_receive_count})
        )
        requests = aws.sqs.Queue(
            f"{name}-requests",
            message_retention_seconds=admission.ttl_seconds,  # the request TTL: SQS drops expired requests
            visibility_timeout_seconds=plan.visibility_timeout_seconds,
            receive_wait_time_seconds=20,  # long polling
            redrive_policy=redrive,
            tags={
                # Producers enforce admission before SendMessage; the policy travels with the queue.
                "accelstack:max-depth": str(admission.max_depth),
                "accelstack:ttl-seconds": str(admission.ttl_seconds),
            },
            **encryption,
            opts=self.child,
        )
        responses = aws.sqs.Queue(
            f"{name}-responses",
            message_retention_seconds=max(60, admission.ttl_seconds),
            receive_wait_time_seconds=20,
            # A response a client keeps failing to process is kept for inspection, not redelivered forever.
            redrive_policy=redrive,
            **encryption,
            opts=self.child,
        )
        aws.sqs.RedriveAllowPolicy(
            f"{name}-dead-letters",
            queue_url=dead_letters.url,
            redrive_allow_policy=pulumi.Output.all(requests.arn, responses.arn).apply(
                lambda arns: json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": list(arns)})
            ),
            opts=self.child,
        )
        return {"requests": requests, "responses": responses, "dead-letters": dead_letters}

    def _security_groups(self, name: str) -> tuple[aws.ec2.SecurityGroup, aws.ec2.SecurityGroup]:
        port = self.serving.load_balancer.port
        alb_sg = aws.ec2.SecurityGroup(
            f"{name}-alb",
            vpc_id=self.network.vpc_id,
            description="accelstack serving load balancer: HTTPS (and HTTP for the redirect) from anywhere",
            tags={"Name": f"{name}-alb"},
            opts=self.child,
        )
        replica_sg = aws.ec2.SecurityGroup(
            f"{name}-replicas",
            vpc_id=self.network.vpc_id,
            description="accelstack serving replicas: the inference port from the load balancer only",
            tags={"Name": f"{name}-replicas"},
            opts=self.child,
        )
        for listen_port in (443, 80):
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-alb-in-{listen_port}",
                security_group_id=alb_sg.id,
                ip_protocol="tcp",
                from_port=listen_port,
                to_port=listen_port,
                cidr_ipv4="0.0.0.0/0",
                description="HTTPS clients" if listen_port == 443 else "HTTP, redirected to HTTPS",
                opts=self.child,
            )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-alb-to-replicas",
            security_group_id=alb_sg.id,
            ip_protocol="tcp",
            from_port=port,
            to_port=port,
            referenced_security_group_id=replica_sg.id,
            description="requests and health checks to replicas",
            opts=self.child,
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-replicas-from-alb",
            security_group_id=replica_sg.id,
            ip_protocol="tcp",
            from_port=port,
            to_port=port,
            referenced_security_group_id=alb_sg.id,
            description="inference server port from the load balancer only",
            opts=self.child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-replicas-egress",
            security_group_id=replica_sg.id,
            ip_protocol="-1",
            cidr_ipv4="0.0.0.0/0",
            description="S3 (endpoint), SQS, container registry (NAT)",
            opts=self.child,
        )
        return alb_sg, replica_sg

    def _access_log_bucket(self, name: str) -> SecureBucket:
        account, region, partition = self.account_id, self.region, self.partition
        # ALB log delivery supports SSE-S3 only (not SSE-KMS), so this one bucket is AES256.
        return SecureBucket(
            f"{name}-alb-logs",
            kms_key_arn=None,
            sse_algorithm="AES256",
            # Versioned: a deleted or overwritten log stays recoverable for a while, not forever.
            noncurrent_version_days=ACCESS_LOG_NONCURRENT_VERSION_DAYS,
            policy_statements=lambda arn: arn.apply(
                lambda a: elb_log_delivery_statements(a, account, region, partition)
            ),
            opts=self.child,
        )

    def _load_balancer(self, name: str) -> tuple[aws.lb.LoadBalancer, aws.lb.TargetGroup]:
        lb_spec, plan = self.serving.load_balancer, self.plan
        access_logs = None
        depends_on: list[pulumi.Resource] = []
        if lb_spec.access_logs:
            logs = self._access_log_bucket(name)
            access_logs = aws.lb.LoadBalancerAccessLogsArgs(bucket=logs.name_out, prefix=ACCESS_LOG_PREFIX, enabled=True)
            depends_on = [logs.policy]  # ELB tests write access when logging is enabled
        # Logical names are the auto-name prefixes; the spec checks they fit ELB's 32 characters.
        alb = aws.lb.LoadBalancer(
            f"{name}{LOAD_BALANCER_SUFFIX}",
            load_balancer_type="application",
            internal=False,
            subnets=self.network.public_subnet_ids,
            security_groups=[self.alb_sg.id],
            drop_invalid_header_fields=True,
            enable_deletion_protection=True,
            idle_timeout=plan.idle_timeout_seconds,
            access_logs=access_logs,
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
        )
        target_group = aws.lb.TargetGroup(
            f"{name}{TARGET_GROUP_SUFFIX}",
            port=lb_spec.port,
            protocol="HTTP",
            target_type="instance",
            vpc_id=self.network.vpc_id,
            # Generations vary from milliseconds to minutes: route to the replica with fewest in flight.
            load_balancing_algorithm_type="least_outstanding_requests",
            deregistration_delay=plan.deregistration_delay_seconds,
            health_check=aws.lb.TargetGroupHealthCheckArgs(
                enabled=True,
                path=lb_spec.health_path,
                port="traffic-port",
                protocol="HTTP",
                matcher="200",
                interval=plan.health_check_interval_seconds,
                timeout=plan.health_check_timeout_seconds,
                healthy_threshold=HEALTHY_THRESHOLD,
                unhealthy_threshold=UNHEALTHY_THRESHOLD,
            ),
            opts=self.child,
        )
        aws.lb.Listener(
            f"{name}-https",
            load_balancer_arn=alb.arn,
            port=443,
            protocol="HTTPS",
            ssl_policy=TLS_POLICY,
            certificate_arn=lb_spec.certificate_arn,
            default_actions=[aws.lb.ListenerDefaultActionArgs(type="forward", target_group_arn=target_group.arn)],
            opts=self.child,
        )
        aws.lb.Listener(
            f"{name}-http-redirect",
            load_balancer_arn=alb.arn,
            port=80,
            protocol="HTTP",
            default_actions=[
                aws.lb.ListenerDefaultActionArgs(
                    type="redirect",
                    redirect=aws.lb.ListenerDefaultActionRedirectArgs(protocol="HTTPS", port="443", status_code="HTTP_301"),
                )
            ],
            opts=self.child,
        )
        return alb, target_group

    def _waf(self, name: str) -> None:
        admission = self.serving.admission
        metric = name.replace("-", "")

        def visibility(suffix: str) -> aws.wafv2.WebAclVisibilityConfigArgs:
            return aws.wafv2.WebAclVisibilityConfigArgs(
                cloudwatch_metrics_enabled=True, metric_name=f"{metric}{suffix}", sampled_requests_enabled=True
            )

        # The per-client rate rule first (cheapest, stops floods before anything else is evaluated),
        # then AWS's known-bad-inputs group (Log4j JNDI lookups, Java deserialization, localhost Host
        # headers, ...; Checkov CKV_AWS_192). Not the common rule set: its
        # SizeRestrictions_BODY blocks bodies over 8 KB, which long prompts routinely exceed; the
        # known-bad-inputs group has no size rule (WAF developer guide, "Baseline rule groups").
        acl = aws.wafv2.WebAcl(
            f"{name}-edge",
            scope="REGIONAL",
            description="accelstack serving edge admission: per-client request rate, known bad inputs",
            default_action=aws.wafv2.WebAclDefaultActionArgs(allow=aws.wafv2.WebAclDefaultActionAllowArgs()),
            rules=[
                aws.wafv2.WebAclRuleArgs(
                    name="rate-per-client-ip",
                    priority=0,
                    action=aws.wafv2.WebAclRuleActionArgs(block=aws.wafv2.WebAclRuleActionBlockArgs()),
                    statement=aws.wafv2.WebAclRuleStatementArgs(
                        rate_based_statement=aws.wafv2.WebAclRuleStatementRateBasedStatementArgs(
                            aggregate_key_type="IP",
                            limit=admission.per_client_rate,
                            evaluation_window_sec=admission.rate_window_seconds,
                        )
                    ),
                    visibility_config=visibility("RatePerClient"),
                ),
                aws.wafv2.WebAclRuleArgs(
                    name="aws-known-bad-inputs",
                    priority=1,
                    # `none`: the group's own actions (block) apply; `count` would only observe.
                    override_action=aws.wafv2.WebAclRuleOverrideActionArgs(
                        none=aws.wafv2.WebAclRuleOverrideActionNoneArgs()
                    ),
                    statement=aws.wafv2.WebAclRuleStatementArgs(
                        managed_rule_group_statement=aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementArgs(
                            vendor_name="AWS", name=KNOWN_BAD_INPUTS
                        )
                    ),
                    visibility_config=visibility("KnownBadInputs"),
                ),
            ],
            visibility_config=visibility("Edge"),
            opts=self.child,
        )
        aws.wafv2.WebAclAssociation(
            f"{name}-edge",
            resource_arn=self.load_balancer.arn,
            web_acl_arn=acl.arn,
            # One web ACL per load balancer: a create-first replacement would associate the new ACL,
            # then deleting the old association would disassociate the load balancer from any ACL.
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
        )
        self._waf_logging(name, acl)

    def _waf_logging(self, name: str, acl: aws.wafv2.WebAcl) -> None:
        """Every request's WAF verdict (which rule, client, URI; Checkov CKV2_AWS_31) to a
        KMS-encrypted log group kept a year, credentials redacted."""
        group_name = waf_log_group_name(name)
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-waf-logs",
            name=group_name,
            retention_in_days=WAF_LOG_RETENTION_DAYS,
            kms_key_id=self.key.arn,  # the key policy lets logs.REGION use it for this group only
            opts=self.child,
        )
        # WAF would add this policy itself at PutLoggingConfiguration (if the deployer may call
        # logs:PutResourcePolicy), outside the stack; written here it is scoped to this group and
        # this account's log deliveries (WAF developer guide, "Permissions to publish logs to
        # CloudWatch Logs"). An account holds at most 10 resource policies per Region.
        partition, region, account = self.partition, self.region, self.account_id
        policy = aws.cloudwatch.LogResourcePolicy(
            f"{name}-waf-logs",
            policy_name=f"accelstack-{name}-waf-logs",
            policy_document=log_group.arn.apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Sid": "WafLogDelivery",
                                "Effect": "Allow",
                                "Principal": {"Service": "delivery.logs.amazonaws.com"},
                                "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                                "Resource": f"{arn}:*",
                                "Condition": {
                                    "StringEquals": {"aws:SourceAccount": account},
                                    "ArnLike": {"aws:SourceArn": f"arn:{partition}:logs:{region}:{account}:*"},
                                },
                            }
                        ],
                    }
                )
            ),
            opts=self.child,
        )
        aws.wafv2.WebAclLoggingConfiguration(
            f"{name}-waf-logs",
            resource_arn=acl.arn,
            log_destination_configs=[log_group.arn],
            redacted_fields=[
                aws.wafv2.WebAclLoggingConfigurationRedactedFieldArgs(
                    single_header=aws.wafv2.WebAclLoggingConfigurationRedactedFieldSingleHeaderArgs(name=header)
                )
                for header in WAF_REDACTED_HEADERS
            ],
            # logDestinationConfigs/resourceArn are ForceNew and a web ACL has one logging configuration:
            # a create-first replacement's delete would switch the new one off.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy], delete_before_replace=True),
        )

    def _replica_role(self, name: str, group_name: str) -> aws.iam.InstanceProfile:
        partition, region, account = self.partition, self.region, self.account_id
        role = aws.iam.Role(
            f"{name}-replica",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
                    ],
                }
            ),
            description="accelstack serving replica: read the model prefix, drain the admission queue",
            opts=self.child,
        )
        self.replica_role_policies: list[pulumi.Resource] = [
            aws.iam.RolePolicyAttachment(
                f"{name}-replica-{policy}",
                role=role.name,
                policy_arn=f"arn:{partition}:iam::aws:policy/{policy}",
                opts=self.child,
            )
            for policy in ("AmazonSSMManagedInstanceCore", "CloudWatchAgentServerPolicy")
        ]
        model_read = aws.iam.RolePolicy(
            f"{name}-replica-model-read",
            role=role.id,
            policy=json.dumps(model_read_policy(self.serving, account, partition)),
            opts=self.child,
        )
        queues = self.queues
        queue_policy = pulumi.Output.all(
            queues["requests"].arn, queues["responses"].arn, self.key.arn
        ).apply(
            lambda arns: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "DrainRequests",
                            "Effect": "Allow",
                            "Action": [
                                "sqs:ReceiveMessage",
                                "sqs:DeleteMessage",
                                "sqs:ChangeMessageVisibility",
                                "sqs:GetQueueAttributes",
                            ],
                            "Resource": arns[0],
                        },
                        {"Sid": "SendResponses", "Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": arns[1]},
                        {
                            "Sid": "QueueEncryption",
                            "Effect": "Allow",
                            "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
                            "Resource": arns[2],
                        },
                        {
                            "Sid": "CompleteOwnLaunchHook",
                            "Effect": "Allow",
                            "Action": ["autoscaling:CompleteLifecycleAction", "autoscaling:RecordLifecycleActionHeartbeat"],
                            "Resource": f"arn:{partition}:autoscaling:{region}:{account}:autoScalingGroup:*:autoScalingGroupName/{group_name}",
                        },
                    ],
                }
            )
        )
        queues_policy = aws.iam.RolePolicy(f"{name}-replica-queues", role=role.id, policy=queue_policy, opts=self.child)
        self.replica_role_policies += [model_read, queues_policy]
        return aws.iam.InstanceProfile(f"{name}-replica", role=role.name, opts=self.child)

    def _replica_group(self, name: str) -> aws.autoscaling.Group:
        serving, plan = self.serving, self.plan
        replicas = serving.replicas
        # Fixed name: the boot script and the IAM grant for the lifecycle hook need it before the group exists.
        group_name = f"accelstack-{name}-replicas"
        # Fail at preview, naming the config, rather than at launch with EC2's bare size error.
        problem = user_data_size_problem(serving, plan, region=self.region, account_id=self.account_id, group_name=group_name)
        if problem:
            raise ValueError(problem)
        profile = self._replica_role(name, group_name)
        user_data = pulumi.Output.all(self.queues["requests"].url, self.queues["responses"].url).apply(
            lambda urls: base64.b64encode(
                replica_user_data(
                    serving,
                    plan,
                    region=self.region,
                    group_name=group_name,
                    hook_name=READY_HOOK,
                    request_queue_url=urls[0],
                    response_queue_url=urls[1],
                ).encode()
            ).decode()
        )
        template = aws.ec2.LaunchTemplate(
            f"{name}-replica",
            image_id=replicas.image_id,
            instance_type=replicas.instance_type,
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile.arn),
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled",
                http_tokens="required",  # IMDSv2 only
                http_put_response_hop_limit=1,  # the server container runs with host networking
            ),
            network_interfaces=[
                aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                    device_index=0,
                    associate_public_ip_address="false",
                    security_groups=[self.replica_sg.id],
                    delete_on_termination="true",
                )
            ],
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=ROOT_DEVICE,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_type="gp3",
                        volume_size=plan.root_volume_gib,
                        # Weight loading reads from here: 1000 MiB/s needs >= 4000 IOPS (gp3 0.25 MiB/s per IOPS).
                        throughput=ROOT_VOLUME_THROUGHPUT_MIBPS,
                        iops=ROOT_VOLUME_IOPS,
                        encrypted="true",
                        kms_key_id=self.key.arn,
                        delete_on_termination="true",
                    ),
                )
            ],
            monitoring=aws.ec2.LaunchTemplateMonitoringArgs(enabled=True),
            ebs_optimized="true",
            user_data=user_data,
            tag_specifications=launch_template_tag_specifications(self.spec, f"{name}-replica"),
            update_default_version=True,
            opts=self.child,
        )
        return aws.autoscaling.Group(
            f"{name}-replicas",
            name=group_name,
            min_size=replicas.min,
            max_size=replicas.max,
            vpc_zone_identifiers=self.network.private_subnet_ids,
            # On-demand only: no mixed-instances policy, no spot market options anywhere.
            # A numbered version, not "$Latest": each new template version changes the group, which is
            # what starts the instance refresh (the str: the group takes the version as a string).
            launch_template=aws.autoscaling.GroupLaunchTemplateArgs(id=template.id, version=template.latest_version.apply(str)),
            target_group_arns=[self.target_group.arn],
            health_check_type="ELB",
            health_check_grace_period=plan.health_check_grace_seconds,
            # Scaling ignores a new instance's metrics until it could be serving (most come from the pool).
            default_instance_warmup=plan.warm_start_seconds,
            enabled_metrics=GROUP_METRICS,
            metrics_granularity="1Minute",
            initial_lifecycle_hooks=[
                aws.autoscaling.GroupInitialLifecycleHookArgs(
                    name=READY_HOOK,
                    lifecycle_transition="autoscaling:EC2_INSTANCE_LAUNCHING",
                    heartbeat_timeout=READY_HOOK_HEARTBEAT_TIMEOUT_SECONDS,
                    default_result="ABANDON",  # a replica that never gets ready is replaced, not served
                )
            ],
            warm_pool=aws.autoscaling.GroupWarmPoolArgs(
                pool_state="Stopped",  # pay for EBS only; image and weights stay on the volume
                min_size=plan.warm_pool_size,
                max_group_prepared_capacity=replicas.min + plan.warm_pool_size,
                instance_reuse_policy=aws.autoscaling.GroupWarmPoolInstanceReusePolicyArgs(reuse_on_scale_in=True),
            ),
            instance_refresh=aws.autoscaling.GroupInstanceRefreshArgs(
                strategy="Rolling",
                preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
                    # Launch the new model's replica before retiring an old one: capacity never dips.
                    min_healthy_percentage=100,
                    max_healthy_percentage=200,
                    # No instance_warmup: a replica enters InService only once the launch hook saw it
                    # serve, and the refresh then waits default_instance_warmup (AWS recommends that
                    # over a refresh-only override).
                    skip_matching=True,
                    # No auto_rollback: EC2 Auto Scaling refuses it when the launch template's image is
                    # a Systems Manager parameter (the default `resolve:ssm:` DLAMI), and the provider
                    # updates the group's template before the refresh, so a rollback would redeploy
                    # the new version anyway (terraform-provider-aws #34189). A replica that never
                    # gets ready is abandoned by the launch hook and the refresh fails instead.
                ),
            ),
            # `up` waits for min replicas: the boot script's full budget, one hook timeout after its last
            # heartbeat, and the first health verdict.
            wait_for_capacity_timeout=f"{math.ceil((plan.lifecycle_heartbeat_seconds + READY_HOOK_HEARTBEAT_TIMEOUT_SECONDS + plan.health_check_grace_seconds) / 60)}m",
            tags=group_tags(self.tags, f"{name}-replica"),
            # Replicas read weights and complete the launch hook with their role at boot.
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.replica_role_policies),
        )

    def _scaling(self, name: str) -> None:
        group, queue = self.group, self.queues["requests"]
        Metric = aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricArgs
        Stat = aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricMetricStatArgs
        StatMetric = aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricMetricStatMetricArgs
        Dim = aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationMetricMetricStatMetricDimensionArgs
        # Backlog per instance in the shape of "Scaling policy based on Amazon SQS" / "Create a target
        # tracking scaling policy using metric math" (EC2 Auto Scaling User Guide), but counting the
        # messages replicas hold (NotVisible) as well as those waiting: Visible alone reads 0 while
        # replicas keep up, and the group scaled in to min and out again all day. The target is a
        # replica's concurrency at the target utilization (planner.serving.owned_backlog_target).
        queue_ids = [f"m{index}" for index in range(1, len(self.plan.backlog_metrics) + 1)]
        queue_metrics = [
            Metric(
                id=metric_id,
                label=f"Get {metric_name} of the request queue",
                metric_stat=Stat(
                    metric=StatMetric(
                        metric_name=metric_name, namespace="AWS/SQS", dimensions=[Dim(name="QueueName", value=queue.name)]
                    ),
                    stat="Sum",
                ),
                return_data=False,
            )
            for metric_id, metric_name in zip(queue_ids, self.plan.backlog_metrics)
        ]
        in_service = f"m{len(queue_ids) + 1}"
        aws.autoscaling.Policy(
            f"{name}-backlog-per-instance",
            autoscaling_group_name=group.name,
            policy_type="TargetTrackingScaling",
            target_tracking_configuration=aws.autoscaling.PolicyTargetTrackingConfigurationArgs(
                target_value=self.plan.backlog_per_instance_target,
                customized_metric_specification=aws.autoscaling.PolicyTargetTrackingConfigurationCustomizedMetricSpecificationArgs(
                    metrics=[
                        *queue_metrics,
                        Metric(
                            id=in_service,
                            label="Get the group size (the number of InService instances)",
                            metric_stat=Stat(
                                metric=StatMetric(
                                    metric_name="GroupInServiceInstances",
                                    namespace="AWS/AutoScaling",
                                    dimensions=[Dim(name="AutoScalingGroupName", value=group.name)],
                                ),
                                stat="Average",
                            ),
                            return_data=False,
                        ),
                        Metric(
                            id="e1",
                            label="Calculate the backlog per instance",
                            expression=f"({' + '.join(queue_ids)}) / {in_service}",
                            return_data=True,
                        ),
                    ]
                ),
            ),
            opts=self.child,
        )
        if self.serving.replicas.min > 0:
            return
        # At zero instances the ratio has no value and target tracking cannot act: a step policy on the
        # raw queue depth starts the first replica. The alarm fires only while none is in service, so
        # it never fights target tracking.
        from_zero = aws.autoscaling.Policy(
            f"{name}-scale-from-zero",
            autoscaling_group_name=group.name,
            policy_type="StepScaling",
            adjustment_type="ChangeInCapacity",
            step_adjustments=[aws.autoscaling.PolicyStepAdjustmentArgs(scaling_adjustment=1, metric_interval_lower_bound="0")],
            opts=self.child,
        )
        aws.cloudwatch.MetricAlarm(
            f"{name}-queue-waiting-at-zero",
            alarm_description="requests are queued and no replica is in service: start one",
            comparison_operator="GreaterThanOrEqualToThreshold",
            threshold=1,
            evaluation_periods=1,
            treat_missing_data="notBreaching",
            metric_queries=[
                aws.cloudwatch.MetricAlarmMetricQueryArgs(
                    id="depth",
                    metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(
                        metric_name="ApproximateNumberOfMessagesVisible",
                        namespace="AWS/SQS",
                        dimensions={"QueueName": queue.name},
                        period=60,
                        stat="Maximum",
                    ),
                ),
                aws.cloudwatch.MetricAlarmMetricQueryArgs(
                    id="inservice",
                    metric=aws.cloudwatch.MetricAlarmMetricQueryMetricArgs(
                        metric_name="GroupInServiceInstances",
                        namespace="AWS/AutoScaling",
                        dimensions={"AutoScalingGroupName": group.name},
                        period=60,
                        stat="Maximum",
                    ),
                ),
                aws.cloudwatch.MetricAlarmMetricQueryArgs(
                    id="waiting",
                    # FILL: a minute without a group datapoint counts as none in service; bare, the
                    # expression may have no value then, which notBreaching reads as "no scale-out".
                    expression=SCALE_FROM_ZERO_EXPRESSION,
                    label="Queue depth > 0 with no replica in service",
                    return_data=True,
                ),
            ],
            alarm_actions=[from_zero.arn],
            opts=self.child,
        )

    def _alarms(self, name: str) -> None:
        admission, plan = self.serving.admission, self.plan
        requests, dead_letters = self.queues["requests"], self.queues["dead-letters"]

        def queue_alarm(suffix: str, queue: aws.sqs.Queue, metric: str, threshold: float, stat: str, text: str) -> None:
            aws.cloudwatch.MetricAlarm(
                f"{name}-{suffix}",
                alarm_description=text,
                namespace="AWS/SQS",
                metric_name=metric,
                dimensions={"QueueName": queue.name},
                statistic=stat,
                period=60,
                evaluation_periods=1,
                comparison_operator="GreaterThanOrEqualToThreshold",
                threshold=threshold,
                treat_missing_data="notBreaching",
                opts=self.child,
            )

        queue_alarm(
            "queue-age",
            requests,
            "ApproximateAgeOfOldestMessage",
            plan.age_alarm_seconds,
            "Maximum",
            f"oldest request has waited {AGE_ALARM_TTL_FRACTION:.0%} of its {admission.ttl_seconds} s TTL",
        )
        queue_alarm(
            "queue-depth",
            requests,
            "ApproximateNumberOfMessagesVisible",
            admission.max_depth,
            "Maximum",
            f"admission queue at its maximum depth ({admission.max_depth}): new requests are being refused",
        )
        queue_alarm(
            "dead-letters", dead_letters, "ApproximateNumberOfMessagesVisible", 1, "Maximum", "requests failed maxReceiveCount times"
        )
