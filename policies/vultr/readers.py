"""Vultr (ediri-vultr) readers: what the firewall groups admit from the internet, that the load balancer serves HTTPS
only, that instance user data carries no secret, that Object Storage keys never reach a node in clear, and the
workload tags (Vultr tags are `key=value` strings). Vultr has no IAM: an API key is the whole account, so nothing
here grants anything across accounts; the separation is the provider's key (policies/vultr/__init__.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from ..common import as_list, refers_to, truthy
from ..readers import decode_user_data, get, is_public_range, items_at, name_of, secrets_in

INSTANCE = "vultr:index/instance:Instance"
BARE_METAL = "vultr:index/bareMetalServer:BareMetalServer"
NODES = (INSTANCE, BARE_METAL)
LOAD_BALANCER = "vultr:index/loadBalancer:LoadBalancer"
FIREWALL_RULE = "vultr:index/firewallRule:FirewallRule"
STARTUP_SCRIPT = "vultr:index/startupScript:StartupScript"
# A presigned URL (SigV4 query authentication) in user data opens its one object to whoever reads the user data
# until it expires: accepted only when short-lived (accelstack's replicas: account.weightsKey.urlLifetimeMinutes).
PRESIGNED_URL = re.compile(r"https://[^\s'\"]+[?&]X-Amz-Signature=[0-9a-f]+[^\s'\"]*")
PRESIGNED_EXPIRES = re.compile(r"[?&]X-Amz-Expires=(\d+)")
MAX_PRESIGNED_SECONDS = 24 * 3600
# A replica reading AWS weights carries one STS session of the training account's reader role in this root-only file
# (components/handoff/s3_session.py): temporary credentials (an ASIA key id is refused by S3 without its session
# token) whose lifetime the separation pack judges on the session itself (handoff-reader-expires, at most 1 h).
# Only that file, only that exact shape: a long-lived key (AKIA...) there or anywhere else is still a finding.
SESSION_FILE = "/etc/accelstack/weights-s3.env"
SESSION_CREDENTIALS = re.compile(
    r"AWS_ACCESS_KEY_ID=ASIA[0-9A-Z]{16}\nAWS_SECRET_ACCESS_KEY=[A-Za-z0-9/+=]{40}\nAWS_SESSION_TOKEN=[A-Za-z0-9/+=]{16,}\n?"
)
TAG_KEYS = {"accelstack:workload", "accelstack:stack", "accelstack:config-digest"}


def rule_source(rule: Any) -> str:
    """A firewall rule's source as a CIDR (`subnet`/`subnetSize`), or its `source` (`cloudflare`: Cloudflare's ranges,
    or a load balancer's id)."""
    if rule.props.get("source"):
        return str(rule.props.get("source"))
    subnet, size = rule.props.get("subnet"), rule.props.get("subnetSize")
    return f"{subnet}/{int(size) if isinstance(size, (int, float)) else size}"


def public_rule(rule: Any) -> bool:
    """Whether a firewall rule admits the internet: a public CIDR, or Cloudflare's ranges (anyone behind Cloudflare)."""
    if rule.resource_type != FIREWALL_RULE:
        return False
    source = str(rule.props.get("source") or "")
    if source:
        return source == "cloudflare"  # a load balancer id admits that load balancer only
    return is_public_range(rule_source(rule))


def check_no_internet_ingress(resource: Any, workload: str | None) -> Iterable[str]:
    """Firewall rules admit no public source (Vultr drops what no rule of the group accepts:
    https://docs.vultr.com/products/network/firewall): the replicas are reached through the load balancer, from the
    VPC's subnet (or the load balancer's id as `source`)."""
    if public_rule(resource):
        yield (
            f"firewall rule {name_of(resource)} admits {resource.props.get('protocol')} port "
            f"{resource.props.get('port') or 'all'} from {rule_source(resource)}; only the load balancer may reach "
            "the replicas"
        )


def _certificate_set(resource: Any) -> bool:
    try:
        return bool(resource.props.get("ssl"))
    except Exception:  # noqa: BLE001  # a secret unknown during preview (the certificate's PEM): it is set
        return True


def check_https_listeners(resource: Any) -> Iterable[str]:
    """The load balancer terminates HTTPS: every forwarding rule's frontend is https (or http redirected by
    sslRedirect), and an https frontend has a certificate (`ssl`). Checkov CKV_AWS_2's intent for Vultr."""
    if resource.resource_type != LOAD_BALANCER:
        return
    rules = items_at(resource.props, "forwardingRules")
    redirect = truthy(resource.props.get("sslRedirect"))
    for rule in rules:
        protocol = str(rule.get("frontendProtocol") or "").lower()
        if protocol == "http" and not redirect:
            yield f"load balancer {name_of(resource)} serves HTTP on {rule.get('frontendPort')} without sslRedirect"
        elif protocol not in ("http", "https"):
            yield f"load balancer {name_of(resource)} forwards {protocol or 'an unnamed protocol'} (only https serves)"
        elif protocol == "https" and not _certificate_set(resource):
            yield f"load balancer {name_of(resource)} serves https with no certificate (ssl)"
    if not rules:
        yield f"load balancer {name_of(resource)} has no forwarding rules the pack can read"


def check_node_data_secrets(resource: Any) -> Iterable[str]:
    """No secrets in user data: Vultr serves it to anything on the instance (its metadata service) and to the whole
    account's API (https://docs.vultr.com/how-to-use-vultr-cloud-init-user-data). accelstack's replicas read their
    Object Storage key from a root-only file, fetched once through a presigned URL that expires within a day
    (docs/deploy-vultr.md): a longer-lived URL is judged like a key. A startup script (its base64 `script`, run on
    the boot of each node that names it) is read the same way. Marketplace app variables (`appVariables`) feed an
    app's own boot code, which the packs never see: a node that sets any fails closed (accelstack sets none)."""
    if resource.resource_type == STARTUP_SCRIPT:
        script = decode_user_data(resource.props.get("script"), base64_encoded=True)
        yield from _boot_text_findings(f"startup script {name_of(resource)}", script)
        return
    if resource.resource_type not in NODES:
        return
    variables = resource.props.get("appVariables")
    if variables:
        names = ", ".join(sorted(str(k) for k in variables)) if hasattr(variables, "keys") else str(variables)
        yield (
            f"{name_of(resource)} sets Marketplace app variables ({names}): the app's own boot code takes them, "
            "which the packs cannot read; set the node's boot in userData"
        )
    yield from _boot_text_findings(f"{name_of(resource)} userData", str(resource.props.get("userData") or ""))


def _without_session_file(text: str) -> str:
    """The user data less the content of SESSION_FILE when it holds exactly a session's temporary credentials."""
    import yaml

    try:
        document = yaml.safe_load(text) if text.startswith("#cloud-config") else None
    except yaml.YAMLError:
        return text
    files = document.get("write_files") if isinstance(document, dict) else None
    for entry in files if isinstance(files, list) else []:
        if not isinstance(entry, dict):
            continue  # any shape cloud-init would refuse stays in the text judged below
        content = entry.get("content")
        if entry.get("path") == SESSION_FILE and isinstance(content, str) and SESSION_CREDENTIALS.fullmatch(content):
            entry["content"] = "(temporary session credentials)"
            return str(yaml.safe_dump(document))
    return text


def _boot_text_findings(what: str, text: str) -> Iterable[str]:
    text = _without_session_file(text)
    for secret in secrets_in(text):
        yield f"{what} embeds {secret}; it is readable by anything on the instance and by the API"
    for url in PRESIGNED_URL.findall(text):
        expires = PRESIGNED_EXPIRES.search(url)
        seconds = int(expires.group(1)) if expires else None
        if seconds is None or seconds > MAX_PRESIGNED_SECONDS:
            lasting = f"for {seconds} s" if seconds is not None else "with no X-Amz-Expires"
            yield (
                f"{what} embeds a presigned URL valid {lasting}; anything reading the user "
                f"data can use it until it expires: at most {MAX_PRESIGNED_SECONDS} s (24 h)"
            )


def check_node_data_references(resources: Sequence[Any]) -> Iterable[tuple[str, str]]:
    """A node's `scriptId` runs a startup script on its boot (https://docs.vultr.com/products/compute/startup-scripts):
    one of this stack's startup scripts is judged like user data (check_node_data_secrets); any other (a script
    kept in the account by hand, or another stack's) runs code and carries data the packs never see: fail closed."""
    scripts = [r for r in resources if r.resource_type == STARTUP_SCRIPT]
    urns = {script.urn for script in scripts}
    for node in resources:
        if node.resource_type not in NODES:
            continue
        deps = (getattr(node, "property_dependencies", None) or {}).get("scriptId", [])
        try:
            script_id = node.props.get("scriptId")
        except UnknownValueError:  # during preview: an output of the stack; its dependency says whose
            script_id = "(unknown until created)"
            if any(getattr(d, "urn", None) in urns for d in deps):
                continue
        else:
            if not script_id and not deps:
                continue
            if any(refers_to(node, "scriptId", script, keys=("id",)) for script in scripts):
                continue
        yield (
            node.urn,
            f"{name_of(node)} runs startup script {script_id!r} on boot, which is no startup script of this stack: "
            "the packs cannot read what it runs or carries (declare it in the stack, or set the boot in userData)",
        )


def internet_facing(resource: Any) -> bool:
    """A Vultr load balancer has a public address whenever it has a forwarding rule."""
    return bool(items_at(resource.props, "forwardingRules"))


def resource_tags(resource: Any) -> Mapping[str, str]:
    """Vultr tags are plain strings: `accelstack:workload=serving`."""
    found = {}
    for tag in as_list(resource.props.get("tags")):
        key, sep, value = str(tag).partition("=")
        if sep and key in TAG_KEYS:
            found[key] = value
    return found


def region_of(resource: Any) -> Any:
    return get(resource.props, "region")
