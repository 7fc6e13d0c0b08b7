"""Cloud Storage's JSON API answering a bearer access token, on 127.0.0.1 (for a Vultr replica reading Google Cloud
weights: components/handoff/gcs_token.py).

As cloud.google.com/storage/docs/json_api/v1/objects/list and objects/get describe it: `GET /storage/v1/b/<bucket>/o`
with `prefix`, `pageToken` (and `fields`) lists {"items": [{"name": ...}], "nextPageToken": ...} one page at a time;
`GET /storage/v1/b/<bucket>/o/<percent-encoded name>?alt=media` returns the object. Only `Authorization: Bearer
<token>` until the token's expiry by the server's clock (`now`, settable) is honoured: anything else answers 401, as
Google answers an expired or invalid token. The reader's IAM condition (objectViewer on the artifact prefix only,
listings only under it) answers 403 for anything outside. Every request is recorded.

In-process (a test's thread, plain HTTP on 127.0.0.1) or as a boot machine's service (`python3 gcs_fake.py CONFIG`,
started by launcher.sh inside the machine's network namespace, as machine/oci_par.py is): then it answers HTTPS on
the address storage.googleapis.com resolves to there, with a certificate for that name from the harness's test CA
(machine/tls_ca.py) that the machine's trust store holds, and appends each request to the log the config names.
Standard library only: it runs on the host's python3.
"""

from __future__ import annotations

import base64
import json
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

UNAUTHENTICATED = b'{"error": {"code": 401, "message": "Invalid Credentials", "status": "UNAUTHENTICATED"}}'
FORBIDDEN = (
    b'{"error": {"code": 403, "message": "does not have storage.objects.get access", "status": "PERMISSION_DENIED"}}'
)


class GcsStore:
    """`bucket`'s `objects` (name -> bytes), readable under `prefix` with `token` until `expires` (epoch seconds)."""

    def __init__(
        self,
        bucket: str,
        prefix: str,
        objects: dict[str, bytes],
        token: str,
        expires: float,
        now: float,
        address: tuple[str, int] = ("127.0.0.1", 0),
        log: str | None = None,
    ) -> None:
        self.bucket, self.prefix, self.objects, self.token = bucket, prefix, objects, token
        self.expires, self.now = expires, now
        self.page_size = 2  # small pages: the fetch must follow nextPageToken
        self.requests: list[tuple[int, str]] = []
        self.log = log
        self.server = ThreadingHTTPServer(address, self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> GcsStore:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def record(self, status: int, request: str) -> None:
        self.requests.append((status, request))
        if self.log:
            with open(self.log, "a") as out:
                out.write(json.dumps({"status": status, "path": request}) + "\n")

    def answer(self, path: str, authorization: str) -> tuple[int, bytes]:
        if authorization != f"Bearer {self.token}" or self.now >= self.expires:
            return 401, UNAUTHENTICATED
        raw, _, query = path.partition("?")
        params = dict(urllib.parse.parse_qsl(query))
        base = f"/storage/v1/b/{urllib.parse.quote(self.bucket, safe='')}/o"
        if raw == base:
            prefix = params.get("prefix", "")
            if not prefix.startswith(self.prefix):
                return 403, FORBIDDEN  # the condition admits listings under the artifact prefix only
            names = sorted(n for n in self.objects if n.startswith(prefix))
            start = int(params.get("pageToken", "0") or 0)
            page: dict[str, Any] = {"kind": "storage#objects"}
            if names[start : start + self.page_size]:
                page["items"] = [{"name": n} for n in names[start : start + self.page_size]]
            if start + self.page_size < len(names):
                page["nextPageToken"] = str(start + self.page_size)
            return 200, json.dumps(page).encode()
        if raw.startswith(base + "/") and params.get("alt") == "media":
            name = urllib.parse.unquote(raw[len(base) + 1 :])
            if not name.startswith(self.prefix):
                return 403, FORBIDDEN
            if name not in self.objects:
                return 404, b'{"error": {"code": 404, "message": "No such object"}}'
            return 200, self.objects[name]
        return 404, b'{"error": {"code": 404, "message": "Not Found"}}'

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        store = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = store.answer(self.path, self.headers.get("Authorization", ""))
                store.record(status, self.path)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        return Handler


def serve(config_path: str) -> None:
    """A boot machine's Cloud Storage: the config names the bucket, prefix, objects (base64), the token, the clocks,
    where to listen, the TLS certificate and key, and the request log."""
    config = json.load(open(config_path))
    objects = {name: base64.b64decode(body) for name, body in config["objects"].items()}
    store = GcsStore(
        config["bucket"], config["prefix"], objects, config["token"], config["expires"], config["now"],
        (config["address"], config["port"]), config["log"],
    )  # fmt: skip
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(config["cert"], config["key"])
    store.server.socket = tls.wrap_socket(store.server.socket, server_side=True)
    store.server.serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1])
