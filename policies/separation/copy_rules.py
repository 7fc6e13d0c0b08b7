"""A serving stack's copy of another cloud's training artifacts into its OWN store (components/handoff/copy.py, a
dynamic resource the deployer runs at `pulumi up`), judged as the separation judges every other crossing: only read
of the artifact prefix crosses, and only into the serving side. The copy reads the source read-only and prefix-scoped
(OCI: a pre-authenticated request this stack declares for it, AnyObjectRead with ListObjects on exactly the source
prefix, expiring within the copy's URL lifetime after the copy's clock; Azure: the deployer's own token, so no
credential prop at all) and writes only under a non-empty prefix of the stack's own cloud's store, never into a store
the config names as training's. The training side never writes into the serving account: a training stack declares
no copy. Anything the pack cannot read (a missing, unknown, mistyped or extra prop, a cloud it does not know) fails
closed, and nothing here raises on a hostile shape. Ours."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from ..common import Context, of_type

COPY = "pulumi-python:dynamic/handoff:ArtifactCopy"
OCI_PAR = "oci:ObjectStorage/preauthrequest:Preauthrequest"
CLOCK = "time:index/static:Static"  # the copy's clock (pulumiverse-time): the PAR expires from it
CONFIG_KEY = "artifactCopies"
CONFIG: dict[str, dict[str, Any]] = {
    CONFIG_KEY: {
        "type": "array",
        "items": {"type": "object"},
        "description": "A serving stack's copies of another cloud's training artifacts into its own store "
        "(serving.model.copyFrom; accelstack.engine.pack_context): per copy its `sourceCloud`, `source` URI, source "
        "`store` (a bucket; Azure: the storage account), `namespace` (OCI), `prefix`, training `account`, `tenancy` "
        "and `region` (OCI: where its PAR is declared), `lifetimeMinutes` (the PAR's), `destinationCloud` (the "
        "stack's own) and `destination` URI.",
    },
}
SOURCE_CLOUDS = ("oci", "azure")
DESTINATION_CLOUDS = ("aws", "azure", "gcp", "vultr")
INPUTS = (
    "source_cloud",
    "source",
    "source_url",
    "destination_cloud",
    "destination",
    "destination_endpoint",
    "destination_keys",
    "clock",
)
OUTPUTS = ("objects", "bytes", "manifest_sha256")
# None where the copy needs no credential (Azure sources; destinations other than Vultr): the engine drops a None
# input, so these may be absent, and an absent one reads as None.
OPTIONAL = ("source_url", "destination_keys")
ENGINE_KEYS = ("__provider",)  # the pickled provider a dynamic resource carries (pulumi/dynamic/dynamic.py)
LITERALS = ("source_cloud", "source", "destination_cloud", "destination", "destination_endpoint")
# serving.artifactUrlLifetimeMinutes for a copy's PAR (design: 15..1440, default 120).
LIFETIME_MINUTES = (15, 1440)
DEFAULT_LIFETIME_MINUTES = 120
PAR_ACCESS = "AnyObjectRead"  # every object under the prefix, read only
PAR_LISTING = "ListObjects"  # the copy lists the prefix it reads
BLOB_HOST = re.compile(r"^https://(?P<account>[a-z0-9]{3,24})\.blob\.core\.windows\.net/(?P<rest>.*)$")
S3_HTTPS = re.compile(
    r"^https://(?P<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\.s3\.(?P<region>[a-z]{2}(?:-[a-z]+)+-[0-9])"
    r"\.amazonaws\.com/(?P<rest>.*)$"
)
BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,221}[a-z0-9]$")
# A prefix of printable ASCII with no empty, `.` or `..` segment: one key space, no path tricks.
PREFIX = re.compile(r"^(?:[!-~]+/)*[!-~]*$")
NAMESPACE = re.compile(r"^[a-z0-9]{1,64}$")
AWS_REGION = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-[0-9]$")
VULTR_HOST = re.compile(r"^(?:https://)?[a-z]{3}[0-9]+\.vultrobjects\.com$")
PAR_URL = re.compile(
    r"^https://objectstorage\.(?P<region>[a-z0-9-]+)\.oraclecloud\.com/p/[A-Za-z0-9_:.+=-]+/n/(?P<ns>[^/]+)"
    r"/b/(?P<bucket>[^/]+)/o/$"
)


class _Unknown:
    def __repr__(self) -> str:
        return "(unknown)"


UNKNOWN: Any = _Unknown()  # a value pulumi-policy cannot show yet (a preview)


def shown(value: Any) -> str:
    """A value as a message shows it: a proxy's class name says nothing to the reader."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)) or (hasattr(value, "__len__") and not isinstance(value, (str, bytes))):
        return "a list"
    return repr(value)


def read(props: Any, key: str) -> Any:
    """props[key]; UNKNOWN for a value not known yet; None where the props cannot be read at all."""
    try:
        return props.get(key) if hasattr(props, "get") else None
    except UnknownValueError:
        return UNKNOWN
    except Exception:  # noqa: BLE001  # a hostile shape: read as absent, and judged as absent (fail closed)
        return None


def keys_of(props: Any) -> list[str] | None:
    try:
        return [str(k) for k in props]
    except Exception:  # noqa: BLE001  # a hostile shape: no keys the pack can read
        return None


ENTRY_STRINGS = ("sourceCloud", "source", "store", "prefix", "account", "destinationCloud", "destination")
ENTRY_OPTIONAL = ("namespace", "tenancy", "region", "lifetimeMinutes")
SHARED = ("sourceCloud", "destinationCloud", "account", "tenancy", "region")  # one artifactAccount per stack


def copy_config(ctx: Context) -> Mapping[str, Any] | None:
    """The configured copies as one view (`copy`: True, the source `cloud`, `servingCloud`, `account`, `tenancy`,
    `region`, the source `stores`, `namespaces`, `storageAccounts`, `prefixes`, `copies` [{source, destination}] and
    `lifetimes` by copy), what the reader's rules read of a handoff; None when there are none, or when the config is
    not of their shape: a config the pack cannot read admits nothing."""
    entries = ctx.config.get(CONFIG_KEY)
    if not isinstance(entries, list) or not entries:
        return None
    held = _views.get(id(entries))
    if held is not None and held[0] is entries:
        return held[1]
    view = _view(entries) if config_problem(entries) is None else None
    if len(_views) >= 16:
        _views.clear()
    _views[id(entries)] = (entries, view)
    return view


# Views by the identity of the config list they were made from (held, so its id stays its own): the reader's rules
# ask for every resource under a provider; a runner hands one config to all of a policy's calls.
_views: dict[int, tuple[list[Any], Mapping[str, Any] | None]] = {}


def _view(entries: list[Any]) -> Mapping[str, Any]:
    first = entries[0]
    places = [place(str(e["sourceCloud"]), str(e["source"])) for e in entries]
    azure = first["sourceCloud"] == "azure"
    return {
        "copy": True,
        "cloud": first["sourceCloud"],
        "servingCloud": first["destinationCloud"],
        "account": first["account"],
        "tenancy": first.get("tenancy"),
        "region": first.get("region"),
        # Azure: `store` is the storage account; the container is the source URI's.
        "stores": sorted(
            {p.bucket for p in places if isinstance(p, Place)} if azure else {e["store"] for e in entries}
        ),
        "storageAccounts": sorted({e["store"] for e in entries}) if azure else [],
        "namespaces": sorted({e["namespace"] for e in entries if e.get("namespace")}),
        "prefixes": sorted({e["prefix"] for e in entries}),
        "copies": [{"source": e["source"], "destination": e["destination"]} for e in entries],
        "lifetimes": {(e["source"], e["destination"]): e.get("lifetimeMinutes") for e in entries},
    }


def config_problem(entries: Any) -> str | None:
    """Why the configured copies cannot be read (None: they can)."""
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        return "not a list of copies"
    for index, entry in enumerate(entries):
        unknown = sorted(set(map(str, entry)) - set(ENTRY_STRINGS) - set(ENTRY_OPTIONAL))
        if unknown:
            return f"copy {index} has keys {unknown} the pack does not know"
        missing = [k for k in ENTRY_STRINGS if not (isinstance(entry.get(k), str) and entry.get(k))]
        if missing:
            return f"copy {index} lacks {missing}"
        wrong = [k for k in ENTRY_OPTIONAL[:3] if entry.get(k) is not None and not isinstance(entry.get(k), str)]
        lifetime = entry.get("lifetimeMinutes")
        if wrong or isinstance(lifetime, bool) or not isinstance(lifetime, (int, float, type(None))):
            return f"copy {index} has {wrong or ['lifetimeMinutes']} of another type"
        if any(entry.get(k) != entries[0].get(k) for k in SHARED):
            return f"copy {index} names another {'/'.join(SHARED)} than copy 0 (one artifactAccount per stack)"
    return None


def strings(config: Mapping[str, Any], key: str) -> set[str]:
    value = config.get(key)
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


@dataclass(frozen=True)
class Place:
    """Where a URI points, in its cloud's terms: the bucket (an Azure container, with its storage account; an OCI
    bucket, with its namespace) and the key prefix."""

    cloud: str
    bucket: str
    prefix: str
    account: str = ""  # Azure: the storage account; OCI: the namespace

    def holds(self, other: Place) -> bool:
        """Whether `other` is this place or inside it."""
        return (self.cloud, self.bucket, self.account) == (other.cloud, other.bucket, other.account) and (
            other.prefix.startswith(self.prefix)
        )


def place(cloud: str, uri: str) -> Place | str:
    """The place `uri` names on `cloud`, or why the pack cannot read it (a URI of another scheme, a bucket root)."""
    if not uri.isascii() or any(c.isspace() for c in uri):
        return f"{uri!r} is not a plain ASCII URI"
    if cloud == "azure":
        match = BLOB_HOST.match(uri)
        if match is None:
            return f"{uri!r} is not https://<account>.blob.core.windows.net/<container>/<prefix>"
        account, (container, _, prefix) = match["account"], match["rest"].partition("/")
        return _checked(Place(cloud, container, prefix, account), uri)
    if cloud == "oci":
        scheme, _, rest = uri.partition("://")
        host, _, prefix = rest.partition("/")
        bucket, _, namespace = host.partition("@")
        if scheme != "oci" or not NAMESPACE.match(namespace):
            return f"{uri!r} is not oci://<bucket>@<namespace>/<prefix>"
        return _checked(Place(cloud, bucket, prefix, namespace), uri)
    if cloud == "aws" and (virtual := S3_HTTPS.match(uri)) is not None:
        return _checked(Place(cloud, virtual["bucket"], virtual["rest"]), uri)
    expected = {"aws": "s3", "vultr": "s3", "gcp": "gs"}.get(cloud)
    given, _, rest = uri.partition("://")
    if expected is None or given != expected:
        return f"{uri!r} is not a {cloud} store URI ({expected or 'no scheme known'}://<bucket>/<prefix>)"
    bucket, _, prefix = rest.partition("/")
    return _checked(Place(cloud, bucket, prefix), uri)


def _checked(found: Place, uri: str) -> Place | str:
    if not BUCKET.match(found.bucket):
        return f"{uri!r}: bucket {found.bucket!r} is not a bucket name"
    if not found.prefix.strip("/"):
        return f"{uri!r} names the bucket root: a copy reads and writes under a non-empty prefix"
    segments = found.prefix.rstrip("/").split("/")
    if not PREFIX.match(found.prefix) or any(s in ("", ".", "..") for s in segments):
        return f"{uri!r}: prefix {found.prefix!r} has an empty, '.' or '..' segment or a character outside ASCII"
    return found


def _deps(resource: Any, key: str) -> list[str]:
    """The urns `key` of `resource` depends on (the engine's property dependencies)."""
    deps = (getattr(resource, "property_dependencies", None) or {}).get(key) or []
    return [str(getattr(d, "urn", d)) for d in deps]


def clocks_of(resource: Any, key: str, by_urn: Mapping[str, Any]) -> set[str]:
    """The time_static urns `key` of `resource` depends on."""
    return {u for u in _deps(resource, key) if getattr(by_urn.get(u), "resource_type", "") == CLOCK}


def source_pars(copy: Any, by_urn: Mapping[str, Any]) -> list[Any]:
    """The PARs the copy's source_url comes from."""
    return [by_urn[u] for u in _deps(copy, "source_url") if getattr(by_urn.get(u), "resource_type", "") == OCI_PAR]


def lifetime_seconds(config: Mapping[str, Any], copy: Any) -> int:
    """How long a copy's PAR may live after its clock: the configured URL lifetime of that copy, within its bounds."""
    key = (read(copy.props, "source"), read(copy.props, "destination"))
    lifetimes = config.get("lifetimes")
    minutes = lifetimes.get(key) if isinstance(lifetimes, Mapping) and all(isinstance(k, str) for k in key) else None
    low, high = LIFETIME_MINUTES
    # Config arrives through a protobuf Struct: every number is a float.
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not low <= minutes <= high:
        minutes = DEFAULT_LIFETIME_MINUTES
    return int(minutes) * 60


def check_copies(resources: Sequence[Any], ctx: Context) -> Iterable[tuple[str, str]]:
    """Each ArtifactCopy: declared by a serving stack only, for a copy its config names, reading the source read-only
    and prefix-scoped and writing only under a prefix of the stack's own store; no two copies write one prefix. Ours:
    the cross-account read path (cross-account-read-only) for a crossing no provider resource shows."""
    copies = of_type(resources, COPY)
    if not copies:
        return
    if ctx.workload != "serving":
        why = (
            "the training side never writes into the serving account"
            if ctx.workload == "training"
            else f"a {ctx.workload or 'stack of unknown side'} stack copies nothing"
        )
        for copy in copies:
            yield (
                copy.urn,
                (
                    f"artifact copy {copy.name}: {why}; only a serving stack declares a copy, pulling the weights it names "
                    "(serving.model.copyFrom) into its own store"
                ),
            )
        return
    config = copy_config(ctx)
    if config is None:
        given = ctx.config.get(CONFIG_KEY)
        why = (
            f"the policy config names no copy ({CONFIG_KEY})"
            if given is None or given == []
            else f"the policy config's {CONFIG_KEY} cannot be read ({config_problem(given) or 'empty'}); fail closed"
        )
        for copy in copies:
            yield (
                copy.urn,
                (
                    f"artifact copy {copy.name}: {why}: a copy is declared only as serving.model.copyFrom names it (pass "
                    "`accelstack policy STACK --emit-config separation`)"
                ),
            )
        return
    by_urn = {r.urn: r for r in resources}
    written: list[tuple[Any, Place]] = []
    for copy in copies:
        problems, destination = copy_problems(copy, config, ctx, by_urn)
        for problem in problems:
            yield copy.urn, f"artifact copy {copy.name}: {problem}"
        if destination is not None:
            written.append((copy, destination))
    for index, (copy, destination) in enumerate(written):
        for other, elsewhere in written[index + 1 :]:
            if destination.holds(elsewhere) or elsewhere.holds(destination):
                yield (
                    copy.urn,
                    (
                        f"artifact copy {copy.name}: writes {destination.bucket}/{destination.prefix}, which overlaps "
                        f"copy {other.name}'s {elsewhere.bucket}/{elsewhere.prefix}; each copy writes its own prefix"
                    ),
                )


def copy_problems(
    copy: Any, config: Mapping[str, Any], ctx: Context, by_urn: Mapping[str, Any]
) -> tuple[list[str], Place | None]:
    """What is wrong with one copy, and where it writes (None when the pack cannot place it)."""
    props = copy.props
    keys = keys_of(props)
    if keys is None:
        return ["its props cannot be read; fail closed"], None
    problems = []
    extra = sorted(set(keys) - set(INPUTS) - set(OUTPUTS) - set(ENGINE_KEYS))
    if extra:
        problems.append(f"props {extra} are not an artifact copy's (allowed: {', '.join(INPUTS + OUTPUTS)})")
    missing = [k for k in INPUTS if k not in keys and k not in OPTIONAL]
    if missing:
        problems.append(f"props {missing} are missing; fail closed")
    values = {k: read(props, k) for k in INPUTS}
    for key in LITERALS:
        if not isinstance(values[key], str):
            problems.append(f"{key} is {shown(values[key])}: a copy's clouds, URIs and endpoint are the spec's strings")
    if problems:
        return problems, None
    source_cloud, destination_cloud = values["source_cloud"], values["destination_cloud"]
    serving_cloud = config.get("servingCloud")
    if source_cloud not in SOURCE_CLOUDS or source_cloud != config.get("cloud"):
        allowed = config.get("cloud") if config.get("cloud") in SOURCE_CLOUDS else " or ".join(SOURCE_CLOUDS)
        problems.append(f"source_cloud {source_cloud!r}; allowed: {allowed} (the configured source)")
    if destination_cloud not in DESTINATION_CLOUDS or destination_cloud != serving_cloud:
        problems.append(
            f"destination_cloud {destination_cloud!r}; allowed: the stack's own cloud ({serving_cloud!r}): a copy "
            "writes only into the serving stack's own store"
        )
    if destination_cloud == source_cloud:
        problems.append(
            f"destination_cloud {destination_cloud!r} is the source's cloud: it would write the training side's"
        )
    if problems:
        return problems, None
    source = place(source_cloud, values["source"])
    destination = place(destination_cloud, values["destination"])
    if isinstance(source, str):
        problems.append(f"source {source}")
    if isinstance(destination, str):
        problems.append(f"destination {destination}")
    if isinstance(source, str) or isinstance(destination, str):
        return problems, None
    problems += source_problems(copy, source, values, config, by_urn)
    problems += destination_problems(copy, source, destination, values, config, ctx)
    pairs = config.get("copies")
    if isinstance(pairs, list):
        pair = {"source": values["source"], "destination": values["destination"]}
        if pair not in pairs:
            problems.append(
                f"copies {values['source']} to {values['destination']}, not a copy the config names "
                "(serving.model.copyFrom to weightsUri, each adapter's copyFrom to its uri)"
            )
    if not clocks_of(copy, "clock", by_urn):
        problems.append(f"its clock comes from no copy clock ({CLOCK}); a copy and its source credential date from it")
    elif values["clock"] is not UNKNOWN and not isinstance(values["clock"], str):
        problems.append(f"clock is {shown(values['clock'])}, not an RFC 3339 instant; fail closed")
    return problems, destination


def source_problems(
    copy: Any, source: Place, values: Mapping[str, Any], config: Mapping[str, Any], by_urn: Mapping[str, Any]
) -> list[str]:
    """The source is the configured training store's artifact prefix, read with no credential of the deployer's own
    making (Azure) or through exactly one PAR this stack declares for it (OCI)."""
    problems = []
    if source.bucket not in strings(config, "stores"):
        problems.append(
            f"reads bucket {source.bucket}, not the configured artifacts' ({sorted(strings(config, 'stores'))})"
        )
    accounts = strings(config, "namespaces" if source.cloud == "oci" else "storageAccounts")
    if source.account not in accounts:
        problems.append(f"reads from {source.account!r}, not the configured artifacts' ({sorted(accounts)})")
    if not any(source.prefix.startswith(p) and p.strip("/") for p in strings(config, "prefixes")):
        problems.append(
            f"reads prefix {source.prefix!r}, outside the artifact prefixes {sorted(strings(config, 'prefixes'))}"
        )
    url = values["source_url"]
    if source.cloud == "azure":
        # A redacted secret (accelstack's export) is unknown here: passed only as a literal (no dependency); the CLI's
        # run shows the value itself.
        if url not in (None, "") and not (url is UNKNOWN and not _deps(copy, "source_url")):
            problems.append(
                "source_url is set: an Azure copy reads with the deployer's own Entra ID token (ambient), never a "
                "credential (a SAS URL) in the copy's props"
            )
        return problems
    return problems + par_problems(copy, source, url, config, by_urn)


def par_problems(copy: Any, source: Place, url: Any, config: Mapping[str, Any], by_urn: Mapping[str, Any]) -> list[str]:
    deps = _deps(copy, "source_url")
    pars = source_pars(copy, by_urn)
    if len(pars) != 1 or len(deps) != 1:
        return [
            "source_url comes from no pre-authenticated request this stack declares for the copy (exactly one "
            f"{OCI_PAR} its value depends on; found {deps or 'a literal'}); fail closed"
        ]
    [par] = pars
    problems = []
    expected = {
        "accessType": PAR_ACCESS,
        "bucketListingAction": PAR_LISTING,
        "objectName": source.prefix,
        "bucket": source.bucket,
        "namespace": source.account,
    }
    for key, want in expected.items():
        got = read(par.props, key)
        if got != want:
            problems.append(
                f"its pre-authenticated request {par.name}: {key} is {got!r}; allowed: {want!r} (the source)"
            )
    if read(par.props, "object") not in (None, "", source.prefix):
        problems.append(
            f"its pre-authenticated request {par.name}: `object` names another object than the source prefix"
        )
    tenancy = read(getattr(getattr(par, "provider", None), "props", None), "tenancyOcid")
    if getattr(par, "provider", None) is not None and tenancy != config.get("tenancy"):
        problems.append(
            f"its pre-authenticated request {par.name} is declared under a provider of tenancy {tenancy!r}, not the "
            f"configured training tenancy ({config.get('tenancy')!r})"
        )
    if url is UNKNOWN:
        return problems  # a preview: the URL exists once the PAR does; its dependency is judged above
    match = PAR_URL.match(url) if isinstance(url, str) else None
    access_uri = read(par.props, "accessUri")
    if (
        match is None
        or (match["ns"], match["bucket"]) != (source.account, source.bucket)
        or (isinstance(config.get("region"), str) and match["region"] != config.get("region"))
        or (isinstance(access_uri, str) and not url.endswith(access_uri))
    ):
        what = "a URL of another shape" if isinstance(url, str) else shown(url)
        problems.append(
            f"source_url is {what}, not the URL of its pre-authenticated request {par.name} "
            "(https://objectstorage.<region>.oraclecloud.com/p/<token>/n/<namespace>/b/<bucket>/o/); fail closed"
        )
    return problems


def destination_problems(
    copy: Any, source: Place, destination: Place, values: Mapping[str, Any], config: Mapping[str, Any], ctx: Context
) -> list[str]:
    """The destination is under a prefix of the stack's own cloud's store, never the source or a training store, with
    the deployer's own credentials (Vultr: the stack's Object Storage key, a secret)."""
    problems = []
    if source.holds(destination) or destination.holds(source):
        problems.append("writes into the source (or the source lies inside the destination)")
    training = strings(ctx.config, "trainingStores") | strings(config, "stores") | strings(config, "storageAccounts")
    handoff = ctx.config.get("artifactHandoff")
    if isinstance(handoff, Mapping):
        training |= strings(handoff, "stores") | strings(handoff, "storageAccounts")
    named = {destination.bucket, destination.account} - {""}
    if named & training:
        problems.append(
            f"writes into {', '.join(sorted(named & training))}, a store the config names as the training side's: a "
            "copy writes only into the serving stack's own store"
        )
    endpoint, keys = values["destination_endpoint"], values["destination_keys"]
    deps_of_keys = _deps(copy, "destination_keys")
    cloud = destination.cloud
    if cloud == "vultr" and not VULTR_HOST.match(endpoint):
        problems.append(f"destination_endpoint {endpoint!r}; allowed: <cluster>.vultrobjects.com (the stack's cluster)")
    elif (
        cloud == "aws"
        and endpoint
        and not (AWS_REGION.match(endpoint) and (ctx.allowed_regions is None or endpoint in ctx.allowed_regions))
    ):
        problems.append(f"destination_endpoint {endpoint!r}; allowed: a Region of {ctx.allowed_regions or 'AWS'}")
    elif cloud in ("gcp", "azure") and endpoint:
        problems.append(f"destination_endpoint {endpoint!r}; a {cloud} destination takes none")
    if cloud == "vultr":
        problems += _vultr_key_problems(keys)
    elif keys not in (None, "") and not (keys is UNKNOWN and not deps_of_keys):
        problems.append(
            f"destination_keys is set: a copy into {cloud} writes with the deployer's own credentials (ambient), never "
            "a key kept in the copy's state"
        )
    return problems


def _vultr_key_problems(keys: Any) -> list[str]:
    """Vultr: the stack's Object Storage key (the weights key), a JSON object of its two parts, set at preview."""
    if keys is UNKNOWN:
        return []  # the key's secret is an output of the stack's key resource: known once it exists
    try:
        decoded = json.loads(keys) if isinstance(keys, str) else None
    except (ValueError, RecursionError):
        decoded = None
    if (
        not isinstance(decoded, dict)
        or set(decoded) != {"accessKey", "secretKey"}
        or not all(isinstance(v, str) and v for v in decoded.values())
    ):
        return ['destination_keys is not {"accessKey", "secretKey"} of the stack\'s Object Storage key; fail closed']
    return []


def copy_pars(resources: Sequence[Any], by_urn: Mapping[str, Any]) -> dict[str, Any]:
    """PAR urn -> the copy whose source_url comes from it."""
    return {par.urn: copy for copy in of_type(resources, COPY) for par in source_pars(copy, by_urn)}
