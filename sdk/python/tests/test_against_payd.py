"""The SDK against a real ``payd serve`` (see payd_server.py): the
walk-through, refusals and idempotency, iteration, settings, a rotated
webhook secret verified with the old and the new secret, the event stream,
a lost answer retried under the same key, and examples/python/walkthrough.py."""

from __future__ import annotations

import importlib.util
import os
import socket
import threading
import time
import unittest
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional

from payd import Payd, PaydError
from payd.webhook import VerifiedDelivery, WebhookVerificationError, verify_webhook

from payd_server import REPO_ROOT, RunningPayd, start_payd

srv: Optional[RunningPayd] = None


def setUpModule() -> None:
    global srv
    srv = start_payd()


def tearDownModule() -> None:
    if srv is not None:
        srv.stop()


class Receiver:
    """A local webhook receiver that verifies every delivery with the secrets
    it is given, and records what verified and what did not."""

    def __init__(self) -> None:
        self.secrets: List[List[str]] = []  # each list verifies independently
        self.verified: List[VerifiedDelivery] = []
        self.refused: List[str] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                ok = True
                for secrets in outer.secrets:
                    try:
                        d = verify_webhook(secrets, self.headers, raw)
                        with outer.lock:
                            outer.verified.append(d)
                    except WebhookVerificationError as e:
                        ok = False
                        with outer.lock:
                            outer.refused.append(f"{secrets}: {e.reason}")
                self.send_response(200 if ok else 400)
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/webhooks"

    def wait(self, event_id: str, count: int = 1, timeout: float = 30) -> List[VerifiedDelivery]:
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                got = [d for d in self.verified if d.event_id == event_id]
            if len(got) >= count:
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(got)} verified deliveries of {event_id} in {timeout}s; refused: {self.refused}")
            time.sleep(0.05)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class AgainstPaydTest(unittest.TestCase):
    """The tests share one payd and one merchant."""

    def setUp(self) -> None:
        assert srv is not None
        self.srv = srv
        self.payd = Payd(srv.secret_keys[0], base_url=srv.url)

    def test_walkthrough(self) -> None:
        rec = Receiver()
        self.addCleanup(rec.close)
        we = self.payd.create_webhook_endpoint({"url": rec.url, "enabled_events": ["*"], "description": "python sdk test"})
        self.addCleanup(self.payd.delete_webhook_endpoint, we["id"])
        rec.secrets.append([we["secret"]])

        pi = self.payd.create_payment_intent(
            {"amount": 1500, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377123456", "metadata": {"order": "1001"}}
        )
        self.assertEqual(pi["status"], "requires_action")
        self.assertEqual((pi["next_action"] or {})["type"], "collect_otp")
        # The publishable key confirms, as a browser would.
        pk = Payd(self.srv.publishable_key, base_url=self.srv.url)
        confirmed = pk.confirm_payment_intent(pi["id"], {"otp": "123456"})
        self.assertEqual(confirmed["status"], "succeeded")
        self.assertEqual(confirmed["amount_captured_minor"], 1500)
        events = self.payd.list_events({"type": "payment_intent.succeeded", "related_object_id": pi["id"]})["data"]
        self.assertEqual(len(events), 1)
        d = rec.wait(events[0]["id"])[0]
        self.assertEqual(d.event_type, "payment_intent.succeeded")
        self.assertEqual(d.event["data"]["id"], pi["id"])

        po = self.payd.create_payout({"amount_minor": 1000, "currency": "DJF", "provider": "wallet_a", "recipient_msisdn": "+25377654321"})
        self.assertEqual(self.payd.get_payout(po["id"])["id"], po["id"])
        deadline = time.monotonic() + 30
        while self.payd.get_payout(po["id"])["status"] != "succeeded":
            self.assertLess(time.monotonic(), deadline, "payout did not succeed")
            time.sleep(0.05)

        re = self.payd.create_refund({"payment_intent": pi["id"], "amount_minor": 300, "reason": "requested_by_customer"})
        self.assertEqual((re["amount_minor"], re["status"]), (300, "succeeded"))
        self.assertEqual(self.payd.get_payment_intent(pi["id"])["amount_refunded_minor"], 300)
        self.assertIn(re["id"], [r["id"] for r in self.payd.all_refunds({"payment_intent": pi["id"]})])
        self.assertEqual(rec.refused, [])

    def test_refusals_and_idempotency(self) -> None:
        with self.assertRaises(PaydError) as cm:
            self.payd.create_payment_intent(
                {"amount": 200, "currency": "DJF", "provider": "wallet_a", "customer_msisdn": "+25377123456"},
                headers={"X-Service-Scenario": "insufficient_funds"},
            )
        self.assertEqual((cm.exception.status, cm.exception.code), (402, "insufficient_funds"))
        self.assertEqual(cm.exception.body["status"], "canceled")

        key = f"order-{uuid.uuid4()}"
        params: Dict[str, Any] = {"amount_minor": 700, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377123456"}
        first = self.payd.create_payment_intent(params, idempotency_key=key)  # type: ignore[arg-type]
        again = self.payd.create_payment_intent(params, idempotency_key=key)  # type: ignore[arg-type]
        self.assertEqual(again["id"], first["id"])
        with self.assertRaises(PaydError) as cm:
            self.payd.create_payment_intent(dict(params, amount_minor=701), idempotency_key=key)  # type: ignore[arg-type]
        self.assertEqual((cm.exception.status, cm.exception.code), (422, "idempotency_key_reused"))

        with self.assertRaises(PaydError) as cm:
            self.payd.create_payment_intent({"currency": "DJF", "provider": "bank_a"})  # type: ignore[typeddict-item]
        e = cm.exception
        self.assertEqual(e.status, 400)
        self.assertTrue(e.param)
        self.assertTrue((e.request_id or "").startswith("req_"), e.request_id)
        with self.assertRaises(PaydError) as cm:
            self.payd.get_payment_intent("pi_missing")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "resource_missing"))

        # The iterator walks every page (with the merchant's second key).
        other = Payd(self.srv.secret_keys[1], base_url=self.srv.url)
        all_ids = [x["id"] for x in other.all_payment_intents({"limit": 1})]
        page_ids = [x["id"] for x in other.list_payment_intents({"limit": 100})["data"]]
        self.assertEqual(all_ids, page_ids)
        self.assertGreaterEqual(len(all_ids), 2)  # the refused one and the replayed one

    def test_settings_union_and_balance(self) -> None:
        self.payd.create_sandbox_topup({"currency": "DJF", "amount_minor": 100000})
        bal = self.payd.get_balance()
        self.assertTrue(any(b["currency"] == "DJF" and b["available_minor"] > 0 for b in bal["balances"]))
        self.assertEqual(self.payd.update_settings({"approval_threshold_minor": 1_000_000})["object"], "settings")
        self.assertEqual(self.payd.update_settings({"approval_threshold_minor": None})["object"], "settings_change")
        self.assertTrue(self.payd.get_health())

    def test_rotated_secret_signs_with_both(self) -> None:
        rec = Receiver()
        self.addCleanup(rec.close)
        we = self.payd.create_webhook_endpoint({"url": rec.url, "enabled_events": ["payment_intent.succeeded"]})
        self.addCleanup(self.payd.delete_webhook_endpoint, we["id"])
        old = we["secret"]
        rotated = self.payd.rotate_webhook_endpoint_secret(we["id"], {"expires_in_seconds": 3600})
        new = rotated["secret"]
        self.assertNotEqual(new, old)
        # A receiver holding only the old secret, one holding only the new,
        # and one holding both, each verify the same delivery.
        rec.secrets.extend([[old], [new], [new, old]])
        ev = self.payd.trigger_sandbox_event({"event_type": "payment_intent.succeeded"})
        got = rec.wait(ev["id"], count=3)
        self.assertEqual({d.event_id for d in got}, {ev["id"]})
        self.assertEqual(rec.refused, [])

    def test_event_stream(self) -> None:
        with self.payd.stream_events({"types": "payout.created"}) as stream:
            self.payd.create_sandbox_topup({"currency": "DJF", "amount_minor": 1000})
            po = self.payd.create_payout({"amount_minor": 10, "currency": "DJF", "provider": "wallet_a", "recipient_msisdn": "+25377111666"})
            ev = stream.next_event()
            self.assertIsNotNone(ev)
            assert ev is not None
            self.assertEqual(ev["type"], "payout.created")
            self.assertEqual(ev["data"]["id"], po["id"])
            self.assertTrue(stream.last_id)


class LosingProxy:
    """Forwards requests to payd and, for the first POST, throws payd's answer
    away and drops the connection: the request took effect, the caller never
    heard. Records each forwarded request's key and whether payd replayed."""

    def __init__(self, upstream: str) -> None:
        self.seen: List[Dict[str, Optional[str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def forward(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length")}
                req = urllib.request.Request(upstream + self.path, data=body, headers=hdrs, method=self.command)
                try:
                    res = urllib.request.urlopen(req, timeout=30)
                    status, rh, data = res.status, res.headers, res.read()
                except urllib.error.HTTPError as e:
                    status, rh, data = e.code, e.headers, e.read()
                outer.seen.append({"key": self.headers.get("Idempotency-Key"), "replayed": rh.get("Idempotent-Replayed")})
                if self.command == "POST" and len([x for x in outer.seen if x["key"]]) == 1:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(status)
                for k in ("Content-Type", "Request-Id", "Idempotent-Replayed"):
                    if rh.get(k):
                        self.send_header(k, rh[k])
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = forward

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class RetryAgainstPaydTest(unittest.TestCase):
    def test_a_lost_answer_is_retried_with_the_same_key_and_replayed(self) -> None:
        assert srv is not None
        proxy = LosingProxy(srv.url)
        self.addCleanup(proxy.close)
        client = Payd(srv.secret_keys[0], base_url=proxy.url, sleep=lambda s: None)
        marker = f"lost-answer-{uuid.uuid4().hex[:8]}"
        pi = client.create_payment_intent({"amount_minor": 900, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377123456", "description": marker})
        posts = [x for x in proxy.seen if x["key"]]
        self.assertEqual(len(posts), 2, proxy.seen)
        self.assertEqual(posts[0]["key"], posts[1]["key"])
        self.assertEqual(posts[1]["replayed"], "true")
        direct = Payd(srv.secret_keys[0], base_url=srv.url)
        made = [x["id"] for x in direct.all_payment_intents({"limit": 100}) if x.get("description") == marker]
        self.assertEqual(made, [pi["id"]])  # one intent, though payd was asked twice


class ExampleTest(unittest.TestCase):
    def test_examples_python_walkthrough(self) -> None:
        assert srv is not None
        # The example's own merchant, so its balance starts at zero.
        other = start_payd("Python example")
        self.addCleanup(other.stop)
        path = os.path.join(REPO_ROOT, "examples", "python", "walkthrough.py")
        spec = importlib.util.spec_from_file_location("payd_example_walkthrough", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        lines: List[str] = []
        mod.walkthrough(Payd(other.secret_keys[0], base_url=other.url), lines.append)
        out = "\n".join(lines)
        for want in [
            "requires_action (next action collect_otp)",
            "succeeded, 1500 DJF captured",
            "payment_intent.succeeded",
            "payout.succeeded",
            "balance DJF: available 200",
            "1 succeeded payment intent(s)",
        ]:
            self.assertIn(want, out)


if __name__ == "__main__":
    unittest.main()
