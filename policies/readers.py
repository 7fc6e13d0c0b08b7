"""What the vendors' readers share: a resource's display name, public address ranges, decoding node
data and finding secrets in it, checkpoint stores."""

from __future__ import annotations

import base64
import binascii
import contextlib
import email
import functools
import gzip
import ipaddress
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import yaml

from . import concepts
from .common import as_list, urn_name

# Address space that is not reachable from the internet: RFC 1918, shared CGNAT (RFC 6598), loopback,
# link-local, IPv6 unique-local and link-local (IANA special-purpose registries). An ingress source
# outside all of these admits public addresses, however the range is split (0.0.0.0/1 + 128.0.0.0/1).
NON_PUBLIC = tuple(
    ipaddress.ip_network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "fc00::/7",
        "fe80::/10",
        "::1/128",
    )
)

# Shapes from Trivy's built-in secret rules and gitleaks (aws-access-key-id, aws-secret-access-key,
# private-key, huggingface-access-token, github-pat). The secret key may follow `=`, `:` or a space
# (`aws configure set aws_secret_access_key ...`). Each with the literals one of which every match contains (none:
# no such literal): a substring test, far cheaper than the pattern's scan of a large user data text, rules it out.
SECRET_SHAPES = (
    (re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])"), "an AWS access key id", ("AKIA", "ASIA")),
    (
        re.compile(
            r"aws_?secret_?access_?key['\"]?(?:\s*[=:]\s*|\s+)['\"]?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])", re.IGNORECASE
        ),
        "an AWS secret access key",
        (),  # case-insensitive: no literal of the text's own case
    ),
    (re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"), "a private key", ("-----BEGIN ",)),
    (re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z]{34}(?![A-Za-z0-9])"), "a Hugging Face access token", ("hf_",)),
    (
        re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        "a GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
)
SECRET_PATTERNS = tuple((pattern, what) for pattern, what, _ in SECRET_SHAPES)
LONG_LITERAL = re.compile(r"[A-Za-z0-9+/=]{40,}")
KEY_FILES = re.compile(r"/etc/munge/munge\.key|jwt_hs256\.key|slurm\.key")


def name_of(resource: Any) -> str:
    return resource.name or urn_name(resource.urn)


def get(node: Any, *path: str) -> Any:
    """node.a.b.c, None when any step is missing (props are mappings or pulumi-policy proxies)."""
    for key in path:
        if node is None or not hasattr(node, "get"):
            return None
        node = node.get(key)
    return node


def items_at(node: Any, key: str) -> list[Any]:
    """The mappings listed under `key` (a missing key, a scalar or non-mapping items: none)."""
    return [i for i in as_list(get(node, key)) if hasattr(i, "get")]


def count_of(value: Any) -> int | None:
    """A size as a plain number (a fleet's size, a capacity); None for a bool, an unknown or a string: a count the
    reader cannot place is not a count."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def is_public_range(cidr: Any) -> bool:
    """True when a CIDR admits any public address (a range that cannot be parsed counts as public)."""
    try:
        network = ipaddress.ip_network(str(cidr).strip(), strict=False)
    except ValueError:
        return True
    # Same IP version checked first: subnet_of's overloads want the exact address family.
    return not any(network.version == block.version and network.subnet_of(block) for block in NON_PUBLIC)  # type: ignore[arg-type]


def decode_user_data(value: Any, *, base64_encoded: bool) -> str:
    """Launch templates carry base64 (maybe of gzip); instances carry text or userDataBase64."""
    if not isinstance(value, str):
        return ""
    raw: bytes = value.encode()
    if base64_encoded:
        try:
            raw = base64.b64decode(value, validate=False)
        except (binascii.Error, ValueError):
            raw = value.encode()
    if raw[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError):
            raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace")


def _parts(text: str) -> list[str]:
    """The documents of a user-data text: MIME multipart parts (cloud-init) or the text itself."""
    if text.lstrip().startswith(("Content-Type: multipart", "MIME-Version")):
        message = email.message_from_string(text)
        parts = []
        for part in message.walk():
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                parts.append(payload.decode("utf-8", errors="replace"))
        return parts
    return [text]


def _cloud_config(document: str) -> Any:
    """The document as YAML (None when it is not): libyaml's parser where PyYAML has it (the pure-Python one is
    most of the time a large export's user data takes), the pure-Python one for what libyaml refuses, so that
    what parses is what PyYAML's `safe_load` parses."""
    loaders = [getattr(yaml, "CSafeLoader", None), yaml.SafeLoader]
    for loader in filter(None, loaders):
        try:
            return yaml.load(document, Loader=loader)  # safe loaders only
        except yaml.YAMLError:
            continue
    return None


def _inlined_key_files(document: str) -> list[str]:
    found = []
    if document.lstrip().startswith("#cloud-config"):
        config = _cloud_config(document)
        for entry in (config or {}).get("write_files") or [] if isinstance(config, dict) else []:
            path = str(entry.get("path", "")) if isinstance(entry, dict) else ""
            if KEY_FILES.search(path) and entry.get("content"):
                found.append(path)
    # Shell: a line that writes a key file from a literal (echo <base64> | base64 -d > munge.key). A match lies
    # within one line (the pattern holds no line break): a document without one has no such line.
    for line in document.splitlines() if KEY_FILES.search(document) else ():
        match = KEY_FILES.search(line)
        if match and LONG_LITERAL.search(line.replace(match.group(0), "")):
            found.append(match.group(0))
    return found


def secrets_in(text: str) -> list[str]:
    """What key-like material a user-data text embeds (kinds, never the values)."""
    return list(_secrets_in(text))


@functools.lru_cache(maxsize=256)  # a template's user data is read per policy and again in the -final repeat
def _secrets_in(text: str) -> tuple[str, ...]:
    found = [
        what
        for pattern, what, literals in SECRET_SHAPES
        if (not literals or any(literal in text for literal in literals)) and pattern.search(text)
    ]
    # Cluster keys (munge, Slurm JWT) must be fetched at boot (Secrets Manager/SSM), never inlined.
    for document in _parts(text):
        found += [f"the content of {path}" for path in _inlined_key_files(document)]
    return tuple(dict.fromkeys(found))


def node_data_secrets(resource: Any, texts: Sequence[tuple[str, Any]]) -> Iterable[str]:
    """Secrets in a node's base64 texts (where, text): Azure custom data / user data, GCP startup scripts."""
    for where, value in texts:
        for what in secrets_in(decode_user_data(value, base64_encoded=True)):
            yield f"{name_of(resource)} {where} embeds {what}; fetch it at boot from Key Vault or Secret Manager"


def checkpoint_store(resource: Any, pattern: str) -> bool:
    names = [urn_name(resource.urn)] + [str(resource.props.get(k) or "") for k in ("bucket", "name", "containerName")]
    return any(re.search(pattern, n, re.IGNORECASE) for n in names)


def spot_without_checkpoints(
    resources: Sequence[Any], pattern: str, spot_usage: Callable[[Any], str | None]
) -> Iterable[tuple[str, str]]:
    """Spot/low-priority/preemptible training needs a checkpoint container or bucket (of any cloud)."""
    if any(checkpoint_store(b, pattern) for b in concepts.of(resources, "bucket")):
        return
    for resource in resources:
        if why := spot_usage(resource):
            yield (
                resource.urn,
                f"{name_of(resource)} {why} but the stack has no checkpoint container or bucket; "
                "set training.storage.checkpoints or use on-demand capacity",
            )
