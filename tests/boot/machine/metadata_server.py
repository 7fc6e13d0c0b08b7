"""A cloud's instance metadata service on 169.254.169.254:80, as each cloud gates it.

- EC2 IMDSv2: a session token from `PUT /latest/api/token` (TTL header required), then every
  `GET /latest/...` carries `X-aws-ec2-metadata-token`; without it, 401 (IMDSv1 is off on the stacks).
- GCE: `/computeMetadata/v1/...` only with `Metadata-Flavor: Google` (else 403).
- Azure IMDS: `/metadata/...` only with `Metadata: true` and an `api-version` (else 400).
Managed-identity / service-account tokens are the fake cloud's: its APIs (the harness's curl and CLIs)
accept those and nothing else. Every request is logged, so a test sees what a boot asked for, and a path the
machine's table lacks answers 404 and is logged as unknown. Standard library only: it runs on the host's Python.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MACHINE = json.loads(open(sys.argv[1]).read())
LOG = open(sys.argv[2], "a", buffering=1)
CLOUD = MACHINE["cloud"]
TREE: dict[str, str] = MACHINE["metadata"]
TOKEN = MACHINE["token"]
# Azure Scheduled Events as the platform posts them: a test writes the document into the machine's work directory
# (the machine's /run/harness), approvals (POST StartRequests) are appended beside it.
WORK = os.path.dirname(sys.argv[1])
EVENTS_FILE = os.path.join(WORK, "scheduled-events.json")
APPROVALS_FILE = os.path.join(WORK, "scheduled-events-approved.jsonl")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the log below is the record
        pass

    def _answer(self, status: int, body: str, content_type: str = "text/plain") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        LOG.write(json.dumps({"method": self.command, "path": self.path, "status": status}) + "\n")

    def do_PUT(self) -> None:
        url = urlsplit(self.path)
        if CLOUD == "aws" and url.path == "/latest/api/token":
            if not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                return self._answer(400, "missing TTL")
            return self._answer(200, MACHINE["imds_session"])
        if CLOUD == "gcp" and url.path.startswith("/computeMetadata/v1/instance/guest-attributes/"):
            length = int(self.headers.get("Content-Length") or 0)
            value = self.rfile.read(length).decode()
            TREE[url.path.removeprefix("/computeMetadata/v1/")] = value
            return self._answer(200, "")
        return self._answer(405, "")

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if CLOUD == "aws":
            if self.headers.get("X-aws-ec2-metadata-token") != MACHINE["imds_session"]:
                return self._answer(401, "")
            return self._lookup(url.path.removeprefix("/latest/"))
        if CLOUD == "gcp":
            if self.headers.get("Metadata-Flavor") != "Google":
                return self._answer(403, "Missing Metadata-Flavor:Google header.")
            path = url.path.removeprefix("/computeMetadata/v1/")
            if path == "instance/service-accounts/default/token":
                return self._token()
            return self._lookup(path)
        if CLOUD == "azure":
            query = parse_qs(url.query)
            if self.headers.get("Metadata") != "true" or "api-version" not in query:
                return self._answer(400, '{"error": "Bad request"}')
            if url.path == "/metadata/identity/oauth2/token":
                if "resource" not in query:
                    return self._answer(400, '{"error": "invalid_request"}')
                return self._token()
            if url.path == "/metadata/scheduledevents":
                return self._answer(200, json.dumps(self._events()), "application/json")
            return self._lookup(url.path.removeprefix("/metadata/"))
        if CLOUD == "vultr":  # no header needed (docs.vultr.com: the metadata service's /v1 keys)
            return self._lookup(url.path.removeprefix("/"))
        return self._answer(404, "")

    def do_POST(self) -> None:
        """Azure: approving scheduled events (a body listing pending EventIds); every other POST is refused."""
        url = urlsplit(self.path)
        if CLOUD != "azure" or url.path != "/metadata/scheduledevents":
            return self._answer(405, "")
        if self.headers.get("Metadata") != "true" or "api-version" not in parse_qs(url.query):
            return self._answer(400, '{"error": "Bad request"}')
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        try:
            started = [request["EventId"] for request in json.loads(body)["StartRequests"]]
        except (ValueError, KeyError, TypeError):
            return self._answer(400, '{"error": "Bad request"}')
        pending = {event["EventId"] for event in self._events()["Events"]}
        if not started or not set(started) <= pending:
            return self._answer(400, '{"error": "unknown EventId"}')
        with open(APPROVALS_FILE, "a") as out:
            out.write(json.dumps(json.loads(body)) + "\n")
        return self._answer(200, "")

    @staticmethod
    def _events() -> dict:
        if os.path.exists(EVENTS_FILE):
            return json.loads(open(EVENTS_FILE).read())
        return {"DocumentIncarnation": 0, "Events": []}

    def _token(self) -> None:
        body = {"access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"}
        return self._answer(200, json.dumps(body), "application/json")

    def _lookup(self, path: str) -> None:
        path = path.rstrip("/")
        if path in TREE:
            return self._answer(200, TREE[path])
        return self._answer(404, "not found")


ThreadingHTTPServer(("169.254.169.254", 80), Handler).serve_forever()
