"""GPUDirect-TCPXO beside the NICs on A3 Mega: the boot script, the Slurm Prolog/Epilog and the TaskProlog the
generator renders, run for real (bash) against a fake `docker`, a fake sysfs and a plugin profile shaped like
Google's, and their place in slurm.conf and the compute nodes' cloud-init. NCCL/gIB on A3 Ultra and A4:
tests/components/gcp/test_gib.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from accelstack.clouds import registry
from accelstack.clouds.gcp.catalog import GPUDIRECT_TCPXO
from accelstack.components import slurm
from accelstack.components.gcp import gpudirect
from accelstack.components.node_environment import NODE_ENVIRONMENT_FILE
from accelstack.spec.loader import apply_overrides, parse_spec, read_stack_file

EXAMPLE = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.gcp-training.yaml"
HOOKS = gpudirect.tcpxo_hooks()

# The shape of the nccl-env-profile.sh the plugin's installer writes (Google's 2025 profile, reconstructed, not
# copied): defaults of eth0 / eth1..eth8, a find_nics that reads each NIC's PCI address from sysfs (the control
# NIC is on bus 00, the GPU NICs at 06/07/0d/0e/86/87/8d/8e:00.0) and overrides them, and exports through
# variables: the NIC lists and NCCL_LIB_DIR's config files. SYSFS_NET is where the test's fake sysfs is (the real
# profile reads /sys/class/net); everything else is as the profile does it.
GOOGLE_SHAPED_PROFILE = r""": "${NCCL_LIB_DIR:?NCCL_LIB_DIR must be set}"
host_nic="eth0"
gpu_nics="eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"
find_nics() {
    local host="" gpus="" netdev bdf
    for netdev in $(ls SYSFS_NET | awk '{print $1}'); do
        bdf=$(grep PCI_SLOT_NAME "SYSFS_NET/${netdev}/device/uevent" 2>/dev/null | awk -F= '{print $2}' || echo "")
        [[ -n "${bdf}" ]] || continue
        if [[ "${bdf}" =~ 00\:[0-9a-f]{2}\.0 ]]; then
            host="${netdev}"
        elif [[ "${bdf}" =~ [0|8][6-7d-e]\:00\.0 ]]; then
            gpus="${gpus:+${gpus},}${netdev}"
        fi
    done
    [[ -z "${host}" ]] || host_nic="${host}"
    [[ -z "${gpus}" ]] || gpu_nics="${gpus}"
}
find_nics
export LD_LIBRARY_PATH="${NCCL_LIB_DIR}:${LD_LIBRARY_PATH}"
export NCCL_FASTRAK_IFNAME="${gpu_nics}"
export NCCL_FASTRAK_CTRL_DEV="${host_nic}"
export NCCL_SOCKET_IFNAME="${host_nic}"
export NCCL_CROSS_NIC=0
export NCCL_PROTO=Simple,LL128
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_TUNER_PLUGIN=libnccl-tuner.so
export NCCL_TUNER_CONFIG_PATH=${NCCL_LIB_DIR}/a3plus_tuner_config.textproto
export NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE=${NCCL_LIB_DIR}/a3plus_guest_config.textproto
export NCCL_DEBUG=WARN
"""
# A3 Mega's NICs on Ubuntu (PCI-path names) and their PCI addresses.
UBUNTU_NICS = {
    "enp0s12": "0000:00:0c.0",
    **dict(zip(GPUDIRECT_TCPXO.gpu_nics, ["0000:06:00.0", "0000:07:00.0", "0000:0d:00.0", "0000:0e:00.0",
                                          "0000:86:00.0", "0000:87:00.0", "0000:8d:00.0", "0000:8e:00.0"], strict=True)),
}  # fmt: skip

# A docker that records its calls (one line each) and plays the parts the scripts use: `run ... install` writes
# the plugin's env profile where the installer would, `ps` answers whether RxDM runs (a state file), `logs`
# prints RxDM's ready line once it has been asked READY_AFTER times (never, when READY_AFTER is 0).
FAKE_DOCKER = r"""#!/bin/bash
echo "$*" >> "$FAKE/calls"
case "$1" in
    run)
        if [[ " $* " == *" install --install-nccl "* ]]; then
            mkdir -p "$ACCELSTACK_FABRIC_LIB"
            cp "$FAKE/profile.sh" "$ACCELSTACK_FABRIC_LIB/nccl-env-profile.sh"
        else
            echo running > "$FAKE/rxdm"
        fi ;;
    ps) [ -s "$FAKE/rxdm" ] && echo 0123abcd ;;
    logs)
        n=$(( $(cat "$FAKE/logs" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$FAKE/logs"
        echo "starting"
        if [ "${READY_AFTER:-1}" -gt 0 ] && [ "$n" -ge "${READY_AFTER:-1}" ]; then
            echo "I1204 Buffer manager initialization complete"
        fi ;;
    stop|rm) rm -f "$FAKE/rxdm" ;;
esac
exit 0
"""


def fake_nics(sys_root: Path, nics: dict[str, str | None]) -> None:
    """Network interfaces under sys_root/class/net, each with its PCI address (None: a virtual one, no device)."""
    for name, bdf in nics.items():
        net = sys_root / "class" / "net" / name
        net.mkdir(parents=True)
        if bdf is not None:
            (net / "device").mkdir()
            (net / "device" / "uevent").write_text(f"DRIVER=gve\nPCI_SLOT_NAME={bdf}\n")


@pytest.fixture
def node(tmp_path: Path) -> dict[str, str]:
    """An A3 Mega node on Ubuntu: fake docker first on PATH, the plugin's profile, its NICs in a fake sysfs, the
    scripts' state and libraries under tmp_path."""
    (tmp_path / "profile.sh").write_text(GOOGLE_SHAPED_PROFILE.replace("SYSFS_NET", str(tmp_path / "sys/class/net")))
    fake_nics(tmp_path / "sys", {"lo": None, "docker0": None, **UBUNTU_NICS})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(FAKE_DOCKER)
    docker.chmod(0o755)
    (tmp_path / "sleep").write_text("")
    sleep = bin_dir / "sleep"
    sleep.write_text("#!/bin/bash\nexit 0\n")  # polls do not wait
    sleep.chmod(0o755)
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE": str(tmp_path),
        "ACCELSTACK_FABRIC_LIB": str(tmp_path / "lib64"),
        "ACCELSTACK_FABRIC_ENV": str(tmp_path / "fabric.env"),
        "ACCELSTACK_FABRIC_STATE": str(tmp_path / "state"),
        "ACCELSTACK_RXDM_POLLS": "5",
        "ACCELSTACK_SYSFS": str(tmp_path / "sys"),
    }


def run(script: str, env: dict[str, str], tmp_path: Path, **job: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "script.sh"
    path.write_text(script)
    return subprocess.run(["bash", str(path)], env={**env, **job}, capture_output=True, text=True, timeout=30)


def calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls"
    return path.read_text().splitlines() if path.exists() else []


def spec(*overrides: str):
    return parse_spec(apply_overrides(read_stack_file(EXAMPLE), list(overrides)), "gcp-training")


# --- which machine types get it -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("machine_type", "expected"),
    [("a3-megagpu-8g", True), ("a3-highgpu-8g", False), ("a3-ultragpu-8g", False), ("a4-highgpu-8g", False)],
)
def test_only_tcpxo_machines_get_the_receive_datapath_manager(machine_type, expected):
    instance = registry.get("gcp").catalog.instances[machine_type]
    assert (gpudirect.fabric_hooks(instance) == HOOKS) is expected
    assert gpudirect.fabric_hooks(None) is None


def test_every_script_is_valid_bash():
    for script in (HOOKS.boot_script, HOOKS.prolog, HOOKS.epilog, f"f() {{\n{HOOKS.install}\n}}"):
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)


def test_the_pinned_images_are_the_released_pair_and_rxdm_drives_all_eight_nics():
    assert f"PLUGIN_IMAGE={GPUDIRECT_TCPXO.nccl_plugin_image}\n" in HOOKS.prolog
    assert f"RXDM_IMAGE={GPUDIRECT_TCPXO.rxdm_image}\n" in HOOKS.prolog
    assert "--num_nics=8" in HOOKS.prolog and "--gpus all" in HOOKS.prolog and "--privileged" in HOOKS.prolog


# --- the Prolog and Epilog ------------------------------------------------------------------------------


def test_a_multi_node_job_installs_the_plugin_starts_rxdm_and_waits_until_it_is_ready(node, tmp_path):
    result = run(HOOKS.prolog, node, tmp_path, SLURM_JOB_ID="41", SLURM_JOB_NUM_NODES="4", READY_AFTER="3")
    assert result.returncode == 0, result.stderr
    made = calls(tmp_path)
    install = [c for c in made if "install --install-nccl" in c]
    assert install == [
        f"run --rm --network=host --volume /var/lib:/var/lib {GPUDIRECT_TCPXO.nccl_plugin_image} install --install-nccl"
    ]
    (start,) = [c for c in made if c.startswith("run --detach")]
    assert start.endswith(f"{GPUDIRECT_TCPXO.rxdm_image} --num_hops=2 --num_nics=8 --uid= --alsologtostderr")
    assert "--cap-add=NET_ADMIN --network=host --privileged --gpus all" in start
    assert "/dev/dmabuf_import_helper:/dev/dmabuf_import_helper" in start
    assert sum(c.startswith("logs") for c in made) == 3  # polled until the ready line
    # The jobs' NCCL settings: the profile run on this node, every value resolved (the NICs it found by PCI address,
    # NCCL_LIB_DIR's files), nothing that is not NCCL's (Slurm binds the GPUs), and where the aperture devices are.
    lib = tmp_path / "lib64"
    settings = dict(line.split("=", 1) for line in (tmp_path / "fabric.env").read_text().splitlines())
    assert settings == {
        "NCCL_CROSS_NIC": "0",
        "NCCL_PROTO": "Simple,LL128",
        "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
        "NCCL_TUNER_CONFIG_PATH": f"{lib}/a3plus_tuner_config.textproto",
        "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": f"{lib}/a3plus_guest_config.textproto",
        "NCCL_DEBUG": "WARN",
        "NCCL_FASTRAK_IFNAME": ",".join(sorted(GPUDIRECT_TCPXO.gpu_nics)),  # as the profile lists /sys/class/net
        "NCCL_FASTRAK_CTRL_DEV": "enp0s12",
        "NCCL_SOCKET_IFNAME": "enp0s12",
        "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": GPUDIRECT_TCPXO.aperture_dir,
    }
    assert (tmp_path / "lib64" / ".accelstack-image").read_text().strip() == GPUDIRECT_TCPXO.nccl_plugin_image


def test_a_profile_that_finds_no_nic_gets_ubuntus_names_for_a3_mega(node, tmp_path):
    """The profile's eth0..eth8 defaults (its discovery found nothing, or an older profile with literal eth names)
    name no NIC of an Ubuntu node: Cluster Toolkit's Ubuntu names are written instead."""
    for name in UBUNTU_NICS:
        for entry in (tmp_path / "sys/class/net" / name / "device").iterdir():
            entry.unlink()  # no PCI address to find
    result = run(HOOKS.prolog, node, tmp_path, SLURM_JOB_ID="41", SLURM_JOB_NUM_NODES="2")
    assert result.returncode == 0, result.stderr
    settings = dict(line.split("=", 1) for line in (tmp_path / "fabric.env").read_text().splitlines())
    assert settings["NCCL_FASTRAK_IFNAME"] == ",".join(GPUDIRECT_TCPXO.gpu_nics)
    assert settings["NCCL_FASTRAK_CTRL_DEV"] == settings["NCCL_SOCKET_IFNAME"] == GPUDIRECT_TCPXO.host_nic
    assert "not this node's" in result.stderr


def test_a_node_without_its_gpu_nics_fails_the_prolog_and_installs_again_next_time(node, tmp_path):
    for name in GPUDIRECT_TCPXO.gpu_nics[:2]:
        shutil.rmtree(tmp_path / "sys/class/net" / name)
    result = run(HOOKS.prolog, node, tmp_path, SLURM_JOB_ID="3", SLURM_JOB_NUM_NODES="2")
    assert result.returncode == 1 and "draining" in result.stderr
    assert not (tmp_path / "fabric.env").exists()
    assert not (tmp_path / "lib64" / ".accelstack-image").exists()  # the next job's prolog installs and checks again
    assert not (tmp_path / "state" / "jobs" / "3").exists()
    assert not any(c.startswith("run --detach") for c in calls(tmp_path))


def test_a_one_node_job_touches_nothing(node, tmp_path):
    assert run(HOOKS.prolog, node, tmp_path, SLURM_JOB_ID="7", SLURM_JOB_NUM_NODES="1").returncode == 0
    assert run(HOOKS.epilog, node, tmp_path, SLURM_JOB_ID="7").returncode == 0
    assert calls(tmp_path) == []


def test_rxdm_that_never_comes_up_fails_the_prolog_so_slurm_drains_the_node(node, tmp_path):
    result = run(HOOKS.prolog, node, tmp_path, SLURM_JOB_ID="9", SLURM_JOB_NUM_NODES="2", READY_AFTER="0")
    assert result.returncode == 1
    assert "RxDM not ready" in result.stderr
    assert not (tmp_path / "state" / "jobs" / "9").exists()  # the job does not hold RxDM up


def test_two_jobs_on_a_node_share_one_rxdm_which_stops_after_the_last(node, tmp_path):
    for job in ("1", "2"):
        assert run(HOOKS.prolog, node, tmp_path, SLURM_JOB_ID=job, SLURM_JOB_NUM_NODES="2").returncode == 0
    made = calls(tmp_path)
    assert sum("install --install-nccl" in c for c in made) == 1  # never reinstalled under a running job
    assert sum(c.startswith("run --detach") for c in made) == 1
    assert run(HOOKS.epilog, node, tmp_path, SLURM_JOB_ID="1").returncode == 0
    assert (tmp_path / "rxdm").exists()  # job 2 still uses it
    assert run(HOOKS.epilog, node, tmp_path, SLURM_JOB_ID="2").returncode == 0
    assert not (tmp_path / "rxdm").exists()
    assert any(c.startswith("stop") for c in calls(tmp_path))


def test_a_new_plugin_version_is_installed_only_when_no_job_runs(node, tmp_path):
    lib = tmp_path / "lib64"
    lib.mkdir()
    (lib / ".accelstack-image").write_text("us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin:old\n")
    (tmp_path / "state" / "jobs").mkdir(parents=True)
    (tmp_path / "state" / "jobs" / "5").touch()  # a running job still uses the old libraries
    assert run(HOOKS.prolog, node, tmp_path, SLURM_JOB_ID="6", SLURM_JOB_NUM_NODES="2").returncode == 0
    assert not any("install --install-nccl" in c for c in calls(tmp_path))
    (tmp_path / "state" / "jobs" / "5").unlink()
    (tmp_path / "state" / "jobs" / "6").unlink()
    assert run(HOOKS.prolog, node, tmp_path, SLURM_JOB_ID="8", SLURM_JOB_NUM_NODES="2").returncode == 0
    assert any("install --install-nccl" in c for c in calls(tmp_path))


# --- the boot script ------------------------------------------------------------------------------------


def fake_sysfs(root: Path, devices: dict[str, tuple[str, str]]) -> None:
    for name, (vendor, device) in devices.items():
        path = root / "bus" / "pci" / "devices" / name
        path.mkdir(parents=True)
        (path / "vendor").write_text(vendor + "\n")
        (path / "device").write_text(device + "\n")
        (path / "resource0").write_text("")


@pytest.fixture
def boot_env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in {
        "modprobe": 'echo "modprobe $*" >> "$FAKE/calls"',
        "mountpoint": "exit 1",
        "mount": 'echo "mount $*" >> "$FAKE/calls"; cp -r "$2"/. "$3"/',  # a bind mount, as a copy
    }.items():
        (bin_dir / tool).write_text(f"#!/bin/bash\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE": str(tmp_path),
        "ACCELSTACK_SYSFS": str(tmp_path / "sys"),
        "ACCELSTACK_APERTURE_DIR": str(tmp_path / "apertures"),
    }


def test_boot_exposes_every_aperture_device_and_loads_the_helper(boot_env, tmp_path):
    vendor, device = GPUDIRECT_TCPXO.aperture_pci_vendor, GPUDIRECT_TCPXO.aperture_pci_device
    fake_sysfs(
        tmp_path / "sys",
        {"0000:06:00.1": (vendor, device), "0000:07:00.1": (vendor, device), "0000:00:04.0": ("0x10de", "0x2330")},
    )
    result = run(HOOKS.boot_script, boot_env, tmp_path)
    assert result.returncode == 0, result.stderr
    made = calls(tmp_path)
    assert made[0] == f"modprobe {GPUDIRECT_TCPXO.helper_module}"
    mounted = sorted(c.rsplit("/", 1)[1] for c in made if c.startswith("mount --bind"))
    assert mounted == ["0000:06:00.1", "0000:07:00.1"]  # the GPU (10de) is not an aperture device
    assert "2 aperture devices" in result.stdout


def test_a_node_without_aperture_devices_fails_its_boot_so_slurmd_stays_down(boot_env, tmp_path):
    fake_sysfs(tmp_path / "sys", {"0000:00:04.0": ("0x10de", "0x2330")})
    result = run(HOOKS.boot_script, boot_env, tmp_path)
    assert result.returncode == 1 and "slurmd stays down" in result.stderr


# --- the TaskProlog -------------------------------------------------------------------------------------


def task_exports(tmp_path: Path, **job: str) -> list[str]:
    fabric_env = tmp_path / "fabric.env"
    fabric_env.write_text("NCCL_FASTRAK_CTRL_DEV=enp0s12\nNCCL_PROTO=Simple,LL128\n")
    env_file = tmp_path / "training.env"
    env_file.write_text("ACCELSTACK_STACK=gcp-training\n")
    hooks = gpudirect.tcpxo_hooks()
    script = slurm.task_prolog_script(str(env_file), fabric=hooks).replace(hooks.environment_file, str(fabric_env))
    env = {"PATH": os.environ["PATH"], **job}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_tasks_of_a_multi_node_job_get_the_plugin_settings_and_libraries_and_keep_their_own_values(tmp_path):
    lines = task_exports(tmp_path, SLURM_JOB_NUM_NODES="4", NCCL_PROTO="Simple", LD_LIBRARY_PATH="/opt/cuda/lib64")
    assert "export NCCL_FASTRAK_CTRL_DEV=enp0s12" in lines
    assert not any(line.startswith("export NCCL_PROTO=") for line in lines)  # the job's own value wins
    assert f"export LD_LIBRARY_PATH={gpudirect.LIBRARY_PATH}:/opt/cuda/lib64" in lines
    assert "export ACCELSTACK_STACK=gcp-training" in lines


def test_tasks_of_a_one_node_job_get_only_the_jobs_environment(tmp_path):
    assert task_exports(tmp_path, SLURM_JOB_NUM_NODES="1") == ["export ACCELSTACK_STACK=gcp-training"]


# --- where the generator puts it ------------------------------------------------------------------------


def test_slurm_runs_the_prolog_at_allocation_with_time_for_image_pulls():
    conf = slurm.slurm_conf(spec(), slurm.nodes_for(spec()))
    for line in (
        f"Prolog={slurm.PROLOG_PATH}",
        f"Epilog={slurm.EPILOG_PATH}",
        "PrologFlags=Alloc",
        f"BatchStartTimeout={gpudirect.PROLOG_SECONDS}",
        f"PrologEpilogTimeout={gpudirect.PROLOG_SECONDS}",
    ):
        assert line in conf.splitlines()


@pytest.mark.parametrize(("machine_type", "count"), [("a3-highgpu-8g", 4), ("a2-highgpu-8g", 1), ("g2-standard-48", 1)])
def test_other_machine_types_run_no_prolog(machine_type, count):
    other = spec(f"training.nodes.instanceType={machine_type}", f"training.nodes.count={count}")
    conf = slurm.slurm_conf(other, slurm.nodes_for(other))
    assert not [line for line in conf.splitlines() if line.startswith(("Prolog", "Epilog"))]
    cloud_init = slurm.compute_cloud_init(other, slurm.nodes_for(other), slurm.DeployValues.placeholders())
    assert "accelstack-fabric" not in cloud_init and "install_fabric" not in cloud_init


def test_the_compute_node_installs_it_before_slurmd_which_requires_its_unit():
    doc = yaml.safe_load(slurm.compute_cloud_init(spec(), slurm.nodes_for(spec()), slurm.DeployValues.placeholders()))
    files = {f["path"]: f for f in doc["write_files"]}
    assert files[slurm.PROLOG_PATH]["content"] == HOOKS.prolog and files[slurm.PROLOG_PATH]["permissions"] == "0755"
    assert files[slurm.EPILOG_PATH]["content"] == HOOKS.epilog
    assert files[slurm.FABRIC_SETUP_PATH]["content"] == HOOKS.boot_script
    unit = files[f"/etc/systemd/system/{slurm.FABRIC_UNIT}.service"]["content"]
    assert f"ExecStart={slurm.FABRIC_SETUP_PATH}" in unit and "Before=slurmd.service" in unit
    setup = files[slurm.COMPUTE_SETUP_PATH]["content"]
    assert (
        setup.index("ensure_gcloud\n") < setup.index("install_fabric\n") < setup.index("systemctl enable --now slurmd")
    )
    assert f"Requires={slurm.FABRIC_UNIT}.service" in setup and f"After={slurm.FABRIC_UNIT}.service" in setup
    assert NODE_ENVIRONMENT_FILE in files[slurm.TASK_PROLOG_PATH]["content"]
    assert gpudirect.ENVIRONMENT_FILE in files[slurm.TASK_PROLOG_PATH]["content"]


def test_a3_high_clusters_are_warned_that_tcpx_runs_as_plain_sockets():
    from accelstack.spec.loader import spec_warnings

    (warning,) = [w for w in spec_warnings(spec("training.nodes.instanceType=a3-highgpu-8g")) if "TCPX" in w.message]
    assert warning.path == "training.nodes.instanceType" and "a3-megagpu-8g" in warning.message
    assert not [w for w in spec_warnings(spec()) if "TCPX" in w.message]  # A3 Mega: set up
    single = spec("training.nodes.instanceType=a3-highgpu-8g", "training.nodes.count=1")
    assert not [w for w in spec_warnings(single) if "TCPX" in w.message]  # one node: no network collective
