"""Object stores on 127.0.0.1 for the copy provider's tests (components/handoff/copy.py): each implements just the
calls the SDKs make, checks the caller's credential, and records every request (method, path) so a test can show
that nothing outside the prefix was asked for.

- OCI: the PAR fake of the boot harness (tests/boot/machine/oci_par.py), whose listing gives size and md5 when asked.
- S3 (AWS and Vultr): moto's server with its request authentication on (moto-api/reset-auth): each request's SigV4
  signature is recomputed for an access key that exists in moto's IAM, as S3 would (moto/iam/access_control.py).
- GCS: the JSON API's objects.get and uploads (multipart/related and resumable sessions), with the bearer token
  checked, ifGenerationMatch=0 honoured, md5Hash computed and checked.
- Azure Blob: HTTPS on localhost (a certificate from tests/boot/machine/tls_ca.py, because azure-storage-blob sends a
  bearer token over HTTPS only): List Blobs (prefix, marker paging), Get Blob (x-ms-range), Get Blob Properties, Put
  Blob, Put Block, Put Block List, with If-None-Match: * honoured and the bearer token checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from tests.boot.machine.oci_par import ParStore
from tests.boot.machine.tls_ca import issue

Answer = tuple[int, dict[str, str], bytes]


def b64md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


class OciPar(ParStore):
    """The boot harness's PAR with the ListObjects `fields` OCI honours (size, md5: base64 of the whole object, or
    "<base64>-<parts>" for a multipart upload, listed in `multipart`), and a hook that fails chosen GETs."""

    def __init__(self, access_uri: str, prefix: str, objects: dict[str, bytes], **kwargs: Any):
        super().__init__(access_uri, prefix, objects, expires=2e9, now=1e9, **kwargs)
        self.multipart: set[str] = set()
        self.wrong_md5: set[str] = set()
        self.fail_get: Callable[[str], bool] = lambda name: False

    def answer(self, path: str) -> tuple[int, bytes]:
        raw, _, query = path.partition("?")
        name = urllib.parse.unquote(raw[len(self.access_uri) :]) if raw.startswith(self.access_uri) else ""
        if name and self.fail_get(name):
            return 500, b'{"code": "InternalServerError", "message": "injected"}'
        status, body = super().answer(path)
        fields = dict(urllib.parse.parse_qsl(query)).get("fields", "")
        if name or status != 200 or not fields:
            return status, body
        page = json.loads(body)
        for entry in page["objects"]:
            data = self.objects[entry["name"]]
            if "size" in fields:
                entry["size"] = len(data)
            if "md5" in fields:
                md5 = b64md5(b"not the object" if entry["name"] in self.wrong_md5 else data)
                entry["md5"] = md5 + "-3" if entry["name"] in self.multipart else md5
        return 200, json.dumps(page).encode()

    @property
    def url(self) -> str:
        return self.base + self.access_uri


class HttpFake:
    """A threaded HTTP(S) server answering `handle(method, path, headers, body)`; records (method, path)."""

    def __init__(self, tls: tuple[Path, Path] | None = None):
        self.requests: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fake.requests.append((self.command, self.path))
                status, headers, data = fake.handle(self.command, self.path, self.headers, body)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(0 if self.command == "HEAD" else len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve()

            def do_PUT(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def do_HEAD(self) -> None:
                self._serve()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Answer:
        raise NotImplementedError

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def json_answer(status: int, value: Any, extra: dict[str, str] | None = None) -> Answer:
    return status, {"Content-Type": "application/json", **(extra or {})}, json.dumps(value).encode()


class GcsFake(HttpFake):
    """Buckets of objects: name -> (bytes, metadata); `token` is the bearer the deployer's credentials carry."""

    def __init__(self, token: str):
        super().__init__()
        self.token = token
        self.objects: dict[tuple[str, str], tuple[bytes, dict[str, str]]] = {}
        self.sessions: dict[str, tuple[str, str, dict[str, str], bytearray]] = {}
        self.refuse_writes = False

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def resource(self, bucket: str, name: str) -> dict[str, Any]:
        data, metadata = self.objects[(bucket, name)]
        return {"bucket": bucket, "name": name, "size": str(len(data)), "md5Hash": b64md5(data),
                "generation": "1", "metadata": metadata}  # fmt: skip

    def store(self, bucket: str, name: str, data: bytes, metadata: dict[str, str], query: dict[str, str]) -> Answer:
        if query.get("ifGenerationMatch") == "0" and (bucket, name) in self.objects:
            return json_answer(412, {"error": {"code": 412, "message": "conditionNotMet"}})
        self.objects[(bucket, name)] = (data, metadata)
        return json_answer(200, self.resource(bucket, name))

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Answer:
        if headers.get("Authorization") != f"Bearer {self.token}":
            return json_answer(401, {"error": {"code": 401, "message": "Invalid Credentials"}})
        raw, _, query_text = path.partition("?")
        query = dict(urllib.parse.parse_qsl(query_text))
        parts = raw.split("/")
        if method == "GET" and raw.startswith("/storage/v1/b/") and len(parts) == 7 and parts[5] == "o":
            key = (parts[4], urllib.parse.unquote(parts[6]))
            if key not in self.objects:
                return json_answer(404, {"error": {"code": 404, "message": "No such object"}})
            return json_answer(200, self.resource(*key))
        if self.refuse_writes and method in ("POST", "PUT"):
            return json_answer(403, {"error": {"code": 403, "message": "storage.objects.create denied"}})
        if method == "POST" and raw.startswith("/upload/storage/v1/b/"):
            bucket = parts[5]
            if query.get("uploadType") == "multipart":
                boundary = headers["Content-Type"].split("boundary=")[1].strip('"').encode()
                sections = body.split(b"--" + boundary)
                meta_part, media_part = sections[1], sections[2]
                meta = json.loads(meta_part.split(b"\r\n\r\n", 1)[1].strip())
                media = media_part.split(b"\r\n\r\n", 1)[1][: -len(b"\r\n")]
                if meta.get("md5Hash") and meta["md5Hash"] != b64md5(media):
                    return json_answer(400, {"error": {"code": 400, "message": "Provided MD5 hash doesn't match"}})
                return self.store(bucket, meta["name"], media, meta.get("metadata", {}), query)
            meta = json.loads(body or b"{}")
            session = f"s{len(self.sessions)}"
            self.sessions[session] = (bucket, meta.get("name") or query["name"], meta.get("metadata", {}), bytearray())
            location = f"{self.endpoint}/upload/storage/v1/b/{bucket}/o?uploadType=resumable&upload_id={session}"
            if "ifGenerationMatch" in query:
                location += f"&ifGenerationMatch={query['ifGenerationMatch']}"
            return 200, {"Location": location, "Content-Length": "0"}, b""
        if method == "PUT" and query.get("upload_id") in self.sessions:
            bucket, name, metadata, received = self.sessions[query["upload_id"]]
            span = headers.get("Content-Range", "")  # bytes a-b/total, bytes a-b/*, bytes */total
            received += body
            total = span.rpartition("/")[2]
            if total != "*" and len(received) == int(total):
                del self.sessions[query["upload_id"]]
                return self.store(bucket, name, bytes(received), metadata, query)
            return 308, {"Range": f"bytes=0-{len(received) - 1}", "Content-Length": "0"}, b""
        return json_answer(400, {"error": {"code": 400, "message": f"unexpected {method} {path}"}})


def azure_error(status: int, code: str) -> Answer:
    body = f"<?xml version='1.0' encoding='utf-8'?><Error><Code>{code}</Code><Message>{code}</Message></Error>"
    return status, {"x-ms-error-code": code, "Content-Type": "application/xml"}, body.encode()


class AzureFake(HttpFake):
    """Storage accounts' containers over HTTPS on localhost: (account, container, name) -> (bytes, metadata).
    `refusal` (an x-ms-error-code) answers every request (to `refused_account`) 403; `page_size` pages List Blobs."""

    def __init__(self, directory: Path, token: str):
        certificate = issue("localhost", directory)
        self.ca_file = directory / "ca.pem"
        self.ca_file.write_text(certificate.ca_pem)
        super().__init__((certificate.cert, certificate.key))
        self.token = token
        self.blobs: dict[tuple[str, str, str], tuple[bytes, dict[str, str]]] = {}
        self.blocks: dict[str, bytes] = {}
        self.page_size = 2
        self.refusal: str | None = None
        self.refused_account: str | None = None  # None: every account refuses
        self.without_md5: set[str] = set()

    @property
    def endpoint(self) -> str:
        return f"https://localhost:{self.port}"

    def listing(self, account: str, container: str, query: dict[str, str]) -> Answer:
        prefix, marker = query.get("prefix", ""), query.get("marker", "")
        names = sorted(n for a, c, n in self.blobs if (a, c) == (account, container) and n.startswith(prefix))
        names = [n for n in names if n >= marker]
        limit = int(query.get("maxresults", self.page_size))
        entries = []
        for name in names[:limit]:
            data, _ = self.blobs[(account, container, name)]
            md5 = "" if name in self.without_md5 else f"<Content-MD5>{b64md5(data)}</Content-MD5>"
            entries.append(
                f"<Blob><Name>{escape(name)}</Name><Properties><Content-Length>{len(data)}</Content-Length>{md5}"
                "<BlobType>BlockBlob</BlobType></Properties></Blob>"
            )
        next_marker = escape(names[limit]) if len(names) > limit else ""
        body = (
            f"<?xml version='1.0' encoding='utf-8'?><EnumerationResults ContainerName='{container}'>"
            f"<Prefix>{escape(prefix)}</Prefix><Blobs>{''.join(entries)}</Blobs><NextMarker>{next_marker}</NextMarker>"
            "</EnumerationResults>"
        )
        return 200, {"Content-Type": "application/xml"}, body.encode()

    def properties(self, data: bytes, metadata: dict[str, str]) -> dict[str, str]:
        headers = {"ETag": '"0x1"', "Last-Modified": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime()),
                   "x-ms-blob-type": "BlockBlob", "Content-Type": "application/octet-stream"}  # fmt: skip
        headers.update({f"x-ms-meta-{key}": value for key, value in metadata.items()})
        return headers

    def handle(self, method: str, path: str, headers: Any, body: bytes) -> Answer:
        if headers.get("Authorization") != f"Bearer {self.token}":
            return azure_error(401, "InvalidAuthenticationInfo")
        raw, _, query_text = path.partition("?")
        query = dict(urllib.parse.parse_qsl(query_text))
        account, container, *rest = [urllib.parse.unquote(part) for part in raw.lstrip("/").split("/", 2)]
        if self.refusal and self.refused_account in (None, account):
            return azure_error(403, self.refusal)
        if not rest:
            if method == "GET" and query.get("comp") == "list":
                return self.listing(account, container, query)
            return azure_error(400, "UnsupportedHttpVerb")
        key = (account, container, rest[0])
        metadata = {k[len("x-ms-meta-") :]: v for k, v in headers.items() if k.lower().startswith("x-ms-meta-")}
        if method == "PUT" and query.get("comp") == "block":
            self.blocks[query["blockid"]] = body
            return 201, {}, b""
        if method == "PUT":
            if headers.get("If-None-Match") == "*" and key in self.blobs:
                return azure_error(409, "BlobAlreadyExists")
            if query.get("comp") == "blocklist":
                ids = [part.split("<", 1)[0] for part in body.decode().split("<Latest>")[1:]]
                data = b"".join(self.blocks.pop(block) for block in ids)
            else:
                data = body
            md5 = headers.get("x-ms-blob-content-md5")
            if md5 and md5 != b64md5(data):  # Azure stores the header as given; checked here to catch a wrong one
                return azure_error(400, "Md5Mismatch")
            self.blobs[key] = (data, {k.lower(): v for k, v in metadata.items()})
            return 201, {"ETag": '"0x2"', "Last-Modified": "Sun, 06 Dec 2026 12:00:00 GMT"}, b""
        if key not in self.blobs:
            return azure_error(404, "BlobNotFound")
        data, stored = self.blobs[key]
        if method == "HEAD":
            return 200, {**self.properties(data, stored), "Content-Length": str(len(data))}, b""
        span = headers.get("x-ms-range") or headers.get("Range")
        if span and not data:  # as Azure answers a range of an empty blob; the library then GETs it whole
            return azure_error(416, "InvalidRange")
        if span:
            first, _, last = span.removeprefix("bytes=").partition("-")
            start, end = int(first), min(int(last or len(data) - 1), len(data) - 1)
            answer = {**self.properties(data, stored), "Content-Range": f"bytes {start}-{end}/{len(data)}"}
            return 206, answer, data[start : end + 1]
        return 200, self.properties(data, stored), data


class AzureToken:
    """A TokenCredential: what DefaultAzureCredential hands azure-storage-blob; records the scopes asked for."""

    def __init__(self, token: str):
        self.token, self.scopes = token, []  # type: ignore[var-annotated]

    def get_token(self, *scopes: str, **_: Any) -> Any:
        from azure.core.credentials import AccessToken

        self.scopes.extend(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)
