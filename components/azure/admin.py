"""The admin account Azure requires on every Linux VM, with an SSH key instead of a password.

Azure refuses a Linux VM without an admin credential, and the spec has no SSH key (operators reach the
nodes with `az vm run-command`, the serial console or Microsoft Entra ID login). The key pair is an Ed25519
key derived from 32 random bytes kept only in the stack's encrypted state; only its public half, which
is not a secret, goes into the VMs' osProfile. (A random password there would mark the whole osProfile
secret, custom data included, hiding the node boot script from `pulumi preview` diffs and policy packs.)
"""

from __future__ import annotations

import base64

import pulumi
import pulumi_random as random
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ADMIN_USERNAME = "accelstack"
SEED_BYTES = 32  # an Ed25519 private key is 32 bytes (RFC 8032)


def openssh_public_key(seed_base64: str) -> str:
    """`ssh-ed25519 AAAA...` of the Ed25519 key whose private bytes are `seed_base64`."""
    key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(seed_base64))
    return key.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).decode()


def admin_public_key(name: str, opts: pulumi.ResourceOptions) -> pulumi.Output[str]:
    seed = random.RandomBytes(f"{name}-admin-key", length=SEED_BYTES, opts=opts)
    return pulumi.Output.unsecret(seed.base64.apply(openssh_public_key))


def linux_configuration(public_key: pulumi.Input[str]) -> dict[str, object]:
    """Key-only SSH for the admin account (password login refused by Azure's own setting)."""
    return {
        "disable_password_authentication": True,
        "provision_vm_agent": True,
        "ssh": {"public_keys": [{"path": f"/home/{ADMIN_USERNAME}/.ssh/authorized_keys", "key_data": public_key}]},
    }
