"""Amazon S3 answering one STS session's SigV4-signed requests, on 127.0.0.1 (for a Vultr replica reading AWS
weights: components/handoff/s3_session.py).

Path-style, as docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html and API_GetObject.html describe it:
`GET /<bucket>?list-type=2&prefix=...&continuation-token=...` lists one page of keys as XML (<Contents><Key>,
<IsTruncated>, <NextContinuationToken>); `GET /<bucket>/<URI-encoded key>` returns the object. Each request's
Authorization is checked by recomputing it with botocore's own S3 SigV4 signer over the same method, URL, date and
headers (the signature the SDKs make), its x-amz-security-token must be the session's, and the session must not
have expired by the server's clock (`now`): otherwise 403 SignatureDoesNotMatch / AccessDenied or 400 ExpiredToken,
as S3 answers. The session policy (reads of the artifact prefix only) answers 403 AccessDenied outside it. Every
request is recorded.

In-process (a test's thread, plain HTTP on 127.0.0.1) or as a boot machine's service (`python s3_fake.py CONFIG`,
started by launcher.sh inside the machine's network namespace, as machine/oci_par.py is): then it answers HTTPS on
the address the Regional endpoint's host name resolves to there, with a certificate for that name from the
harness's test CA (machine/tls_ca.py) that the machine's trust store holds, checks signatures over that host (the
one the replica signed), and appends each request to the log the config names. It needs botocore, so it runs on the
test's interpreter (Service.python), not the host's python3.
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
from xml.sax.saxutils import escape

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def error(code: str, message: str) -> bytes:
    return (
        f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>{message}</Message></Error>".encode()
    )


class S3Store:
    """`bucket`'s `objects`, readable under `prefix` by the session (access key, secret, token) until `expires`."""

    def __init__(
        self,
        bucket: str,
        prefix: str,
        objects: dict[str, bytes],
        session: tuple[str, str, str],
        region: str,
        expires: float,
        now: float,
        address: tuple[str, int] = ("127.0.0.1", 0),
        log: str | None = None,
        endpoint: str | None = None,
    ) -> None:
        self.bucket, self.prefix, self.objects, self.session, self.region = bucket, prefix, objects, session, region
        self.expires, self.now = expires, now
        self.page_size = 2  # small pages: the fetch must follow NextContinuationToken
        self.requests: list[tuple[int, str]] = []
        self.log = log
        self.endpoint = endpoint  # the URL the client addressed (and signed the host of), when not self.base
        self.server = ThreadingHTTPServer(address, self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> S3Store:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def signed_by_the_session(self, path: str, headers: Any) -> bool:
        """botocore's S3 SigV4 over the request as received, at its own x-amz-date, equals its Authorization."""
        access, secret, token = self.session
        request = AWSRequest(
            method="GET",
            url=(self.endpoint or self.base) + path,
            headers={
                k: headers[k] for k in ("x-amz-date", "x-amz-content-sha256", "x-amz-security-token") if k in headers
            },
        )
        request.context["timestamp"] = headers.get("x-amz-date", "")
        signer = S3SigV4Auth(Credentials(access, secret, token), "s3", self.region)
        canonical = signer.canonical_request(request)
        signature = signer.signature(signer.string_to_sign(request, canonical), request)
        wanted = (
            f"AWS4-HMAC-SHA256 Credential={signer.scope(request)}, "
            f"SignedHeaders={signer.signed_headers(signer.headers_to_sign(request))}, Signature={signature}"
        )
        return headers.get("Authorization") == wanted

    def record(self, status: int, request: str) -> None:
        self.requests.append((status, request))
        if self.log:
            with open(self.log, "a") as out:
                out.write(json.dumps({"status": status, "path": request}) + "\n")

    def answer(self, path: str, headers: Any) -> tuple[int, bytes]:
        if headers.get("x-amz-security-token") != self.session[2] or not self.signed_by_the_session(path, headers):
            return 403, error("SignatureDoesNotMatch", "The request signature we calculated does not match")
        if self.now >= self.expires:
            return 400, error("ExpiredToken", "The provided token has expired.")
        raw, _, query = path.partition("?")
        params = dict(urllib.parse.parse_qsl(query))
        base = "/" + self.bucket
        if raw == base and params.get("list-type") == "2":
            prefix = params.get("prefix", "")
            if not prefix.startswith(self.prefix):
                return 403, error("AccessDenied", "Access Denied")  # s3:prefix outside the artifact prefix
            names = sorted(n for n in self.objects if n.startswith(prefix))
            start = int(params.get("continuation-token", "0") or 0)
            page = names[start : start + self.page_size]
            truncated = start + self.page_size < len(names)
            body = "".join(f"<Contents><Key>{escape(n)}</Key></Contents>" for n in page)
            more = f"<NextContinuationToken>{start + self.page_size}</NextContinuationToken>" if truncated else ""
            xml = (
                '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<Name>{self.bucket}</Name><Prefix>{escape(prefix)}</Prefix><KeyCount>{len(page)}</KeyCount>"
                f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>{body}{more}</ListBucketResult>"
            )
            return 200, xml.encode()
        if raw.startswith(base + "/"):
            name = urllib.parse.unquote(raw[len(base) + 1 :])
            if not name.startswith(self.prefix):
                return 403, error("AccessDenied", "Access Denied")
            if name not in self.objects:
                return 404, error("NoSuchKey", "The specified key does not exist.")
            return 200, self.objects[name]
        return 403, error("AccessDenied", "Access Denied")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        store = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = store.answer(self.path, self.headers)
                store.record(status, self.path)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        return Handler


def serve(config_path: str) -> None:
    """A boot machine's S3: the config names the bucket, prefix, objects (base64), the session, the region, the
    clocks, the endpoint the replica addresses, where to listen, the TLS certificate and key, and the request log."""
    config = json.load(open(config_path))
    objects = {name: base64.b64decode(body) for name, body in config["objects"].items()}
    access, secret, token = config["session"]
    store = S3Store(
        config["bucket"], config["prefix"], objects, (access, secret, token), config["region"], config["expires"],
        config["now"], (config["address"], config["port"]), config["log"], config["endpoint"],
    )  # fmt: skip
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(config["cert"], config["key"])
    store.server.socket = tls.wrap_socket(store.server.socket, server_side=True)
    store.server.serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1])
