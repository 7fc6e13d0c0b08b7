"""The Vultr replicas' weights key delivery (components/vultr/serving/weights_key.py): the URL each replica boots with
is botocore's own presigned GET for the key's object at the replica's clock, an `up` that changes nothing signs the
same URL (no replica replaced), a new replica gets a clock of its own while the others keep theirs, a boot change
replaces a replica together with its clock, and the spec refuses a key that cannot work."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from unittest import mock
from urllib.parse import parse_qs, urlsplit

import botocore.auth
import botocore.session
import pytest
import yaml
from botocore.config import Config

from accelstack.components.vultr.mocks import MOCK_CLOCK
from accelstack.components.vultr.serving.presign import MAX_EXPIRES_SECONDS, presigned_get
from accelstack.components.vultr.serving.weights_key import OFFLINE_SIGNER, WEIGHTS_KEY_URL_FILE
from accelstack.engine.capture import Capture
from accelstack.spec import SpecError, load_stack
from accelstack.spec.loader import read_stack_file
from tests.stack_edits import deployed, replacements, updated

REPO = Path(__file__).resolve().parents[3]
STACK = "vultr-serving"
INSTANCE = "vultr:index/instance:Instance"
CLOCK = "time:index/static:Static"


def botocore_url(host: str, bucket: str, key: str, access: str, secret: str, at: datetime, seconds: int) -> str:
    """What botocore's S3 presigner (path style, SigV4) gives at the instant `at`."""
    client = botocore.session.Session().create_client(
        "s3",
        region_name="us-east-1",
        endpoint_url=f"https://{host}",
        aws_access_key_id=access,
        aws_secret_access_key=secret,
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=at.replace(tzinfo=None)):
        url: str = client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=seconds)
    return url


@pytest.mark.parametrize(
    ("key", "secret", "seconds"),
    [
        ("keys/vultr-serving-weights-reader.env", "a/b+c=d", 7200),
        ("keys/with space/and+plus~tilde.env", "S3cr3t", 900),
        ("k", "x" * 40, MAX_EXPIRES_SECONDS),
    ],
)
def test_the_signature_is_botocores(key: str, secret: str, seconds: int) -> None:
    at = datetime(2026, 12, 5, 23, 59, 59, tzinfo=UTC)
    ours = presigned_get(
        host="ewr1.vultrobjects.com", bucket="acme-models", key=key, access_key="VULTRKEY0123456789AB",
        secret_key=secret, signed_at=at, expires_seconds=seconds,
    )  # fmt: skip
    assert ours == botocore_url(
        "ewr1.vultrobjects.com", "acme-models", key, "VULTRKEY0123456789AB", secret, at, seconds
    )


def test_a_url_cannot_outlive_sigv4s_week_or_sign_a_local_time() -> None:
    common = {"host": "h", "bucket": "b", "key": "k", "access_key": "a", "secret_key": "s"}
    with pytest.raises(ValueError, match="7 days"):
        presigned_get(**common, signed_at=datetime.now(UTC), expires_seconds=MAX_EXPIRES_SECONDS + 1)
    with pytest.raises(ValueError, match="timezone"):
        presigned_get(**common, signed_at=datetime(2026, 1, 1), expires_seconds=60)


def urls(cap: Capture) -> dict[str, str]:
    found = {}
    for instance in cap.by_type(INSTANCE):
        [entry] = [
            f for f in yaml.safe_load(instance.inputs["userData"])["write_files"] if f["path"] == WEIGHTS_KEY_URL_FILE
        ]
        assert entry["permissions"] == "0600"
        found[instance.name] = entry["content"].strip()
    return found


def test_each_replica_boots_with_botocores_url_for_the_key_object_at_its_clock() -> None:
    cap = deployed(STACK)[0]
    spec = load_stack(REPO / "stacks" / f"Pulumi.{STACK}.yaml")
    key = spec.account.weights_key
    clocks = {c.name: c for c in cap.by_type(CLOCK)}
    assert sorted(clocks) == [f"{STACK}-replica-{i}-key-clock" for i in range(spec.serving.replicas.max)]
    expected = botocore_url(
        "ewr1.vultrobjects.com", "acme-models", "keys/vultr-serving-weights-reader.env", *OFFLINE_SIGNER,
        datetime.fromisoformat(MOCK_CLOCK), key.url_lifetime_minutes * 60,
    )  # fmt: skip
    assert set(urls(cap).values()) == {expected}
    query = parse_qs(urlsplit(expected).query)
    assert (
        query["X-Amz-Expires"] == ["7200"]
        and urlsplit(expected).path == "/acme-models/keys/vultr-serving-weights-reader.env"
    )


def test_an_up_that_changes_nothing_replaces_no_replica_and_no_clock() -> None:
    assert replacements(STACK, ()) == []
    assert urls(updated(STACK, ())) == urls(deployed(STACK)[0])


def test_a_new_replica_gets_a_clock_of_its_own() -> None:
    """A third replica changes every replica's share of the waiting queue (the proxy's MAX_WAITING in the boot):
    the two are replaced with their clocks, and the new one has its own clock."""
    grown = ("serving.replicas.min=3", "serving.replicas.max=3")
    replaced = replacements(STACK, grown)
    assert sorted(line.split()[1].rstrip(":") for line in replaced) == sorted(
        [f"{STACK}-replica-{i}{end}" for i in range(2) for end in ("", "-key-clock")]
    ), replaced
    after = updated(STACK, grown)
    assert f"{STACK}-replica-2-key-clock" in {c.name for c in after.by_type(CLOCK)}
    assert len(urls(after)) == 3


def test_a_boot_change_replaces_each_replica_with_its_clock() -> None:
    replaced = replacements(STACK, ("serving.model.weightsUri=s3://acme-models/models/llama-3.1-8b-instruct-v2/",))
    for index in range(2):
        assert any(line.startswith(f"{CLOCK} {STACK}-replica-{index}-key-clock") for line in replaced), replaced
        assert any(line.startswith(f"{INSTANCE} {STACK}-replica-{index}") for line in replaced), replaced


def _key(**changes: object):
    def edit(raw: dict) -> None:
        for name, value in changes.items():
            if value is None:
                raw["account"]["weightsKey"].pop(name)
            else:
                raw["account"]["weightsKey"][name] = value

    return edit


def _no_key(raw: dict) -> None:
    del raw["account"]["weightsKey"]


@pytest.mark.parametrize(
    ("edit", "path", "says"),
    [
        (_no_key, "account.weightsKey", "required on Vultr for serving"),
        (
            _key(object="s3://acme-models/models/llama-3.1-8b-instruct/key.env"),
            "account.weightsKey.object",
            "every replica copies to its disk",
        ),
        (_key(object="s3://acme-models/keys/"), "account.weightsKey.object", "not an object"),
        (_key(urlLifetimeMinutes=1441), "account.weightsKey.urlLifetimeMinutes", "1440"),
        (_key(signerSecret="AKIA0123"), "account.weightsKey.signerSecret", "not a reference"),
    ],
)
def test_validate_refuses_a_key_that_cannot_work(tmp_path: Path, edit, path: str, says: str) -> None:
    raw = read_stack_file(REPO / "stacks" / f"Pulumi.{STACK}.yaml")
    edit(raw)
    (tmp_path / "stacks").mkdir()
    stack_file = tmp_path / "stacks" / f"Pulumi.{STACK}.yaml"
    stack_file.write_text(yaml.safe_dump({"config": {f"accelstack:{k}": v for k, v in raw.items()}}))
    with pytest.raises(SpecError) as refused:
        load_stack(stack_file)
    lines = [f"{p.path}: {p.message}" for p in refused.value.problems]
    assert any(line.startswith(path) and says in line for line in lines), lines
