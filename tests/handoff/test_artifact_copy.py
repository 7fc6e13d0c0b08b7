"""The copy handoff's provider (components/handoff/copy.py) EXECUTED against object stores on 127.0.0.1
(tests/handoff/copy_fakes.py), through the SDKs it runs with on the deployer (urllib for the OCI PAR, boto3 against
moto's signature-checking S3 for AWS and Vultr, google-cloud-storage, azure-storage-blob over HTTPS): every source x
destination pair the design lists, paging on both sources, odd object names, objects past the multipart / chunk /
block size, resume after a failure, refusal to overwrite, the source refusals' messages, MD5 checks, the manifest."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from moto.server import ThreadedMotoServer

from accelstack.components.handoff.copy import RECOPY_KEYS, ArtifactCopyProvider
from accelstack.components.handoff.copy_objects import CopyError, CopyOptions
from tests.handoff.copy_fakes import AzureFake, AzureToken, GcsFake, OciPar

PART = 256 * 1024  # the provider's part size here; S3 raises it to its 5 MiB minimum
BIG = os.urandom(5 * 1024 * 1024 + 300_000)  # past S3's 5 MiB part, many GCS chunks and Azure blocks
PREFIX = "models/llama/step-1/"
RELATIVE = {
    "config.json": b'{"layers": 80}',
    "model-00001-of-00002.safetensors": BIG,
    "model-00002-of-00002.safetensors": os.urandom(70_000),
    "tokenizer with space.json": b"{}",
    "ünï/código+a&b=c.bin": os.urandom(1000),
    "100% done.txt": b"literal percent",
    "empty.marker": b"",
}
# moto's signature check recomputes over the decoded path (moto/core/authorization.py), so a key with "%" or
# non-ASCII fails it although S3 takes it: S3 destinations get these names in a test with moto's auth off.
ODD = ("ünï/código+a&b=c.bin", "100% done.txt")
PLAIN = {name: data for name, data in RELATIVE.items() if name not in ODD}
OUTSIDE = {"models/llama/step-10/config.json": b"another checkpoint", "models/other.bin": b"x"}
ACCESS_URI = "/p/par-token-abc/n/axaxnpcrorw5/b/ckpt/o/"
GCS_TOKEN, AZURE_TOKEN = "gcs-deployer-token", "azure-deployer-token"
STORAGE = "https://trainckpt.blob.core.windows.net/checkpoints/"
SOURCES = {"oci": f"oci://ckpt@axaxnpcrorw5/{PREFIX}", "azure": STORAGE + PREFIX}
DESTINATIONS = {
    "aws": ("s3://acme-serving-models/llama-70b/step-1/", "us-east-1"),
    "vultr": ("s3://acme-vultr-models/llama-70b/step-1/", "ewr1.vultrobjects.com"),
    "gcp": ("gs://acme-serving-models/llama-70b/step-1/", ""),
    "azure": ("https://servingmodels.blob.core.windows.net/models/llama-70b/step-1/", ""),
}
PAIRS = [("oci", "aws"), ("oci", "gcp"), ("oci", "azure"), ("oci", "vultr"), ("azure", "aws"), ("azure", "gcp"),
         ("azure", "vultr")]  # fmt: skip


def source_objects(relative: dict[str, bytes]) -> dict[str, bytes]:
    return {PREFIX + name: data for name, data in relative.items()} | OUTSIDE


class Stores:
    """One of each store, and the provider pointed at them."""

    def __init__(self, tmp: Path, s3_endpoint: str, keys: dict[str, tuple[str, str]], relative: dict[str, bytes]):
        self.relative = relative
        self.oci = OciPar(ACCESS_URI, "models/", source_objects(relative)).__enter__()
        self.azure = AzureFake(tmp, AZURE_TOKEN)
        for name, data in source_objects(relative).items():
            self.azure.blobs[("trainckpt", "checkpoints", name)] = (data, {})
        self.gcs = GcsFake(GCS_TOKEN)
        self.s3_endpoint, self.keys = s3_endpoint, keys
        self.azure_credential = AzureToken(AZURE_TOKEN)

    def provider(self) -> ArtifactCopyProvider:
        from google.oauth2.credentials import Credentials

        options = CopyOptions(
            part_bytes=PART,
            endpoints={"aws": self.s3_endpoint, "vultr": self.s3_endpoint, "gcp": self.gcs.endpoint,
                       "azure": self.azure.endpoint},
            credentials={"aws": self.keys["deployer"], "gcp": Credentials(token=GCS_TOKEN),
                         "azure": self.azure_credential},
            client_options={"azure": {"connection_verify": str(self.azure.ca_file), "max_single_get_size": 64 * 1024,
                                      "max_chunk_get_size": 64 * 1024}},
        )  # fmt: skip
        return ArtifactCopyProvider(options)

    def props(self, source: str, destination: str, **changes: Any) -> dict[str, Any]:
        uri, endpoint = DESTINATIONS[destination]
        keys = self.keys["vultr"]
        return {
            "source_cloud": source,
            "source": SOURCES[source],
            "source_url": self.oci.url if source == "oci" else None,
            "destination_cloud": destination,
            "destination": uri,
            "destination_endpoint": endpoint,
            "destination_keys": json.dumps({"accessKey": keys[0], "secretKey": keys[1]}),
            "clock": "2026-12-06T12:00:00Z",
        } | changes

    @staticmethod
    def s3_client(endpoint: str, keys: tuple[str, str]) -> Any:
        return boto3.client("s3", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id=keys[0],
                            aws_secret_access_key=keys[1], config=Config(s3={"addressing_style": "path"}))  # fmt: skip

    def s3(self, who: str = "deployer") -> Any:
        return self.s3_client(self.s3_endpoint, self.keys[who])

    def written(self, destination: str) -> dict[str, tuple[bytes, str | None]]:
        """What the destination holds under its prefix: relative name -> (bytes, the MD5 stored with it)."""
        uri, _ = DESTINATIONS[destination]
        if destination in ("aws", "vultr"):
            bucket, prefix = uri[5:].split("/", 1)
            client, found = self.s3("deployer" if destination == "aws" else "vultr"), {}
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):  # moto: no "/" in a query
                for entry in page.get("Contents", []):
                    answer = client.get_object(Bucket=bucket, Key=entry["Key"])
                    found[entry["Key"][len(prefix) :]] = (
                        answer["Body"].read(),
                        answer["Metadata"].get("accelstack-md5"),
                    )
            return found
        if destination == "gcp":
            bucket, prefix = uri[5:].split("/", 1)
            return {name[len(prefix) :]: (data, meta.get("accelstack-md5"))
                    for (b, name), (data, meta) in self.gcs.objects.items() if b == bucket}  # fmt: skip
        return {name[len("llama-70b/step-1/") :]: (data, meta.get("accelstack_md5"))
                for (a, c, name), (data, meta) in self.azure.blobs.items() if (a, c) == ("servingmodels", "models")}  # fmt: skip

    def source_requests(self, source: str) -> list[str]:
        if source == "oci":
            return [path for _, path in self.oci.requests]
        return [path for method, path in self.azure.requests if "/trainckpt/" in path]

    def close(self) -> None:
        self.oci.__exit__(None, None, None)
        self.azure.close()
        self.gcs.close()


@pytest.fixture(scope="module")
def s3() -> Iterator[tuple[str, dict[str, tuple[str, str]]]]:
    """moto's S3 with authentication on after the setup's unauthenticated calls: a deployer user and a Vultr key,
    each allowed s3:*, and the two buckets; every later request must carry a valid SigV4 signature of one of them."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    setup = {"region_name": "us-east-1", "endpoint_url": endpoint, "aws_access_key_id": "AKIASETUP",
             "aws_secret_access_key": "setup"}  # fmt: skip
    moto_auth(endpoint, "7")
    iam = boto3.client("iam", **setup)
    keys = {}
    for who in ("deployer", "vultr"):
        iam.create_user(UserName=who)
        iam.put_user_policy(UserName=who, PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))  # fmt: skip
        created = iam.create_access_key(UserName=who)["AccessKey"]
        keys[who] = (created["AccessKeyId"], created["SecretAccessKey"])
    boto3.client("s3", **setup).create_bucket(Bucket="acme-serving-models")
    yield endpoint, keys
    moto_auth(endpoint, "inf")
    server.stop()


def moto_auth(endpoint: str, free_requests: str) -> None:
    """moto-api/reset-auth: the next `free_requests` go unauthenticated ("inf": all of them), then each is checked."""
    request = urllib.request.Request(endpoint + "/moto-api/reset-auth", data=free_requests.encode(), method="POST",
                                     headers={"Content-Type": "text/plain"})  # fmt: skip
    urllib.request.urlopen(request).close()


@pytest.fixture
def make_stores(
    tmp_path: Path, s3: tuple[str, dict[str, tuple[str, str]]], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    import google.cloud.storage.blob

    monkeypatch.setattr(google.cloud.storage.blob, "_MAX_MULTIPART_SIZE", PART)  # resumable past one chunk
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    endpoint, keys = s3
    made: list[Stores] = []
    for who, bucket in (("deployer", "acme-serving-models"), ("vultr", "acme-vultr-models")):
        client = Stores.s3_client(endpoint, keys[who])
        if bucket not in [b["Name"] for b in client.list_buckets()["Buckets"]]:
            client.create_bucket(Bucket=bucket)
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for entry in page.get("Contents", []):
                client.delete_object(Bucket=bucket, Key=entry["Key"])

    def make(relative: dict[str, bytes]) -> Stores:
        made.append(Stores(tmp_path / str(len(made)), endpoint, keys, relative))
        return made[-1]

    yield make
    for stores in made:
        stores.close()


@pytest.fixture
def stores(make_stores: Any) -> Stores:
    """Stores whose sources hold PLAIN (names moto's signature check takes: every destination)."""
    return make_stores(PLAIN)  # type: ignore[no-any-return]


def expected_manifest(relative: dict[str, bytes]) -> str:
    lines = sorted(f"{name}\t{len(data)}\t{hashlib.md5(data).hexdigest()}\n" for name, data in relative.items())
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def test_s3_fake_checks_signatures(stores: Stores) -> None:
    from botocore.exceptions import ClientError

    key, _ = stores.keys["deployer"]
    forged = boto3.client("s3", region_name="us-east-1", endpoint_url=stores.s3_endpoint, aws_access_key_id=key,
                          aws_secret_access_key="not-the-secret")  # fmt: skip
    with pytest.raises(ClientError, match="SignatureDoesNotMatch"):
        forged.list_objects_v2(Bucket="acme-serving-models")


def big_object_went_in_parts(stores: Stores, destination: str) -> bool:
    """The object past the part size was written by S3 multipart, GCS resumable chunks or Azure blocks."""
    uri, _ = DESTINATIONS[destination]
    key = uri.split("/", 3)[3] + "model-00001-of-00002.safetensors"
    if destination in ("aws", "vultr"):
        bucket = uri[5:].split("/", 1)[0]
        etag = stores.s3("deployer" if destination == "aws" else "vultr").head_object(Bucket=bucket, Key=key)["ETag"]
        return bool(etag.endswith('-2"'))  # 5 MiB + the rest: a multipart ETag
    if destination == "gcp":
        return sum(1 for method, path in stores.gcs.requests if method == "PUT" and "upload_id" in path) > 20
    return sum(1 for method, path in stores.azure.requests if method == "PUT" and "comp=block&" in path) > 20


@pytest.mark.parametrize(("source", "destination"), PAIRS)
def test_copies_every_object_of_the_prefix_and_a_second_run_skips_them(
    make_stores: Any, source: str, destination: str
) -> None:
    relative = PLAIN if destination in ("aws", "vultr") else RELATIVE
    stores = make_stores(relative)
    provider = stores.provider()
    created = provider.create(stores.props(source, destination))
    assert created.outs["objects"] == len(relative)
    assert created.outs["bytes"] == sum(len(data) for data in relative.values())
    assert created.outs["manifest_sha256"] == expected_manifest(relative)
    written = stores.written(destination)
    assert {name: data for name, (data, _) in written.items()} == relative  # nothing from outside the prefix
    assert {name: md5 for name, (_, md5) in written.items()} == {
        n: hashlib.md5(d).hexdigest() for n, d in relative.items()
    }
    requests = stores.source_requests(source)
    assert requests and all(PREFIX in urllib.parse.unquote(r) for r in requests)  # nothing outside the prefix
    assert big_object_went_in_parts(stores, destination)
    listings = [r for r in requests if "prefix=" in r]
    assert len(listings) > 2  # pages of two: the listing followed nextStartWith / NextMarker
    before = len(requests)
    again = provider.create(stores.props(source, destination))  # a failed-then-rerun `up`: everything identical
    assert again.outs["manifest_sha256"] == expected_manifest(relative)
    assert not [r for r in stores.source_requests(source)[before:] if "prefix=" not in r]  # no object read again


def test_a_copy_that_failed_midway_resumes_skipping_what_it_copied(stores: Stores) -> None:
    failing = PREFIX + "model-00002-of-00002.safetensors"
    stores.oci.fail_get = lambda name: name == failing
    provider = stores.provider()
    with pytest.raises(CopyError, match="HTTP 500"):
        provider.create(stores.props("oci", "gcp"))
    copied = set(stores.written("gcp"))
    assert "config.json" in copied and "model-00002-of-00002.safetensors" not in copied
    stores.oci.fail_get = lambda name: False
    before = len(stores.oci.requests)
    provider.create(stores.props("oci", "gcp"))
    read_again = {urllib.parse.unquote(p) for _, p in stores.oci.requests[before:] if "prefix=" not in p}
    assert read_again == {ACCESS_URI + PREFIX + name for name in PLAIN if name not in copied}
    assert {name: data for name, (data, _) in stores.written("gcp").items()} == PLAIN


@pytest.mark.parametrize("destination", ["aws", "gcp", "azure", "vultr"])
def test_an_existing_different_object_is_refused_and_kept(stores: Stores, destination: str) -> None:
    provider = stores.provider()
    provider.create(stores.props("oci", destination))
    stores.oci.objects[PREFIX + "config.json"] = b'{"layers": 81}'  # the source changed under the same prefix
    before = stores.written(destination)
    with pytest.raises(CopyError, match="copy into a new prefix") as refused:
        provider.create(stores.props("oci", destination))
    assert "config.json" in str(refused.value)
    assert stores.written(destination) == before


def test_an_object_not_written_by_the_copy_is_refused(stores: Stores) -> None:
    stores.s3().put_object(
        Bucket="acme-serving-models", Key="llama-70b/step-1/config.json", Body=RELATIVE["config.json"]
    )
    with pytest.raises(CopyError, match=r"MD5 unknown.*copy into a new prefix"):
        stores.provider().create(stores.props("oci", "aws"))


def test_an_expired_par_says_to_raise_the_lifetime(stores: Stores) -> None:
    stores.oci.now = stores.oci.expires
    with pytest.raises(CopyError, match=r"HTTP 404.*serving\.artifactUrlLifetimeMinutes"):
        stores.provider().create(stores.props("oci", "aws"))


@pytest.mark.parametrize(
    ("code", "says"),
    [("AuthorizationFailure", "training.artifactReaderAddresses"),
     ("AuthorizationPermissionMismatch", "Storage Blob Data Reader on the container checkpoints")],
)  # fmt: skip
def test_azure_refusals_say_what_the_deployer_needs(stores: Stores, code: str, says: str) -> None:
    stores.azure.refusal = code
    with pytest.raises(CopyError, match=f"HTTP 403 {code}") as refused:
        stores.provider().create(stores.props("azure", "gcp"))
    assert says in str(refused.value)
    assert stores.azure_credential.scopes[0] == "https://storage.azure.com/.default"
    assert stores.written("gcp") == {}


@pytest.mark.parametrize("source", ["oci", "azure"])
def test_an_empty_source_prefix_fails(stores: Stores, source: str) -> None:
    empty = {"oci": "oci://ckpt@axaxnpcrorw5/models/llama/step-2/", "azure": STORAGE + "models/llama/step-2"}
    with pytest.raises(CopyError, match="holds no objects: nothing to serve"):
        stores.provider().create(stores.props(source, "aws") | {"source": empty[source]})


@pytest.mark.parametrize("destination", ["aws", "gcp", "azure", "vultr"])
def test_an_md5_mismatch_writes_nothing_of_that_object(stores: Stores, destination: str) -> None:
    stores.oci.wrong_md5 = {PREFIX + "model-00001-of-00002.safetensors"}  # the big one: multipart / chunks / blocks
    with pytest.raises(CopyError, match=r"MD5 .* differs from the source's"):
        stores.provider().create(stores.props("oci", destination))
    assert "model-00001-of-00002.safetensors" not in stores.written(destination)


@pytest.mark.parametrize("source", ["oci", "azure"])
def test_objects_without_a_source_md5_are_hashed_and_verified_on_the_next_run(stores: Stores, source: str) -> None:
    names = {PREFIX + "model-00001-of-00002.safetensors", PREFIX + "config.json"}
    stores.oci.multipart = names
    stores.azure.without_md5 = names
    provider = stores.provider()
    assert provider.create(stores.props(source, "aws")).outs["manifest_sha256"] == expected_manifest(PLAIN)
    assert stores.written("aws")["config.json"][1] == hashlib.md5(RELATIVE["config.json"]).hexdigest()
    assert provider.create(stores.props(source, "aws")).outs["manifest_sha256"] == expected_manifest(PLAIN)


def test_vultr_needs_the_stack_key(stores: Stores) -> None:
    with pytest.raises(CopyError, match="accessKey"):
        stores.provider().create(stores.props("oci", "vultr", destination_keys=None))


def test_diff_replaces_on_each_recopy_key_only() -> None:
    provider = ArtifactCopyProvider()
    olds = {"source_cloud": "oci", "source": SOURCES["oci"], "source_url": "https://a/p/x/", "destination_cloud": "aws",
            "destination": DESTINATIONS["aws"][0], "destination_endpoint": "us-east-1", "destination_keys": None,
            "clock": "2026-12-06T12:00:00Z", "objects": 7, "bytes": 1, "manifest_sha256": "ab"}  # fmt: skip
    assert not provider.diff("id", olds, dict(olds)).changes
    assert not provider.diff("id", olds, olds | {"source_url": "https://a/p/y/"}).changes  # a new PAR of the same clock
    for key in RECOPY_KEYS:
        answer = provider.diff("id", olds, olds | {key: "changed"})
        assert answer.changes and answer.replaces == [key] and answer.delete_before_replace is False
    provider.delete("id", olds)  # deletes nothing: no store is contacted (none is configured to answer)
    assert provider.read("id", olds).outs == olds


def test_the_provider_pickles_and_loads_no_cloud_sdk() -> None:
    from pulumi.dynamic.dynamic import serialize_provider

    serialized = serialize_provider(ArtifactCopyProvider())  # as the ArtifactCopy resource stores it in the state
    assert serialized == serialize_provider(ArtifactCopyProvider())  # the same bytes each `up`: no spurious update
    assert isinstance(pickle.loads(base64.b64decode(serialized)), ArtifactCopyProvider)
    program = (
        "import sys, accelstack.components.handoff.copy\n"
        "sdks = ('boto3', 'botocore', 's3transfer', 'azure', 'google.cloud', 'google.auth', 'google.api_core',"
        " 'google.resumable_media', 'msal')\n"
        "print([m for m in sys.modules if m.startswith(sdks)])"
    )
    loaded = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_odd_names_reach_s3_unchanged(make_stores: Any) -> None:
    """The names moto's signature check cannot take, with its authentication off for this test only."""
    stores = make_stores(RELATIVE)
    moto_auth(stores.s3_endpoint, "inf")
    try:
        stores.provider().create(stores.props("oci", "aws"))
        assert {name: data for name, (data, _) in stores.written("aws").items()} == RELATIVE
    finally:  # the names go while authentication is off: the next tests' cleanup could not sign for them
        client = stores.s3()
        for entry in client.list_objects_v2(Bucket="acme-serving-models").get("Contents", []):
            client.delete_object(Bucket="acme-serving-models", Key=entry["Key"])
        moto_auth(stores.s3_endpoint, "0")


def test_a_prefix_without_its_slash_is_still_a_folder(stores: Stores) -> None:
    """models/llama/step-1 copies step-1/..., never step-10/... beside it."""
    unslashed = {"source": SOURCES["oci"].rstrip("/")}
    assert stores.provider().create(stores.props("oci", "gcp") | unslashed).outs["objects"] == len(PLAIN)
    assert {name: data for name, (data, _) in stores.written("gcp").items()} == PLAIN


def test_a_dot_segment_in_a_name_is_refused(stores: Stores) -> None:
    stores.oci.objects[PREFIX + "a/../../escape.bin"] = b"x"
    with pytest.raises(CopyError, match=r"has a \. or \.\. segment"):
        stores.provider().create(stores.props("oci", "azure"))


@pytest.mark.parametrize(
    ("destination", "says"),
    [("aws", "the deployer's AWS credentials must be able to read and write s3://acme-serving-models/"),
     ("vultr", "account.weightsKey, must be able to read and write s3://acme-vultr-models/"),
     ("gcp", "roles/storage.objectUser"),
     ("azure", "Storage Blob Data Contributor on the container models of servingmodels")],
)  # fmt: skip
def test_destination_refusals_say_what_the_writer_needs(stores: Stores, destination: str, says: str) -> None:
    provider = stores.provider()
    props = stores.props("oci", destination)
    if destination == "aws":
        provider.options.credentials["aws"] = (stores.keys["deployer"][0], "not-the-secret")
    elif destination == "vultr":
        props["destination_keys"] = json.dumps({"accessKey": stores.keys["vultr"][0], "secretKey": "not-the-secret"})
    elif destination == "gcp":
        stores.gcs.refuse_writes = True
    else:
        stores.azure.refusal, stores.azure.refused_account = "AuthorizationPermissionMismatch", "servingmodels"
    with pytest.raises(CopyError) as refused:
        provider.create(props)
    assert says in str(refused.value)
