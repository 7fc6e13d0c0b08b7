"""Slurm accounting (training.scheduler.accounting: database): the spec key, slurm.conf and the head's setup from the
neutral generator, and each cloud's managed MySQL under Pulumi mocks (private, encrypted, backed up, protected,
its password only where the head reads it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from accelstack.clouds import registry
from accelstack.clouds.base import Feature
from accelstack.components import slurm
from accelstack.components.recipes.capabilities import implemented
from accelstack.components.slurm import accounting
from accelstack.engine.capture import capture, config_for_pulumi
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file
from accelstack.spec.problems import SpecError

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "__main__.py"
ON = ("training.scheduler.accounting=database",)


def raw(stack: str, *overrides: str) -> dict:
    return apply_overrides(read_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml"), list(overrides))


def spec_for(stack: str, *overrides: str):
    return parse_spec(raw(stack, *overrides), stack)


def problems(stack: str, *overrides: str) -> str:
    with pytest.raises(SpecError) as error:
        spec_for(stack, *overrides)
    return str(error.value)


@pytest.fixture(scope="module", params=["aws-training", "azure-training", "gcp-training"])
def preview(request):
    stack = request.param
    return stack, capture(PROGRAM, config_for_pulumi(raw(stack, *ON)), stack=stack)


# --- the spec ---------------------------------------------------------------------------------------


def test_accounting_is_off_by_default_and_takes_only_its_values():
    assert spec_for("aws-training").training.scheduler.accounting == "none"
    message = problems("aws-training", "training.scheduler.accounting=mysql")
    assert "training.scheduler.accounting" in message and "'none' or 'database'" in message


def test_accounting_needs_slurm():
    message = problems("aws-training", *ON, "training.scheduler.kind=managed", "training.nodes.capacity=on-demand")
    assert "training.scheduler.accounting" in message and "scheduler kind slurm" in message


def test_every_cloud_that_builds_slurm_builds_its_database_and_the_others_say_why_not():
    for name in registry.deployable():
        cloud = registry.get(name)
        features = implemented(cloud).features
        if Feature.SLURM in features and cloud.name in ("aws", "azure", "gcp"):
            assert Feature.SLURM_ACCOUNTING in features and Feature.SLURM_ACCOUNTING in cloud.features
        else:
            assert Feature.SLURM_ACCOUNTING in cloud.unsupported, cloud.name


def test_aws_refuses_accounting_in_an_existing_vpc():
    existing = ("training.network.vpcId=vpc-0123456789abcdef0", "training.network.subnetId=subnet-0123456789abcdef0")
    message = problems("aws-training", *ON, *existing, "training.network.vpcCidr=null")
    assert "training.scheduler.accounting" in message and "vpcCidr" in message


# --- the generator ----------------------------------------------------------------------------------


def conf(spec) -> dict[str, str]:
    text = slurm.slurm_conf(spec, slurm.nodes_for(spec))
    return dict(
        line.split("=", 1) for line in text.splitlines() if line and not line.startswith(("#", "NodeSet", "Partition"))
    )


def test_slurm_conf_points_slurmctld_at_slurmdbd_and_orders_by_fair_share():
    off, on = conf(spec_for("aws-training")), conf(spec_for("aws-training", *ON))
    assert off["AccountingStorageType"] == "accounting_storage/none" and "PriorityType" not in off
    assert on["AccountingStorageType"] == "accounting_storage/slurmdbd"
    assert on["AccountingStorageHost"] == on["SlurmctldHost"] == "aws-training-head"
    assert on["AccountingStoragePort"] == str(accounting.SLURMDBD_PORT)
    assert on["JobAcctGatherType"] == "jobacct_gather/cgroup"
    assert on["PriorityType"] == "priority/multifactor"
    assert int(on["PriorityWeightFairshare"]) > int(on["PriorityWeightAge"]) > 0


def head_setup(spec, values: slurm.DeployValues) -> str:
    doc = yaml.safe_load(slurm.head_cloud_init(spec, slurm.nodes_for(spec), values))
    return next(f["content"] for f in doc["write_files"] if f["path"] == slurm.HEAD_SETUP_PATH)


def test_the_head_writes_slurmdbd_conf_with_the_password_from_the_secret_store_before_slurmctld():
    spec = spec_for("aws-training", *ON)
    values = slurm.DeployValues(
        accounting_storage=accounting.Storage("db.example.internal", accounting.ServerCa("cat /etc/ssl/certs/ca.pem")),
        accounting_password_secret="arn:aws:secretsmanager:us-east-1:123456789012:secret:pw-AbCdEf",
    )
    script = head_setup(spec, values)
    assert "slurmdbd" in re.search(r"apt-get install -y (.*)", script).group(1).split()
    # The password is read at boot with the head's own role, never rendered.
    assert "--secret-id arn:aws:secretsmanager:us-east-1:123456789012:secret:pw-AbCdEf" in script
    assert re.findall(r"StoragePass=\S*", script) == ['StoragePass=$p"']
    for line in (
        "StorageHost=db.example.internal",
        "StorageType=accounting_storage/mysql",
        "DbdHost=aws-training-head",
    ):
        assert line in script
    assert f"StorageParameters=SSL_CA={accounting.ACCOUNTING_CA_FILE}" in script
    main = script[script.index("\ninstall_slurm\n") :]
    order = ("install_accounting_ca\n", "install_slurmdbd_conf\n", "start_slurmdbd\n", "enable --now slurmctld")
    steps = [main.index(step) for step in order]
    assert steps == sorted(steps)
    assert "sacctmgr -i add cluster aws-training" in script
    # mktemp makes the file 0600; it is handed to the slurm user before it replaces slurmdbd.conf.
    assert 'chown slurm:slurm "$tmp" && mv -f "$tmp" /etc/slurm/slurmdbd.conf' in script
    off = head_setup(spec_for("aws-training"), values)
    assert "slurmdbd" not in off


def test_every_cloud_renders_slurmdbd_conf_and_the_accounting_lines_alike():
    """The recipe writes slurmdbd.conf and slurm.conf's accounting lines once for every cloud that keeps accounting:
    only the stack's own names differ (tests/integration/test_slurmdbd_real.py runs them against real slurmdbd)."""
    keys = ("ClusterName", "SlurmctldHost", "JobAcctGather", "AccountingStorage", "Priority")
    rendered = {}
    for cloud in registry.deployable():
        if Feature.SLURM_ACCOUNTING not in implemented(registry.get(cloud)).features:
            continue
        stack = f"{cloud}-training"
        spec = spec_for(stack, *ON)
        files = slurm.render_all(spec, slurm.nodes_for(spec))
        lines = [line for line in files["slurm.conf"].splitlines() if line.startswith(keys)]
        rendered[cloud] = (files["slurmdbd.conf"] + "\n".join(lines)).replace(stack, "<stack>")
    assert len(rendered) >= 3 and len(set(rendered.values())) == 1, rendered


def test_the_compute_nodes_know_nothing_of_the_database():
    spec = spec_for("aws-training", *ON)
    compute = slurm.compute_cloud_init(spec, slurm.nodes_for(spec), slurm.DeployValues())
    assert "slurmdbd" not in compute and "ACCOUNTING" not in compute


def test_slurmdbd_conf_refuses_an_address_that_is_not_one():
    with pytest.raises(ValueError, match="not a host name"):
        accounting.slurmdbd_conf("c", "c-head", accounting.Storage("db\nStoragePass=x"), "/var/log/slurm", "slurm")


def test_render_writes_slurmdbd_conf_without_a_password():
    spec = spec_for("gcp-training", *ON)
    text = slurm.render_all(spec, slurm.nodes_for(spec))["slurmdbd.conf"]
    assert "StorageHost=${ACCOUNTING_HOST}" in text and "StoragePass" not in text.replace("appends StoragePass", "")


# --- each cloud's database ----------------------------------------------------------------------------

DATABASE = {
    "aws-training": "aws:rds/instance:Instance",
    "azure-training": "azure-native:dbformysql:Server",
    "gcp-training": "gcp:sql/databaseInstance:DatabaseInstance",
}
HEAD = {
    "aws-training": "aws:ec2/instance:Instance",
    "azure-training": "azure-native:compute:VirtualMachine",
    "gcp-training": "gcp:compute/instance:Instance",
}


def test_the_database_is_private_encrypted_backed_up_and_protected(preview):
    stack, cap = preview
    database = cap.one(DATABASE[stack])
    props = database.inputs
    assert database.protect
    if stack == "aws-training":
        assert props["storageEncrypted"] is True and props["kmsKeyId"]
        assert props["publiclyAccessible"] is False and props["deletionProtection"] is True
        assert props["backupRetentionPeriod"] >= 7 and props["skipFinalSnapshot"] is False
        assert props["username"] == accounting.DATABASE_USER and props["dbName"] == accounting.DATABASE_NAME
        group = cap.one("aws:rds/subnetGroup:SubnetGroup")
        subnets = [s for s in cap.by_type("aws:ec2/subnet:Subnet") if "slurmdbd" in s.name]
        assert len(group.inputs["subnetIds"]) == len(subnets) == 2
        assert len({s.inputs["availabilityZone"] for s in subnets}) == 2  # RDS wants two zones
        assert not any(s.inputs.get("mapPublicIpOnLaunch") for s in subnets)
    elif stack == "gcp-training":
        settings = props["settings"]
        assert settings["ipConfiguration"]["ipv4Enabled"] is False and settings["ipConfiguration"]["privateNetwork"]
        assert settings["ipConfiguration"]["sslMode"] == "ENCRYPTED_ONLY"
        assert props["deletionProtection"] is True and settings["deletionProtectionEnabled"] is True
        assert settings["backupConfiguration"]["enabled"] is True and props["encryptionKeyName"]
        assert database.retain_on_delete
    else:
        assert props["network"]["publicNetworkAccess"] == "Disabled"
        assert props["network"]["delegatedSubnetResourceId"] and props["network"]["privateDnsZoneResourceId"]
        assert props["dataEncryption"]["type"] == "AzureKeyVault" and props["dataEncryption"]["primaryKeyURI"]
        assert props["backup"]["backupRetentionDays"] >= 7 and database.retain_on_delete
        subnet = next(s for s in cap.by_type("azure-native:network:Subnet") if s.name.endswith("slurmdbd"))
        assert [d["serviceName"] for d in subnet.inputs["delegations"]] == ["Microsoft.DBforMySQL/flexibleServers"]


def test_only_the_head_reaches_the_database(preview):
    stack, cap = preview
    if stack == "aws-training":
        rules = [
            r for r in cap.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule") if "slurmdbd" in r.name
        ]
        [rule] = rules
        head_group = next(g for g in cap.by_type("aws:ec2/securityGroup:SecurityGroup") if g.name.endswith("-head"))
        assert rule.inputs["fromPort"] == rule.inputs["toPort"] == 3306
        assert rule.inputs["referencedSecurityGroupId"] == head_group.outputs.get("id", head_group.id)
        assert "cidrIpv4" not in rule.inputs
    elif stack == "azure-training":
        nsg = next(n for n in cap.by_type("azure-native:network:NetworkSecurityGroup") if "slurmdbd" in n.name)
        allows = [r for r in nsg.inputs["securityRules"] if r["access"] == "Allow"]
        head = cap.one(HEAD[stack])
        assert [(r["sourceAddressPrefix"], r["destinationPortRange"]) for r in allows] == [
            (
                f"{cap.one('azure-native:network:NetworkInterface').inputs['ipConfigurations'][0]['privateIPAddress']}/32",
                "3306",
            )
        ], head.name
        assert any(r["access"] == "Deny" and r["sourceAddressPrefix"] == "*" for r in nsg.inputs["securityRules"])
    else:
        deny = next(f for f in cap.by_type("gcp:compute/firewall:Firewall") if "no-slurmdbd" in f.name)
        assert deny.inputs["direction"] == "EGRESS" and deny.inputs["denies"][0]["ports"] == ["3306"]
        assert deny.inputs["targetServiceAccounts"]


def test_the_password_is_a_secret_the_head_reads_and_waits_for(preview):
    stack, cap = preview
    head = cap.one(HEAD[stack])
    database = cap.one(DATABASE[stack])
    assert database.urn in head.dependencies  # slurmdbd connects at first boot
    grants = [r for r in cap.resources if "head-slurmdbd-password" in r.name or "head-read-slurmdbd-password" in r.name]
    assert len(grants) == 1 and grants[0].urn in head.dependencies
    password = cap.one("random:index/randomPassword:RandomPassword")
    assert password.inputs["special"] is False and password.inputs["length"] >= 16
    text = json.dumps(head.inputs)
    assert "StoragePass=$p" in text or "StoragePass" not in text  # encoded user data: no literal either way
    assert cap.stack_outputs["slurmAccountingHost"]


def test_accounting_off_builds_no_database():
    cap = capture(PROGRAM, config_for_pulumi(raw("gcp-training")), stack="gcp-training")
    assert not cap.by_type(DATABASE["gcp-training"]) and "slurmAccountingHost" not in cap.stack_outputs


def test_every_cloud_requires_tls_and_pins_or_names_the_servers_ca(preview):
    """The server refuses plain connections; what the head verifies it against is the cloud's own CA."""
    stack, cap = preview
    database = cap.one(DATABASE[stack])
    if stack == "aws-training":
        from accelstack.components.aws.slurm_accounting import CA_CERT_IDENTIFIER

        group = cap.one("aws:rds/parameterGroup:ParameterGroup")
        values = {p["name"]: (p["value"], p["applyMethod"]) for p in group.inputs["parameters"]}
        assert values["require_secure_transport"] == ("1", "immediate")  # dynamic: no reboot
        assert database.inputs["parameterGroupName"] and database.inputs["caCertIdentifier"] == CA_CERT_IDENTIFIER
        assert CA_CERT_IDENTIFIER == "rds-ca-rsa2048-g1"
    elif stack == "azure-training":
        settings = {
            c.inputs["configurationName"]: c.inputs["value"]
            for c in cap.by_type("azure-native:dbformysql:Configuration")
        }
        assert settings["require_secure_transport"] == "ON"
    else:
        import base64

        from accelstack.components.gcp.slurm_accounting import CA_METADATA_KEY

        assert database.inputs["settings"]["ipConfiguration"]["sslMode"] == "ENCRYPTED_ONLY"
        head = cap.one(HEAD[stack])
        # The instance's CA certificates (the mocks' one) in their own key of the head, not in its user-data.
        ca = base64.b64decode(head.inputs["metadata"][CA_METADATA_KEY]).decode()
        expected = database.outputs["serverCaCerts"][0]["cert"]
        assert ca.strip() == expected.strip() and ca.startswith("-----BEGIN CERTIFICATE-----")
        # user-data names the key (read at boot), never the certificates (a rotation would rebuild the head).
        assert expected.splitlines()[1] not in head.inputs["metadata"]["user-data"]


def head_setup_of(cloud: str) -> str:
    """The head's setup as the cloud's component renders it (its ServerCa), on that cloud's node platform."""
    from accelstack.components.aws.slurm_accounting import server_ca
    from accelstack.components.azure.slurm_accounting import SERVER_CA as AZURE
    from accelstack.components.gcp.slurm_accounting import SERVER_CA as GCP

    spec = spec_for(f"{cloud}-training", *ON)
    ca = {"aws": server_ca(spec.account.region), "azure": AZURE, "gcp": GCP}[cloud]
    storage = accounting.Storage("db.example.internal", ca)
    return slurm.head_setup_script(spec, slurm.nodes_for(spec), slurm.DeployValues(accounting_storage=storage))


def test_each_cloud_delivers_its_ca_and_slurmdbd_verifies_against_it():
    aws, azure, gcp = (head_setup_of(cloud) for cloud in ("aws", "azure", "gcp"))
    for script in (aws, azure, gcp):
        assert f"StorageParameters=SSL_CA={accounting.ACCOUNTING_CA_FILE}" in script
        assert "SSL_CAPATH" not in script and "SSL_CIPHER" not in script
        assert f'chmod 0644 "$tmp" && mv -f "$tmp" {accounting.ACCOUNTING_CA_FILE}' in script
        main = script[script.index("\ninstall_slurm\n") :]
        assert main.index("install_accounting_ca\n") < main.index("install_slurmdbd_conf\n")
        # A slurmdbd that never answers fails the boot with its own last words on the console.
        assert "slurmdbd does not answer" in script and "tail -n 5 /var/log/slurm/slurmdbd.log >&2" in script
    # AWS: the Region's bundle over HTTPS only, and the instance's CA must be in it.
    region = spec_for("aws-training").account.region
    fetch = re.search(r"\( (curl [^)]*) \)", aws).group(1)
    assert "--proto =https" in fetch and "-f" in fetch.split()[1]
    assert fetch.endswith(f"https://truststore.pki.rds.amazonaws.com/{region}/{region}-bundle.pem")
    assert f"grep -qE 'CN = Amazon RDS {region} Root CA RSA2048 G1(,|$)'" in aws
    # Azure: the two roots Microsoft names, from the image's store (not the whole store).
    assert (
        "( cat /etc/ssl/certs/DigiCert_Global_Root_G2.pem /etc/ssl/certs/Microsoft_RSA_Root_Certificate_Authority_2017.pem )"
        in azure
    )
    # GCP: the head's own metadata key, which `up` updates in place.
    assert "( gce_metadata attributes/accelstack-accounting-ca | base64 -d )" in gcp
    for script in (azure, gcp):
        assert "grep -qE 'CN = " not in script  # the certificates are named by their source


def test_a_ca_name_with_shell_words_is_refused():
    with pytest.raises(ValueError, match="not plain words"):
        accounting.ServerCa("cat /x", "CA'; rm -rf /")


def test_the_gcp_metadata_value_holds_each_certificate_once():
    import base64

    from accelstack.components.gcp.slurm_accounting import ca_metadata_value

    first, second = "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nBBB\n"
    text = base64.b64decode(ca_metadata_value([first, "", second + "-----END CERTIFICATE-----\n\n"])).decode()
    assert text == f"{first}\n{second}-----END CERTIFICATE-----\n"


# --- the packs' database checks can fail ----------------------------------------------------------------


def resource(kind: str, **props):
    from types import SimpleNamespace

    return SimpleNamespace(resource_type=kind, props=props, name="db", urn=f"urn:pulumi:s::p::{kind}::db")


def test_the_packs_refuse_an_open_unencrypted_unprotected_database():
    from accelstack.policies.aws import storage as aws
    from accelstack.policies.azure import readers as azure
    from accelstack.policies.gcp import readers as gcp

    rds = resource("aws:rds/instance:Instance", storageEncrypted=False, publiclyAccessible=True)
    assert list(aws.check_encryption_at_rest(rds)) and list(aws.check_no_public_buckets(rds))
    loss = [m for _, m in aws.check_no_scheduled_data_loss([rds], "logs")]
    assert any("deletionProtection" in m for m in loss)
    good = resource(
        "aws:rds/instance:Instance",
        storageEncrypted=True,
        publiclyAccessible=False,
        deletionProtection=True,
        backupRetentionPeriod=7,
    )
    assert not list(aws.check_encryption_at_rest(good)) and not list(aws.check_no_scheduled_data_loss([good], "logs"))

    sql = resource("gcp:sql/databaseInstance:DatabaseInstance", settings={"ipConfiguration": {"ipv4Enabled": True}})
    assert list(gcp.check_no_public_ip(sql))
    assert len(list(gcp.lifecycle_problems([sql], "logs"))) == 2  # no deletion protection, no backups
    key = resource("gcp:kms/cryptoKey:CryptoKey")
    assert [urn for urn, _ in gcp.check_customer_keys([sql, key], "data")] == [sql.urn]

    server = resource("azure-native:dbformysql:Server", network={"publicNetworkAccess": "Enabled"})
    assert list(azure.check_no_public_storage(server))
    vault_key = resource("azure-native:keyvault:Key")
    assert [urn for urn, _ in azure.check_customer_keys([server, vault_key], "data")] == [server.urn]
