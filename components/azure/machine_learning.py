"""The managed alternative on Azure (`training.scheduler.kind: managed`): an Azure Machine Learning workspace whose
AmlCompute cluster runs multi-node jobs on the stack's VM size, in the stack's subnet, with no public address.

Why these resources, and what Azure checks when it creates them:
- The workspace keeps its records (job logs, outputs, code snapshots) in its own storage account, hardened as the
  checkpoint account (no shared key: `systemDatastoresAuthMode: identity` makes the workspace read its system
  datastores with identities), and its secrets in the stack's Key Vault. Public network access is off: like the
  Slurm head, it is reached from inside the network (VPN, Bastion, peering). Application Insights and a
  container registry are optional in the workspace API and not created (a registry appears on the first
  environment image build).
- AmlCompute with `enableNodePublicIp: false` is refused unless the workspace has a private endpoint ("Provided
  EnableNodePublicIp 'False' requires workspace private endpoint", the service's create-time error), so the
  cluster depends on the endpoint in the nodes' subnet and its two private DNS zones
  (learn.microsoft.com/azure/machine-learning/how-to-custom-dns: privatelink.api.azureml.ms and
  privatelink.notebooks.azure.net).
- The cluster scales 0..`training.nodes.count` (nodes exist while a job runs, as AWS Batch's do), Dedicated or
  LowPriority (Spot) VMs, SSH closed, the nodes' user-assigned identity (read datasets, write checkpoints,
  never delete). InfiniBand: AmlCompute puts the nodes of an InfiniBand size on the fabric; the job image must
  carry the IB user-space and NCCL (learn.microsoft.com/azure/machine-learning/how-to-train-distributed-gpu,
  "Accelerating distributed GPU training with InfiniBand").
- AmlCompute takes no boot script, so it cannot load the Lustre client: jobs read datasets and write checkpoints
  through identity-based Blob datastores (`datasets`, `checkpoints`), and the spec rules refuse Lustre and a
  capacity reservation group with this scheduler.
- The job template (AWS Batch's job definition): an environment version (the job image) and a command component
  (PyTorch distribution, one process per GPU, `instance_count` = the node count). Asset versions are immutable,
  so the version is a digest of the content: a change creates a new version beside the old one, and the old one
  is kept (retain on delete) for the jobs that ran on it.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_azure_native as azure_native

from accelstack.clouds.azure import names
from accelstack.clouds.azure.catalog import ACCELERATED_INSTANCES
from accelstack.clouds.azure.rules import blob_uri_parts
from accelstack.components.azure.provider import account_of, stack_tags
from accelstack.components.azure.storage import STORAGE_BLOB_DATA_CONTRIBUTOR
from accelstack.components.base import SchedulerResult
from accelstack.spec.models import TrainingStack

if TYPE_CHECKING:  # scheduler.py builds this scheduler from its handles
    from accelstack.components.azure.scheduler import AzureTrainingHandles

SCHEDULER_NAME = "azure-ml"
# The workspace's private endpoint answers on these zones (how-to-custom-dns, "Azure Public" regions).
WORKSPACE_DNS_ZONES = ("privatelink.api.azureml.ms", "privatelink.notebooks.azure.net")
WORKSPACE_ENDPOINT_GROUP = "amlworkspace"
COMPUTE_NAME = "gpu-nodes"  # one cluster per workspace; AmlCompute names are 2-16 letters, digits, hyphens
IDLE_BEFORE_SCALE_DOWN = "PT10M"  # ISO 8601: nodes linger 10 minutes for the next job, then go
# A placeholder job image from Azure ML's base images (OpenMPI, CUDA): replace it with the training image.
JOB_IMAGE = "mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04"
ENVIRONMENT_NAME = "accelstack-training"
COMPONENT_NAME = "accelstack-multinode"
SHARED_MEMORY = "64g"  # NCCL's shared-memory transport within a node
# AmlCompute properties the service sets at creation only (an update may change scaleSettings alone).
COMPUTE_FIXED_AT_CREATION = ("vmSize", "vmPriority", "subnet", "enableNodePublicIp", "osType")


def workspace_name(spec: TrainingStack) -> str:
    return names.workspace_name(spec.stack)


def workspace_storage_name(spec: TrainingStack) -> str:
    return names.workspace_storage_name(spec.stack, account_of(spec).subscription_id)


def vm_priority(capacity: str) -> str:
    return "LowPriority" if capacity == "spot" else "Dedicated"


def content_version(content: dict[str, Any]) -> str:
    """An immutable asset's version: a digest of what it holds."""
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]


def environment_properties() -> dict[str, Any]:
    return {
        "image": JOB_IMAGE,
        "os_type": "Linux",
        "description": "The multi-node training image (placeholder: replace with the job's image).",
    }


def component_spec(spec: TrainingStack, environment: str) -> dict[str, Any]:
    """A command component: every node runs the command with one process per GPU (torch.distributed's env://
    variables set by Azure ML), the datasets mounted read-only and the checkpoints read-write."""
    training = spec.training
    itype = ACCELERATED_INSTANCES.get(training.nodes.instance_type)
    inputs: dict[str, Any] = {"datasets": {"type": "uri_folder", "mode": "ro_mount"}}
    outputs: dict[str, Any] = {}
    command = "echo replace with your training command: datasets at ${{inputs.datasets}}"
    if training.storage.checkpoints is not None:
        outputs["checkpoints"] = {"type": "uri_folder", "mode": "rw_mount"}
        command += ", checkpoints at ${{outputs.checkpoints}}"
    return {
        "$schema": "https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json",
        "name": COMPONENT_NAME,
        "type": "command",
        "display_name": f"{spec.stack} multi-node training",
        "environment": environment,
        "command": command + "; sleep 60",
        "inputs": inputs,
        "outputs": outputs,
        "distribution": {"type": "pytorch", "process_count_per_instance": itype.accelerators if itype else 1},
        "resources": {"instance_count": training.nodes.count, "shm_size": SHARED_MEMORY},
    }


class AzureMlScheduler(pulumi.ComponentResource):
    """What a test can assert on: `workspace_account`, `workspace`, `endpoint`, `dns_zones`, `compute`,
    `datastores`, `environment`, `component`."""

    def __init__(self, spec: TrainingStack, handles: AzureTrainingHandles, opts: pulumi.ResourceOptions):
        super().__init__("accelstack:azure:AzureMlScheduler", f"{spec.stack}-aml", None, opts)
        name = spec.stack
        training = spec.training
        tags = stack_tags(spec)
        child = pulumi.ResourceOptions(parent=self)
        rg, storage, subnet_id = handles.resource_group, handles.storage, handles.subnet_id

        self.workspace_account = storage.workspace_account(f"{name}-aml", workspace_storage_name(spec), tags)
        self.workspace = azure_native.machinelearningservices.Workspace(
            f"{name}-aml",
            workspace_name=workspace_name(spec),
            resource_group_name=rg,
            kind="Default",
            sku={"name": "Basic", "tier": "Basic"},
            identity={"type": "SystemAssigned"},
            storage_account=self.workspace_account.id,
            key_vault=storage.vault.id,
            system_datastores_auth_mode="identity",
            public_network_access="Disabled",
            description=f"accelstack {spec.stack}: multi-node training on {training.nodes.instance_type}",
            tags=tags,
            # Its job history and registered assets live here; a replace would lose them.
            opts=pulumi.ResourceOptions(parent=self, protect=True, retain_on_delete=True),
        )

        self.endpoint = azure_native.network.PrivateEndpoint(
            f"{name}-aml",
            resource_group_name=rg,
            subnet={"id": subnet_id},
            private_link_service_connections=[
                {
                    "name": WORKSPACE_ENDPOINT_GROUP,
                    "private_link_service_id": self.workspace.id,
                    "group_ids": [WORKSPACE_ENDPOINT_GROUP],
                }
            ],
            tags=tags,
            opts=child,
        )
        self.dns_zones = []
        links: list[pulumi.Resource] = []
        for zone_name in WORKSPACE_DNS_ZONES:
            label = zone_name.split(".")[1]  # api, notebooks
            zone = azure_native.privatedns.PrivateZone(
                f"{name}-aml-{label}",
                resource_group_name=rg,
                private_zone_name=zone_name,
                location="global",  # private DNS zones are global resources
                tags=tags,
                opts=child,
            )
            links.append(
                azure_native.privatedns.VirtualNetworkLink(
                    f"{name}-aml-{label}",
                    resource_group_name=rg,
                    private_zone_name=zone.name,
                    location="global",
                    virtual_network={"id": handles.network_id},
                    registration_enabled=False,
                    tags=tags,
                    opts=child,
                )
            )
            self.dns_zones.append(zone)
        self.dns_zone_group = azure_native.network.PrivateDnsZoneGroup(
            f"{name}-aml",
            resource_group_name=rg,
            private_endpoint_name=self.endpoint.name,
            private_dns_zone_group_name="default",
            private_dns_zone_configs=[
                {"name": zone_name.replace(".", "-"), "private_dns_zone_id": zone.id}
                for zone_name, zone in zip(WORKSPACE_DNS_ZONES, self.dns_zones, strict=True)
            ],
            opts=child,
        )

        # Jobs write their logs and outputs to the workspace account as the nodes' identity.
        handles.node_grants.append(
            storage.grant(
                f"{name}-nodes-aml-records",
                self.workspace_account.id,
                STORAGE_BLOB_DATA_CONTRIBUTOR,
                handles.nodes_identity.principal_id,
            )
        )
        self.compute = azure_native.machinelearningservices.Compute(
            f"{name}-aml-nodes",
            compute_name=COMPUTE_NAME,
            workspace_name=self.workspace.name,
            resource_group_name=rg,
            identity={"type": "UserAssigned", "user_assigned_identities": [handles.nodes_identity.id]},
            properties={
                "compute_type": "AmlCompute",
                "disable_local_auth": True,
                "properties": {
                    "vm_size": training.nodes.instance_type,
                    "vm_priority": vm_priority(training.nodes.capacity),
                    "os_type": "Linux",
                    "scale_settings": {
                        "min_node_count": 0,
                        "max_node_count": training.nodes.count,
                        "node_idle_time_before_scale_down": IDLE_BEFORE_SCALE_DOWN,
                    },
                    "subnet": {"id": subnet_id},
                    "enable_node_public_ip": False,
                    "remote_login_port_public_access": "Disabled",
                    "isolated_network": False,
                },
            },
            tags=tags,
            # The workspace's private endpoint (and its DNS) first: Azure refuses a no-public-IP cluster without.
            # AmlCompute updates only its scale settings in place; Pulumi would send any other change as an update
            # the service refuses, so those replace, deleting first (the cluster's name is fixed, and it holds no
            # data: its nodes come and go with jobs).
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[self.endpoint, self.dns_zone_group, *links, *handles.node_grants],
                replace_on_changes=[f"properties.properties.{key}" for key in COMPUTE_FIXED_AT_CREATION],
                delete_before_replace=True,
            ),
        )

        self.datastores = [
            self._datastore(name, "datasets", spec.training.storage.datasets.uri, rg, storage.dataset_container)
        ]
        checkpoints = spec.training.storage.checkpoints
        if checkpoints is not None and storage.checkpoint_container is not None:
            self.datastores.append(
                self._datastore(name, "checkpoints", checkpoints.uri, rg, storage.checkpoint_container)
            )

        environment = environment_properties()
        environment_version = content_version(environment)
        self.environment = azure_native.machinelearningservices.EnvironmentVersion(
            f"{name}-aml-environment",
            name=ENVIRONMENT_NAME,
            version=environment_version,
            workspace_name=self.workspace.name,
            resource_group_name=rg,
            properties=environment,
            # A new version is created beside the old one; the old stays (jobs that ran on it keep their record).
            opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
        )
        template = component_spec(spec, f"azureml:{ENVIRONMENT_NAME}:{environment_version}")
        self.component = azure_native.machinelearningservices.ComponentVersion(
            f"{name}-aml-component",
            name=COMPONENT_NAME,
            version=content_version(template),
            workspace_name=self.workspace.name,
            resource_group_name=rg,
            properties={
                "component_spec": template,
                "description": "The multi-node job template: submit it with the datasets (and checkpoints) datastore",
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.environment], retain_on_delete=True),
        )

        outputs: dict[str, pulumi.Input[Any]] = {
            "scheduler": SCHEDULER_NAME,
            # Jobs queue in the workspace for its compute (there is no separate queue object).
            "managedJobQueue": self.workspace.id,
            "managedJobDefinition": self.component.id,
            "managedCompute": self.compute.id,
        }
        self.result = SchedulerResult(needs_compute_group=False, outputs=outputs, component=self)
        self.register_outputs(outputs)

    def _datastore(
        self, name: str, store: str, uri: str, rg: pulumi.Input[str], blob_container: pulumi.Resource
    ) -> azure_native.machinelearningservices.Datastore:
        """An identity-based Blob datastore (credentials None: a job reads and writes as the compute's identity),
        created after its container."""
        parts = blob_uri_parts(uri)
        assert parts is not None  # the spec rules refuse other URIs
        account, container, _ = parts
        return azure_native.machinelearningservices.Datastore(
            f"{name}-aml-{store}",
            name=store,
            workspace_name=self.workspace.name,
            resource_group_name=rg,
            properties={
                "datastore_type": "AzureBlob",
                "account_name": account,
                "container_name": container,
                "credentials": {"credentials_type": "None"},
                "protocol": "https",
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[blob_container]),
        )
