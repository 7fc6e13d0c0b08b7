"""OCI Object Storage answering a pre-authenticated request, on 127.0.0.1 (for a Vultr replica reading OCI weights:
components/handoff/oci_par.py).

As docs.oracle.com/iaas/Content/Object/Tasks/usingpreauthenticatedrequests.htm describes a bucket-level PAR
(AnyObjectRead with an object name prefix, listing allowed): a GET on the access URI itself lists the objects it
covers as JSON {"objects": [{"name": ...}], "nextStartWith": ...} (`prefix`, `start`, `limit` query parameters, one
page of `limit` at a time); a GET on the access URI + an object name returns that object, if the name starts with
the PAR's prefix. Only the exact access URI is honoured, and only until the PAR's expiry by the server's clock
(`now`, settable): anything else answers 404 NotAuthorizedOrNotFound, as Object Storage answers an unknown or
expired PAR. Every request is recorded.

In-process (a test's thread, plain HTTP on 127.0.0.1) or as a boot machine's service (`python3 oci_par.py CONFIG`,
started by launcher.sh inside the machine's network namespace): then it answers HTTPS on the address the Object
Storage host name resolves to there, with a certificate for that name from the harness's test CA (machine/test_ca.py)
that the machine's trust store holds, and appends each request to the log the config names. Standard library only:
it runs on the host's python3.
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

NOT_FOUND = b'{"code": "NotAuthorizedOrNotFound", "message": "The required information to complete authentication was not provided or was incorrect."}'


class ParStore:
    """One PAR over `objects` (name -> bytes) under `prefix`, expiring at `expires` (epoch seconds)."""

    def __init__(
        self,
        access_uri: str,
        prefix: str,
        objects: dict[str, bytes],
        expires: float,
        now: float,
        address: tuple[str, int] = ("127.0.0.1", 0),
        log: str | None = None,
    ):
        self.access_uri, self.prefix, self.objects = access_uri, prefix, objects
        self.expires, self.now = expires, now
        self.page_size = 2  # small pages: the fetch must follow nextStartWith
        self.requests: list[tuple[int, str]] = []
        self.log = log
        self.server = ThreadingHTTPServer(address, self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> ParStore:
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

    def answer(self, path: str) -> tuple[int, bytes]:
        raw, _, query = path.partition("?")
        if not raw.startswith(self.access_uri) or self.now >= self.expires:
            return 404, NOT_FOUND
        name = urllib.parse.unquote(raw[len(self.access_uri) :])
        if name:
            if not name.startswith(self.prefix) or name not in self.objects:
                return 404, NOT_FOUND
            return 200, self.objects[name]
        params = dict(urllib.parse.parse_qsl(query))
        prefix = params.get("prefix", "")
        if not prefix.startswith(self.prefix):
            prefix = self.prefix  # a PAR lists only what it covers
        names = sorted(n for n in self.objects if n.startswith(prefix) and n >= params.get("start", ""))
        limit = int(params.get("limit", self.page_size))
        page = {"objects": [{"name": n} for n in names[:limit]]}
        if len(names) > limit:
            page["nextStartWith"] = names[limit]
        return 200, json.dumps(page).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        store = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = store.answer(self.path)
                store.record(status, self.path)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_PUT(self) -> None:  # read-only: no write is honoured
                store.record(403, "PUT " + self.path)
                self.send_response(403)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        return Handler


def serve(config_path: str) -> None:
    """A boot machine's Object Storage: the config (machine/__init__.py: oci_par_service) names the PAR, its objects
    (base64), the clocks, where to listen, the TLS certificate and key, and the request log."""
    config = json.load(open(config_path))
    objects = {name: base64.b64decode(body) for name, body in config["objects"].items()}
    store = ParStore(
        config["access_uri"], config["prefix"], objects, config["expires"], config["now"],
        (config["address"], config["port"]), config["log"],
    )  # fmt: skip
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(config["cert"], config["key"])
    store.server.socket = tls.wrap_socket(store.server.socket, server_side=True)
    store.server.serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1])
