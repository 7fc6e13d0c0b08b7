#!/bin/bash
# Boots one node image in a throwaway machine: a mount, network and UTS namespace whose root is the host's
# userland through copy-on-write overlays, with only the image's commands on its PATH directories, a fake
# instance metadata server on 169.254.169.254 (loopback of its own network namespace: nothing leaves it), and
# /dev/console captured as the serial log an operator reads. Run as root by tests/boot/machine/__init__.py:
#   unshare -mnup --fork --propagation private launcher.sh WORK
# (its own PID namespace: every service a boot leaves running ends with the machine).
# WORK holds machine.json (what to boot), commands.txt (name -> host path or "stub") and receives
# fs/ (every file the boot changed), console.log, calls.jsonl and metadata.log.
set -euo pipefail
WORK=$1
HARNESS=$(cd "$(dirname "$0")" && pwd)
ROOT=$WORK/root
mkdir -p "$ROOT" "$WORK/fs" "$WORK/ovl"

ip link set lo up
ip addr add 169.254.169.254/32 dev lo

# The filesystem: each top-level directory of the host as an overlay whose writes land in WORK/fs.
for dir in etc usr var opt root home srv; do
    [ -d "/$dir" ] || continue
    mkdir -p "$WORK/fs/$dir" "$WORK/ovl/$dir" "$ROOT/$dir"
    mount -t overlay overlay -o "lowerdir=/$dir,upperdir=$WORK/fs/$dir,workdir=$WORK/ovl/$dir" "$ROOT/$dir"
done
for link in bin sbin lib lib64 lib32 libx32; do
    [ -L "/$link" ] && ln -sfn "$(readlink "/$link")" "$ROOT/$link"
done
mkdir -p "$ROOT/proc" "$ROOT/sys" "$ROOT/tmp" "$ROOT/run" "$ROOT/dev" "$ROOT/mnt" "$ROOT/harness" "$ROOT/.host" "$ROOT/snap/bin"
mount -t proc proc "$ROOT/proc"
mount -t tmpfs tmpfs "$ROOT/tmp"
mount -t tmpfs tmpfs "$ROOT/run"
mount -t tmpfs -o mode=0755 tmpfs "$ROOT/dev"
for node in null zero full random urandom tty; do
    touch "$ROOT/dev/$node"
    mount --bind "/dev/$node" "$ROOT/dev/$node"
done
mkdir -p "$ROOT/dev/shm" "$ROOT/dev/disk/by-id"
ln -s /proc/self/fd "$ROOT/dev/fd"
ln -s /proc/self/fd/0 "$ROOT/dev/stdin"; ln -s /proc/self/fd/1 "$ROOT/dev/stdout"; ln -s /proc/self/fd/2 "$ROOT/dev/stderr"
touch "$WORK/console.log" "$ROOT/dev/console"
mount --bind "$WORK/console.log" "$ROOT/dev/console"
mount --bind -o ro "$HARNESS" "$ROOT/harness"
mount --rbind / "$ROOT/.host"
mount -o remount,bind,ro "$ROOT/.host"
mkdir -p "$WORK/state"
mount --bind "$WORK" "$ROOT/run/harness"  2>/dev/null || { mkdir -p "$ROOT/run/harness"; mount --bind "$WORK" "$ROOT/run/harness"; }

# The PATH directories hold the image's commands only: the host's binary for a real one, the harness's
# multi-call stub for one the harness models (package managers, systemctl, cloud CLIs, mount).
for bindir in usr/bin usr/sbin usr/local/bin usr/local/sbin snap/bin; do
    mount -t tmpfs -o mode=0755 tmpfs "$ROOT/$bindir"
done
while read -r name target; do
    [ -n "$name" ] || continue
    if [ "$target" = stub ]; then
        ln -sfn /harness/stub.py "$ROOT/usr/bin/$name"
    else
        ln -sfn "/.host$target" "$ROOT/usr/bin/$name"
    fi
done < "$WORK/commands.txt"
# The system python3 is the host's, except `-m pip` and `-m venv`, which the image's packages decide.
real_python=$(readlink "$ROOT/usr/bin/python3")
rm -f "$ROOT/usr/bin/python3"
cat > "$ROOT/usr/bin/python3" <<PYTHON
#!/bin/sh
if [ "\$1" = -m ] && { [ "\$2" = pip ] || [ "\$2" = venv ]; }; then
    HARNESS_AS="python3 -m \$2" exec /harness/stub.py "\$@"
fi
exec $real_python "\$@"
PYTHON
chmod 0755 "$ROOT/usr/bin/python3"
# A stub the image places elsewhere (gcloud is a snap on Canonical's Google images).
while read -r path; do
    [ -n "$path" ] && ln -sfn /harness/stub.py "$ROOT$path"
done < "$WORK/placed.txt"

# The disks the cloud attached (a block device is a file here; blkid/mkfs/mount are modelled).
while read -r device; do
    [ -n "$device" ] && mkdir -p "$(dirname "$ROOT$device")" && touch "$ROOT$device"
done < "$WORK/devices.txt"

# The machine type's devices as sysfs shows them (PCI functions, RDMA devices, NICs).
mount -t tmpfs tmpfs "$ROOT/sys"
/usr/bin/python3 - "$WORK/sysfs.json" "$ROOT/sys" <<'SYSFS'
import json, os, sys
for path, content in json.load(open(sys.argv[1])).items():
    target = os.path.join(sys.argv[2], path)
    if path.endswith("/"):
        os.makedirs(target, exist_ok=True)
        continue
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as out:
        out.write(content + ("\n" if content else ""))
SYSFS

# The metadata server runs in this network namespace, outside the machine's root.
/usr/bin/python3 "$HARNESS/metadata_server.py" "$WORK/machine.json" "$WORK/metadata.log" &
server=$!
for _ in $(seq 1 100); do
    /usr/bin/python3 -c 'import socket; socket.create_connection(("169.254.169.254", 80), 0.2)' 2>/dev/null && break
    sleep 0.05
done

# The services the machine reaches by name (an object store), each on its own address in this namespace.
services=()
while read -r address port script config python; do
    [ -n "$address" ] || continue
    [ "$address" = 127.0.0.1 ] || ip addr add "$address/32" dev lo
    "${python:-/usr/bin/python3}" "$HARNESS/$script" "$WORK/$config" >>"$WORK/services.log" 2>&1 &
    services+=($!)
    for _ in $(seq 1 100); do
        /usr/bin/python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 0.2)' \
            "$address" "$port" 2>/dev/null && break
        sleep 0.05
    done
done < <(cat "$WORK/services.txt" 2>/dev/null)

status=0
chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/snap/bin \
    HOME=/root LANG=C.UTF-8 HARNESS_STATE=/run/harness /usr/bin/python3 /harness/cloud_init.py /run/harness/machine.json \
    >"$WORK/boot.log" 2>&1 || status=$?
# What runs on the machine afterwards (a Slurm job's prolog, as slurmd runs it), in the booted machine.
if [ -s "$WORK/after.sh" ]; then
    cp "$WORK/after.sh" "$ROOT/tmp/after.sh"
    after=0
    chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 HARNESS_STATE=/run/harness /bin/bash /tmp/after.sh >"$WORK/after.log" 2>&1 || after=$?
    echo "$after" > "$WORK/after-status"
fi
kill "$server" "${services[@]}" 2>/dev/null || true
wait "$server" "${services[@]}" 2>/dev/null || true
echo "$status" > "$WORK/exit-status"
