"""The queue worker's `QueueClient` on SQS (python3 >= 3.8, boto3), shipped beside queue_worker.py.
The lease is the visibility timeout."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence

if TYPE_CHECKING:  # mypy checks the client against the contract
    from accelstack.components.replica.queue_client import QueueClient

try:  # on the replica
    from queue_worker import REQUEST_ID_ATTRIBUTE, Message  # type: ignore[import-not-found]
except ImportError:  # in the package
    from accelstack.components.replica.queue_worker import REQUEST_ID_ATTRIBUTE, Message

log = logging.getLogger("accelstack.queue_worker.sqs")

SQS_MAX_BATCH = 10  # ReceiveMessage / ChangeMessageVisibilityBatch limit


@dataclass
class SqsQueue:
    sqs: Any  # a boto3 SQS client (or anything with its methods)
    request_queue_url: str
    response_queue_url: str
    max_batch: int = SQS_MAX_BATCH

    def __repr__(self) -> str:
        return f"SqsQueue({self.request_queue_url})"

    def receive(self, max_messages: int, lease_seconds: int, wait_seconds: int) -> List[Message]:
        response = self.sqs.receive_message(
            QueueUrl=self.request_queue_url,
            MaxNumberOfMessages=min(max_messages, SQS_MAX_BATCH),
            WaitTimeSeconds=wait_seconds,
            VisibilityTimeout=lease_seconds,
            AttributeNames=["SentTimestamp", "ApproximateReceiveCount"],
            MessageAttributeNames=["All"],
        )
        return [
            Message(
                id=raw["MessageId"],
                body=raw["Body"],
                lease=raw["ReceiptHandle"],
                sent_at=int(raw.get("Attributes", {}).get("SentTimestamp", "0")) / 1000,
                attributes={k: v["StringValue"] for k, v in raw.get("MessageAttributes", {}).items() if "StringValue" in v},
                deliveries=int(raw.get("Attributes", {}).get("ApproximateReceiveCount", "1")),
            )
            for raw in response.get("Messages", [])
        ]

    def extend(self, messages: Sequence[Message], lease_seconds: int) -> None:
        self._change_visibility(messages, lease_seconds)

    def complete(self, message: Message) -> None:
        self.sqs.delete_message(QueueUrl=self.request_queue_url, ReceiptHandle=message.lease)

    def release(self, messages: Sequence[Message]) -> None:
        self._change_visibility(messages, 0)

    def reply(self, request_id: str, status: int, body: str) -> None:
        self.sqs.send_message(
            QueueUrl=self.response_queue_url,
            MessageBody=body,
            MessageAttributes={
                REQUEST_ID_ATTRIBUTE: {"DataType": "String", "StringValue": request_id},
                "status": {"DataType": "Number", "StringValue": str(status)},
            },
        )

    def _change_visibility(self, messages: Sequence[Message], seconds: int) -> None:
        """Every chunk is tried; then the first failed call is raised (the caller retries)."""
        error: Optional[Exception] = None
        for start in range(0, len(messages), SQS_MAX_BATCH):
            entries = [
                {"Id": str(i), "ReceiptHandle": m.lease, "VisibilityTimeout": seconds}
                for i, m in enumerate(messages[start : start + SQS_MAX_BATCH])
            ]
            try:
                result: Dict[str, Any] = self.sqs.change_message_visibility_batch(
                    QueueUrl=self.request_queue_url, Entries=entries
                )
            except Exception as failed:  # noqa: BLE001 - the other chunks still get their change
                log.exception("ChangeMessageVisibilityBatch failed")
                error = error or failed
                continue
            for failure in result.get("Failed", []):
                # Usually a message answered and deleted between the snapshot and this call.
                log.debug("visibility change %s failed: %s", failure.get("Id"), failure.get("Message"))
        if error is not None:
            raise error


def from_env(env: Mapping[str, str] = os.environ) -> QueueClient:
    missing = [n for n in ("REQUEST_QUEUE_URL", "RESPONSE_QUEUE_URL") if not env.get(n)]
    if missing:
        raise SystemExit(f"queue worker: environment variable(s) {', '.join(missing)} not set")
    import boto3  # on the replica only; the boot script installs it if the image lacks it

    endpoint = env.get("AWS_ENDPOINT_URL_SQS") or env.get("AWS_ENDPOINT_URL") or None
    client = boto3.client("sqs", region_name=env.get("AWS_REGION") or None, endpoint_url=endpoint)
    return SqsQueue(client, env["REQUEST_QUEUE_URL"], env["RESPONSE_QUEUE_URL"])
