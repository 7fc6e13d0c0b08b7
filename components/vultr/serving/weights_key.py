"""The replicas' weights key on Vultr: a read-only, prefix-scoped Object Storage key, delivered through a presigned
GET URL that each replica's user data carries instead of the key (docs/deploy-vultr.md, "The weights credential").

Vultr instances have no identity a replica could prove to Object Storage, and whatever user data holds stays
readable from the instance (the metadata service) and through the account's API for the instance's life; user data
is also ForceNew (terraform-provider-vultr, vultr/resource_vultr_instance.go: "user_data" ForceNew). So:

- the key sits in one object (`account.weightsKey.object`); the user data holds a URL that GETs that object only,
  signed locally with the deployer's signing key (SigV4 query signing: components/vultr/serving/presign.py);
- each replica has its own signing clock, a `time_static` (terraform-provider-time: its `rfc3339` is set at
  create and kept in state, replaced only when its `triggers` change). The URL is signed at that instant and works
  `urlLifetimeMinutes` from it, so an `up` that changes nothing signs the same URL and replaces no replica, while a
  replica created later (a new one, or a replacement whose boot document changed) gets a clock, and a URL, of its
  own. The clock's trigger is the digest of the replica's boot document without its URL: a boot change replaces the
  clock, hence the URL, together with the replica;
- the prepare script fetches the object once into WEIGHTS_KEY_FILE (root, 0600) and deletes its copy of the URL;
  a reboot finds the key on disk and needs no URL.

What it cannot do: until the URL expires, whatever reads this replica's user data (a process on the replica
reaching the metadata service, a holder of the account's API key) can fetch the key; a replica re-created outside
`pulumi up` (Vultr's reinstall, a `--replace` of the instance alone) boots with an expired URL and stays unhealthy
until its clock is replaced too; the scoped key itself is long-lived (Vultr has no short-lived storage credentials).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

import pulumi
import pulumiverse_time as time

from accelstack.clouds.vultr import catalog
from accelstack.components.node_syntax import shell_word
from accelstack.components.vultr.serving.presign import presigned_get
from accelstack.spec.accounts import VultrWeightsKey

# On the replica, root only: the URL until the key is fetched, then the key (AWS_ACCESS_KEY_ID / ..._SECRET_...).
WEIGHTS_KEY_FILE = "/etc/accelstack/weights-key.env"
WEIGHTS_KEY_URL_FILE = "/etc/accelstack/weights-key.url"
# What the boot document carries where the URL goes when no URL exists yet (`accelstack render`, the digest).
URL_PLACEHOLDER = "https://<object-storage>/<weights-key-object>?<presigned-when-the-replica-is-created>"
CLOCK = "time:index/static:Static"


def object_location(key: VultrWeightsKey) -> tuple[str, str]:
    """(bucket, object key) of `account.weightsKey.object`."""
    bucket, _, name = key.object.removeprefix("s3://").partition("/")
    return bucket, name


def signer_keys(text: str) -> tuple[str, str]:
    """(access key, secret key) from the signer secret's JSON. Offline (a placeholder in angle brackets, nothing is
    created) a stand-in pair signs, so previews and the golden exports show a URL of the real shape."""
    try:
        value = json.loads(text)
        return str(value["accessKey"]), str(value["secretKey"])
    except (json.JSONDecodeError, KeyError, TypeError):
        if text.startswith("<"):
            return OFFLINE_SIGNER
        raise ValueError('the weights key signer: not JSON with "accessKey" and "secretKey"') from None


OFFLINE_SIGNER = ("OFFLINEPREVIEWSIGNER", "offline-preview-signs-nothing-real")


def key_url(key: VultrWeightsKey, region: str, signer: tuple[str, str], signed_at: str) -> str:
    """The presigned GET of the key's object, at the region's Object Storage host, valid from `signed_at` (RFC 3339,
    the replica's clock) for the configured lifetime."""
    bucket, name = object_location(key)
    access_key, secret_key = signer
    return presigned_get(
        host=catalog.OBJECT_STORAGE_HOSTS.get(region, catalog.DEFAULT_OBJECT_STORAGE_HOST),
        bucket=bucket,
        key=name,
        access_key=access_key,
        secret_key=secret_key,
        signed_at=datetime.fromisoformat(signed_at),
        expires_seconds=key.url_lifetime_minutes * 60,
    )


def boot_digest(document: str) -> str:
    """What the replica's clock is triggered by: its boot document with the URL's placeholder."""
    return hashlib.sha256(document.encode()).hexdigest()


def fetch_key_setup() -> str:
    """The prepare script's first step: the key from the URL, once (curl is on every Ubuntu image); written through a
    temporary file so a failed or partial fetch leaves no key file, and checked to hold exactly the two assignments
    before it replaces the URL (the file is later sourced by the shell: nothing else may be in it). A refusal fails
    the prepare step (its ERR trap records it in the boot status)."""
    key_file, url_file, part = shell_word(WEIGHTS_KEY_FILE), shell_word(WEIGHTS_KEY_URL_FILE), '"$key_part"'
    refused = "the weights key URL was refused (expired?): replace this replica's key clock with pulumi up"
    malformed = "the weights key object is not two lines AWS_ACCESS_KEY_ID=... and AWS_SECRET_ACCESS_KEY=..."
    return (
        f"if [ ! -s {key_file} ]; then\n"
        f"  key_part=$(umask 077; mktemp {key_file}.XXXXXX)\n"
        f'  if ! curl -fsS --retry 5 --retry-delay 5 -o {part} "$(cat {url_file})"; then\n'
        f"    rm -f {part}; echo {shell_word('accelstack: ' + refused)} >&2; false\n"
        f"  fi\n"
        f"  if grep -qvE '^(AWS_ACCESS_KEY_ID|AWS_SECRET_ACCESS_KEY)=[A-Za-z0-9/+=]+$' {part} \\\n"
        f"    || ! grep -q '^AWS_ACCESS_KEY_ID=' {part} || ! grep -q '^AWS_SECRET_ACCESS_KEY=' {part}; then\n"
        f"    rm -f {part}; echo {shell_word('accelstack: ' + malformed)} >&2; false\n"
        f"  fi\n"
        f"  chmod 0600 {part} && mv {part} {key_file} && rm -f {url_file}\n"
        f"fi\n"
    )


class ReplicaClocks:
    """Each replica's clock, a `time_static` triggered by its boot document without its URL and by what the URL
    opens. One explicit time provider for the clocks (the project denies every package a default provider:
    Pulumi.yaml). The weights key's URL is signed at it; weights on OCI get their PAR's expiry from it
    (components/handoff/oci_par.py)."""

    def __init__(self, name: str, parent: pulumi.Resource):
        self.name, self.parent = name, parent
        self.provider = time.Provider(f"{name}-time", opts=pulumi.ResourceOptions(parent=parent))

    def clock(self, index: int, document_without_url: str, opened: str) -> time.Static:
        return time.Static(
            f"{self.name}-replica-{index}-key-clock",
            triggers={"boot": boot_digest(document_without_url), "object": opened},
            opts=pulumi.ResourceOptions(parent=self.parent, provider=self.provider),
        )


class ReplicaKeyUrls(ReplicaClocks):
    """Each replica's signing clock and URL."""

    def __init__(
        self, name: str, key: VultrWeightsKey, region: str, signer: pulumi.Output[str], parent: pulumi.Resource
    ):
        super().__init__(name, parent)
        self.key, self.region, self.signer = key, region, signer

    def url(self, index: int, document_without_url: str) -> tuple[time.Static, pulumi.Output[str]]:
        clock = self.clock(index, document_without_url, self.key.object)
        key, region = self.key, self.region
        signed = pulumi.Output.all(self.signer, clock.rfc3339).apply(
            lambda values: key_url(key, region, signer_keys(values[0]), values[1])
        )
        # Not a secret in state: the URL is as readable through Vultr's API for the instance's life, it opens one
        # object for urlLifetimeMinutes, and the packs must read it to judge its lifetime (a secret is unknown to
        # them). The signer it is derived from stays secret.
        return clock, pulumi.Output.unsecret(signed)
