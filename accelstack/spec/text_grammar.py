"""What a spec string may hold: the "safe text" every string key is held to, and the grammars of the keys whose
values land in what the nodes boot with (cloud-init, shell scripts, systemd units, slurm.conf).

Every string of the spec is checked by `Model` (accelstack.spec.base) against `text_problem`, so a key added later
is guarded without anyone remembering: one word of printable characters, no control characters (NUL, CR, LF, tab,
NEL U+0085), no line or paragraph separators (U+2028, U+2029; YAML 1.1 reads them as line breaks), no format
characters (bidirectional overrides show one text and mean another) and no whitespace but the ASCII space, which
only the keys a model names in `Model.FREE_TEXT_FIELDS` take. The grammars below narrow the keys that reach a node.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterator

# Unicode general categories refused everywhere: controls, format characters, surrogates, private use, unassigned,
# line and paragraph separators.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_NAMED = {"\n": "a line break (LF)", "\r": "a carriage return (CR)", "\t": "a tab", "\0": "a NUL character"}

WORD_FORM = "one word of printable characters (no spaces, tabs, line breaks or other control characters)"
TEXT_FORM = "printable characters and spaces (no tabs, line breaks or other control characters)"


def _described(character: str) -> str:
    if character in _NAMED:
        return _NAMED[character]
    name = unicodedata.name(character, "")
    return f"U+{ord(character):04X}" + (f" {name}" if name else "")


def text_problem(value: str, *, spaces: bool = False) -> str | None:
    """None if `value` is safe text (with `spaces`: ASCII spaces allowed), else why not and the allowed form."""
    for position, character in enumerate(value, start=1):
        category = unicodedata.category(character)
        if category in _REFUSED_CATEGORIES or (category == "Zs" and character != " "):
            what = _described(character)
        elif character == " " and not spaces:
            what = "a space"
        else:
            continue
        return (
            f"has {what} at character {position}: spec values are written into boot scripts and configs, where it "
            f"would split a word or start a new line; allowed: {TEXT_FORM if spaces else WORD_FORM}"
        )
    return None


def strings_in(value: object) -> Iterator[tuple[int | str | None, str]]:
    """(index or key, text) of every string directly in a field's value: the value itself, a list's or tuple's
    items, a mapping's keys and values. Nested models are checked by their own fields."""
    if isinstance(value, str):
        yield None, value
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield index, item
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key, key
            if isinstance(item, str):
                yield key, item


# An object-store URI: scheme://bucket-or-host[/key prefix]. The key keeps to S3's "safe characters" for object keys
# (docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html) less the ones a shell or systemd reads (' * ( ) !),
# plus = + @ , ~; no %, $, quotes, spaces, ? or # (which a URL parser would cut off as query or fragment). The bucket
# may carry an OCI Object Storage namespace, oci://<bucket>@<namespace>/... (accelstack.spec.handoff).
OBJECT_URI_PATTERN = r"^[a-z0-9]+://[A-Za-z0-9._-]+(@[A-Za-z0-9_-]+)?(/[A-Za-z0-9._~=+@,/-]*)?$"
OBJECT_URI_FORM = (
    "scheme://bucket[@namespace][/prefix], the prefix in letters, digits and . _ ~ = + @ , / - (no spaces, quotes, "
    "$, %, ? or #)"
)


def has_dot_segments(path: str) -> bool:
    """Whether a key or path names another place than it reads: a '.' or '..' segment, or an empty one ('//'). An
    object store keeps `a/../b` as that literal key, while curl and every HTTP client fold it to `b` (RFC 3986
    section 5.2.4, remove_dot_segments) and `aws s3 sync` writes it outside its destination directory: a grant, a
    signature and a copy of the same string would each mean another object."""
    segments = path.split("/")
    return any(part in (".", "..") for part in segments) or "" in segments[1:-1]


NO_DOT_SEGMENTS = "no '.', '..' or empty ('//') path segments"


def dot_segment_problem(value: str, what: str) -> str | None:
    return f"{value!r} is not {what}; allowed: {NO_DOT_SEGMENTS}" if has_dot_segments(value) else None


def object_uri_problem(value: str) -> str | None:
    """An object-store URI (datasets, checkpoints, weights, adapters, a Vultr key object): OBJECT_URI_PATTERN (the
    field's pattern, checked first where it has one) and a bucket and key without dot or empty segments."""
    if not re.fullmatch(OBJECT_URI_PATTERN, value) or has_dot_segments(value.partition("://")[2]):
        return f"{value!r} is not an object-store URI; allowed: {OBJECT_URI_FORM}, {NO_DOT_SEGMENTS}"
    return None


# A model id as the Hugging Face Hub writes it (huggingface_hub.utils.validate_repo_id): [owner/]name, each of
# letters, digits, '-', '_' and '.', not starting or ending with '-' or '.', at most 96 characters; '--' and '..'
# are refused there too. vLLM serves the model under it (--served-model-name) and clients ask for it by it.
_REPO_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
MODEL_ID = re.compile(rf"^(?:{_REPO_PART}/)?{_REPO_PART}$")
MODEL_ID_FORM = (
    "[owner/]name as on the Hugging Face Hub: letters, digits, '-', '_' and '.', each part at most 96 characters, "
    "not starting or ending with '-' or '.', no '--' or '..' (e.g. meta-llama/Llama-3.1-8B-Instruct)"
)


def model_id_problem(value: str) -> str | None:
    if MODEL_ID.fullmatch(value) and "--" not in value and ".." not in value:
        return None
    return f"{value!r} is not a model id; allowed: {MODEL_ID_FORM}"


# A container image reference, the grammar of github.com/distribution/reference (regexp.go):
# [domain[:port]/]path-component(/path-component)*[:tag][@algorithm:hex].
_DOMAIN_PART = r"(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
CONTAINER_IMAGE = re.compile(rf"^(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*(?::{_TAG})?(?:@{_DIGEST})?$")
CONTAINER_IMAGE_FORM = (
    "[registry[:port]/]repository[:tag][@digest] as Docker reads it: lowercase path components, a tag of letters, "
    "digits, '_', '.' and '-' (e.g. vllm/vllm-openai:v0.6.6)"
)
# distribution/reference: "repository name must not be more than 255 characters".
_MAX_IMAGE_NAME = 255


def container_image_problem(value: str) -> str | None:
    name = value.split("@", 1)[0]
    tagless = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    if CONTAINER_IMAGE.fullmatch(value) and len(tagless) <= _MAX_IMAGE_NAME:
        return None
    return f"{value!r} is not a container image reference; allowed: {CONTAINER_IMAGE_FORM}"


# An image id the replica group boots (AWS: ami-..., or resolve:ssm:<parameter name>[:version]).
IMAGE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,2047}$"
# A zone name on every cloud: us-east-1a (AWS), 1 (Azure), us-central1-a (GCP).
ZONE_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
# A key prefix inside a bucket (relative, the object-URI key characters).
KEY_PREFIX_PATTERN = r"^[A-Za-z0-9._~=+@,-][A-Za-z0-9._~=+@,/-]{0,1023}$"


def matching(pattern: str, what: str, form: str) -> Callable[[str], str | None]:
    """A problem function: None if the value fully matches `pattern`, else that it is not `what`, and `form`."""
    compiled = re.compile(pattern)

    def problem(value: str) -> str | None:
        return None if compiled.fullmatch(value) else f"{value!r} is not {what}; allowed: {form}"

    return problem


_PLAIN_PATH = re.compile(r"/[A-Za-z0-9._@+/-]*")


def plain_absolute_path_problem(value: str) -> str | None:
    """A path nodes read as written: absolute, the characters a shell and systemd take unquoted, no '.', '..'
    or '//' (which make it name another directory than it reads)."""
    if not _PLAIN_PATH.fullmatch(value):
        return (
            f"{value!r} is not a plain absolute path; allowed: / then letters, digits and . _ @ + / - "
            "(no spaces, quotes, $ or ;)"
        )
    parts = value.split("/")
    if ".." in parts or "." in parts or "//" in value:
        return (
            f"{value!r} is not a plain absolute path; write it as {posixpath.normpath(value)!r} (no '.', '..' or '//')"
        )
    return None


zone_problem = matching(
    ZONE_PATTERN, "a zone name", "lowercase letters, digits and '-' (e.g. us-east-1a, 1, us-central1-a)"
)
_key_prefix_form = matching(
    KEY_PREFIX_PATTERN, "a key prefix", "a relative prefix of letters, digits and . _ ~ = + @ , / - (e.g. models/)"
)


def key_prefix_problem(value: str) -> str | None:
    return _key_prefix_form(value) or dot_segment_problem(value, "a key prefix")


image_id_problem = matching(
    IMAGE_ID_PATTERN, "an image id", "letters, digits and . _ : / - (e.g. ami-0123456789abcdef0 or resolve:ssm:/path)"
)


# The load balancer's health check path: '/' then RFC 3986's unreserved characters (ALPHA / DIGIT / "-" / "." /
# "_" / "~") and '/': a path every cloud's health check takes, and nothing a shell, systemd or YAML reads another way
# (no query, no percent-encoding, no sub-delimiters such as ; $ ' ( )).
HEALTH_PATH = re.compile(r"/[A-Za-z0-9._~/-]*")


def health_path_problem(value: str) -> str | None:
    if HEALTH_PATH.fullmatch(value):
        # A load balancer asks for the path as written; the server's router may fold '/a/../b' to '/b' (or not).
        return dot_segment_problem(value, "a health check path")
    return (
        f"{value!r}: must start with / and hold only letters, digits and . _ ~ / - (no spaces, quotes, query or "
        "control characters)"
    )


# An IAM role ARN (IAM User Guide, "IAM identifiers"; role names are 1-64 of [A-Za-z0-9+=,.@_-]). IAM's own path
# pattern takes any printable ASCII between slashes (`(\u002F)|(\u002F[\u0021-\u007E]+\u002F)`, Role.Path in the IAM
# API); accelstack narrows path segments to the name characters, so no quote, '$', ';' or '%' rides into the
# provider's assume-role configuration a stack deploys with.
IAM_ROLE_ARN = re.compile(
    r"^arn:(?P<partition>aws|aws-cn|aws-us-gov):iam::(?P<account>\d{12}):role"
    r"(?P<path>/(?:[A-Za-z0-9+=,.@_-]+/)*)(?P<name>[A-Za-z0-9+=,.@_-]{1,64})$"
)


def role_arn_problem(value: str) -> str | None:
    if IAM_ROLE_ARN.fullmatch(value):
        return None
    return (
        f"{value!r} is not an IAM role ARN; allowed: arn:aws:iam::<12-digit account>:role/[path/]<name>, the path "
        "and name in letters, digits and + = , . @ _ -"
    )
