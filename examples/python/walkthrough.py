"""payd's five-minute walk-through with the Python SDK (package payd):
create a payment intent, confirm it with the sandbox SMS code, receive and
verify the signed webhook, pay out part of the proceeds, refund part of the
payment.

    go run ./cmd/payd serve                     # prints the demo secret key
    python3 -m venv .venv && .venv/bin/pip install ./sdk/python
    PAYD_API_KEY=sk_test_... .venv/bin/python examples/python/walkthrough.py

PAYD_URL (default http://127.0.0.1:8080) points at another payd. The example
receives webhooks on 127.0.0.1 (a random port) and registers that address as
a test-mode endpoint for the length of the run.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, List

from payd import Payd, PaydError
from payd.webhook import VerifiedDelivery, WebhookVerificationError, verify_webhook


def walkthrough(payd: Payd, say: Callable[[str], None] = print) -> None:
    # 1. A webhook receiver: verify each delivery on the raw body before
    # trusting anything in it.
    secrets: List[str] = []
    received: List[VerifiedDelivery] = []
    lock = threading.Lock()

    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                delivery = verify_webhook(secrets, self.headers, raw)
            except WebhookVerificationError:
                self.send_response(400)
                self.end_headers()
                return
            with lock:
                received.append(delivery)
            self.send_response(200)  # answer quickly; payd retries anything else
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]

    def await_event(type_: str, object_id: str) -> VerifiedDelivery:
        deadline = time.monotonic() + 60
        while True:
            with lock:
                for d in received:
                    if d.event_type == type_ and d.event["data"]["id"] == object_id:
                        return d
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {type_} webhook for {object_id} within a minute")
            time.sleep(0.05)

    endpoint = payd.create_webhook_endpoint(
        {
            "url": f"http://127.0.0.1:{port}/webhooks",
            "enabled_events": ["payment_intent.succeeded", "payout.succeeded", "refund.succeeded"],
            "description": "walk-through",
        }
    )
    secrets.append(endpoint["secret"])  # shown only in this answer: keep it in your secrets store
    say(f"webhook endpoint {endpoint['id']} -> {endpoint['url']}")
    try:
        # 2. A payment intent. The SDK sends an Idempotency-Key and keeps it
        # across its own retries; your order's reference makes a retry after
        # a crash of your process safe too.
        order = f"order-{uuid.uuid4().hex[:8]}"
        pi = payd.create_payment_intent(
            {
                "amount": 1500,
                "currency": "DJF",
                "provider": "bank_a",
                "customer_msisdn": "+25377123456",
                "description": f"Order {order}",
                "metadata": {"order": order},
            },
            idempotency_key=order,
        )
        next_action = (pi.get("next_action") or {}).get("type")
        say(f"payment intent {pi['id']}: {pi['status']} (next action {next_action})")

        # 3. Confirm with the customer's code (always 123456 in the sandbox).
        try:
            pi = payd.confirm_payment_intent(pi["id"], {"otp": "123456"})
        except PaydError as e:
            if e.code == "otp_invalid":
                raise RuntimeError("wrong code: the intent is canceled, create another") from e
            raise
        say(f"payment intent {pi['id']}: {pi['status']}, {pi['amount_captured_minor']} {pi['currency']} captured")

        # 4. The signed webhook: fulfil the order here, not on the redirect.
        d = await_event("payment_intent.succeeded", pi["id"])
        say(f"webhook {d.event_id} {d.event_type} for {d.event['data']['id']} (signature verified)")

        # 5. Pay out part of the proceeds to a wallet.
        po = payd.create_payout(
            {
                "amount_minor": 1000,
                "currency": "DJF",
                "provider": "wallet_a",
                "recipient_msisdn": "+25377654321",
                "recipient_name": "Amina Hassan",
                "reference": f"payout-{order}",
            }
        )
        say(f"payout {po['id']}: {po['status']}")
        d = await_event("payout.succeeded", po["id"])
        say(f"webhook {d.event_id} {d.event_type} for {d.event['data']['id']} (signature verified)")

        # 6. Refund part of the payment.
        re = payd.create_refund({"payment_intent": pi["id"], "amount_minor": 300, "reason": "requested_by_customer"})
        say(f"refund {re['id']}: {re['status']}")
        if re["status"] != "succeeded":
            d = await_event("refund.succeeded", re["id"])
            say(f"webhook {d.event_id} {d.event_type} for {d.event['data']['id']} (signature verified)")

        # 7. The balance, and the intents so far (the iterator fetches pages as needed).
        for b in payd.get_balance()["balances"]:
            say(f"balance {b['currency']}: available {b['available_minor']}, reserved {b['reserved_minor']}, pending {b['pending_minor']}")
        n = sum(1 for _ in payd.all_payment_intents({"status": "succeeded"}))
        say(f"{n} succeeded payment intent(s)")
    finally:
        try:
            payd.delete_webhook_endpoint(endpoint["id"])
        except PaydError:
            pass
        server.shutdown()
        server.server_close()


def main() -> int:
    key = os.environ.get("PAYD_API_KEY")
    if not key:
        print("set PAYD_API_KEY to a test secret key (sk_test_...): `payd serve` prints the demo merchant's", file=sys.stderr)
        return 1
    walkthrough(Payd(key, base_url=os.environ.get("PAYD_URL", "http://127.0.0.1:8080")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
