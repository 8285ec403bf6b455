"""The transport against a scripted local HTTP server: idempotency keys kept
across retries, Retry-After, giving up, errors not retried, typed errors,
pagination."""

from __future__ import annotations

import json
import os
import re
import threading
import unittest
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

import payd
from payd import Payd, PaydError, PaydNetworkError, parse_retry_after

# A scripted answer: (status, headers, body), or DROP to close the connection
# without answering.
DROP = "drop"
Answer = Any


class Recorded:
    def __init__(self, method: str, path: str, headers: Dict[str, str], body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body

    @property
    def query(self) -> Dict[str, List[str]]:
        return parse_qs(urlsplit(self.path).query)


class ScriptedServer:
    """Answers each request with the next scripted answer (the last one repeats)."""

    def __init__(self, answers: List[Answer]) -> None:
        self.answers = list(answers)
        self.requests: List[Recorded] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle_one(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                outer.requests.append(Recorded(self.command, self.path, {k: v for k, v in self.headers.items()}, body))
                i = min(len(outer.requests), len(outer.answers)) - 1
                ans = outer.answers[i]
                if callable(ans):
                    ans = ans(outer.requests[-1])
                if ans == DROP:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                status, headers, payload = ans
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Request-Id", f"req_{len(outer.requests)}")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = handle_one

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def envelope(code: str, message: str = "m", type: str = "invalid_request_error", param: Optional[str] = None) -> Dict[str, Any]:
    e: Dict[str, Any] = {"type": type, "code": code, "message": message, "request_id": "req_env"}
    if param:
        e["param"] = param
    return {"error": e}


INTENT = {"id": "pi_1", "object": "payment_intent", "status": "requires_action"}


class TransportTest(unittest.TestCase):
    def serve(self, *answers: Answer) -> Tuple[ScriptedServer, Payd, List[float]]:
        srv = ScriptedServer(list(answers))
        self.addCleanup(srv.close)
        waits: List[float] = []
        client = Payd("sk_test_abc", base_url=srv.url, sleep=waits.append, min_backoff=0.01, max_backoff=0.02)
        return srv, client, waits

    def test_retries_keep_the_idempotency_key_and_body(self) -> None:
        # A dropped connection, then payd without its database, then the answer.
        srv, client, waits = self.serve(
            DROP,
            (503, {"Retry-After": "0"}, envelope("database_unavailable", type="api_error")),
            (409, {}, envelope("idempotency_key_in_use", type="idempotency_error")),
            (201, {}, INTENT),
        )
        pi = client.create_payment_intent({"amount": 1500, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377123456"})
        self.assertEqual(pi["id"], "pi_1")
        self.assertEqual(len(srv.requests), 4)
        keys = {r.headers.get("Idempotency-Key") for r in srv.requests}
        self.assertEqual(len(keys), 1, keys)
        key = keys.pop()
        self.assertIsNotNone(key)
        self.assertRegex(key or "", r"^payd-python-[0-9a-f-]{36}$")
        self.assertEqual({r.body for r in srv.requests}, {srv.requests[0].body})
        self.assertEqual(json.loads(srv.requests[0].body)["amount"], 1500)
        self.assertEqual(len(waits), 3)
        self.assertEqual(waits[1], 0.0)  # Retry-After: 0 honoured
        self.assertEqual(srv.requests[0].headers["Authorization"], "Bearer sk_test_abc")
        self.assertTrue(srv.requests[0].headers["User-Agent"].startswith("payd-python/" + payd.__version__))
        # A new call gets a new key.
        client.create_payment_intent({"amount": 1, "currency": "DJF", "provider": "bank_a"})
        self.assertNotEqual(srv.requests[-1].headers["Idempotency-Key"], key)

    def test_own_idempotency_key_is_sent(self) -> None:
        srv, client, _ = self.serve(DROP, (201, {}, INTENT))
        client.create_payment_intent({"amount": 1, "currency": "DJF", "provider": "bank_a"}, idempotency_key="order-1001")
        self.assertEqual([r.headers["Idempotency-Key"] for r in srv.requests], ["order-1001", "order-1001"])

    def test_retry_after_seconds_and_date(self) -> None:
        srv, client, waits = self.serve(
            (429, {"Retry-After": "2"}, envelope("rate_limited", type="rate_limit_error")),
            (200, {}, {"object": "balance", "livemode": False, "balances": []}),
        )
        client.get_balance()
        self.assertEqual(waits, [2.0])
        self.assertIsNone(srv.requests[0].headers.get("Idempotency-Key"))  # GET carries no key
        self.assertAlmostEqual(parse_retry_after(formatdate(1000.0 + 7, usegmt=True), now=1000.0) or 0, 7.0)
        self.assertIsNone(parse_retry_after("soon"))
        self.assertIsNone(parse_retry_after("\u00b2"))  # a digit to str.isdigit, not a number of seconds
        self.assertEqual(parse_retry_after(formatdate(10.0, usegmt=True), now=1000.0), 0.0)

    def test_retry_after_fuzz(self) -> None:
        # Seeded and bounded: any header value gives None or a wait in [0, 1 day].
        import random

        rng = random.Random(33)
        seeds = ["0", "120", "Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 29 Nov 2026 04:00:00 +0000", "99999999999999999999"]
        alphabet = "0123456789 ,:+-GMTSunWedOct\u00b2\u0660x"
        for _ in range(3000):
            v = list(rng.choice(seeds))
            for _ in range(rng.randint(0, 5)):
                pos = rng.randint(0, len(v))
                if rng.random() < 0.5 and v:
                    del v[min(pos, len(v) - 1)]
                else:
                    v.insert(pos, rng.choice(alphabet))
            got = parse_retry_after("".join(v), now=1_795_910_811.0)
            self.assertTrue(got is None or 0.0 <= got <= 86400.0, ("".join(v), got))

    def test_a_long_retry_after_is_raised_at_once(self) -> None:
        srv, client, waits = self.serve((429, {"Retry-After": "120"}, envelope("rate_limited", type="rate_limit_error")))
        with self.assertRaises(payd.RateLimitError) as cm:
            client.get_balance()
        self.assertEqual(cm.exception.code, "rate_limited")
        self.assertEqual(len(srv.requests), 1)
        self.assertEqual(waits, [])

    def test_errors_are_typed_and_not_retried(self) -> None:
        for status, env, cls in [
            (400, envelope("parameter_missing", param="currency"), payd.InvalidRequestError),
            (401, envelope("invalid_api_key", type="authentication_error"), payd.AuthenticationError),
            (403, envelope("self_approval_not_allowed", type="permission_error"), payd.PermissionDeniedError),
            (500, envelope("api_error", type="api_error"), payd.APIError),
            (503, envelope("provider_unavailable", type="provider_error"), payd.ProviderError),
            (422, envelope("idempotency_key_reused", type="idempotency_error"), payd.IdempotencyError),
        ]:
            with self.subTest(status=status):
                srv, client, waits = self.serve((status, {}, env))
                with self.assertRaises(PaydError) as cm:
                    client.create_payment_intent({"amount": 1, "currency": "DJF", "provider": "bank_a"})
                e = cm.exception
                self.assertIsInstance(e, cls)
                self.assertEqual(len(srv.requests), 1)
                self.assertEqual(waits, [])
                self.assertEqual(e.status, status)
                self.assertEqual(e.code, env["error"]["code"])
                self.assertEqual(e.type, env["error"]["type"])
                self.assertEqual(e.param, env["error"].get("param"))
                self.assertEqual(e.request_id, "req_env")
                self.assertIn(e.code, str(e))

    def test_a_refusal_carries_the_intent(self) -> None:
        canceled = dict(INTENT, status="canceled", last_error={"code": "insufficient_funds", "message": "no money", "provider": "wallet_a"})
        _, client, _ = self.serve((402, {}, canceled))
        with self.assertRaises(PaydError) as cm:
            client.create_payment_intent({"amount": 1, "currency": "DJF", "provider": "wallet_a"})
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.type), (402, "insufficient_funds", "provider_error"))
        self.assertIsInstance(cm.exception, payd.ProviderError)
        self.assertEqual(cm.exception.body["status"], "canceled")
        self.assertEqual(cm.exception.request_id, "req_1")

    def test_bulk_rows_are_kept(self) -> None:
        env = envelope("invalid_rows")
        env["error"]["rows"] = [{"row": 2, "param": "amount_minor", "message": "must be positive"}]
        _, client, _ = self.serve((400, {}, env))
        with self.assertRaises(PaydError) as cm:
            client.create_payout_batch({"items": []})
        self.assertEqual(cm.exception.rows, env["error"]["rows"])

    def test_no_answer_after_every_retry(self) -> None:
        srv, client, waits = self.serve(DROP)
        with self.assertRaises(PaydNetworkError) as cm:
            client.create_refund({"payment_intent": "pi_1"})
        self.assertEqual(cm.exception.attempts, 4)
        self.assertEqual(len(srv.requests), 4)
        self.assertEqual(len({r.headers["Idempotency-Key"] for r in srv.requests}), 1)
        self.assertEqual(len(waits), 3)
        self.assertTrue(all(0.005 <= w <= 0.02 for w in waits), waits)

    def test_connection_refused(self) -> None:
        srv = ScriptedServer([])
        url = srv.url
        srv.close()
        client = Payd("sk_test_abc", base_url=url, max_retries=1, sleep=lambda s: None)
        with self.assertRaises(PaydNetworkError) as cm:
            client.get_balance()
        self.assertEqual(cm.exception.attempts, 2)

    def test_iterator_follows_the_cursor(self) -> None:
        pages: Dict[Optional[str], Any] = {
            None: {"object": "list", "data": [{"id": "pi_3"}, {"id": "pi_2"}], "has_more": True},
            "pi_2": {"object": "list", "data": [{"id": "pi_1"}], "has_more": False},
        }

        def page(r: Recorded) -> Answer:
            after = r.query.get("starting_after", [None])[0]
            return (200, {}, pages[after])

        srv, client, _ = self.serve(page)
        ids = [pi["id"] for pi in client.all_payment_intents({"limit": 2, "status": "succeeded"})]
        self.assertEqual(ids, ["pi_3", "pi_2", "pi_1"])
        self.assertEqual(len(srv.requests), 2)
        self.assertEqual(srv.requests[1].query, {"limit": ["2"], "status": ["succeeded"], "starting_after": ["pi_2"]})
        # Breaking out of the loop stops fetching.
        srv.requests.clear()
        for _ in client.all_payment_intents():
            break
        self.assertEqual(len(srv.requests), 1)

    def test_paths_and_queries_are_encoded(self) -> None:
        srv, client, _ = self.serve((200, {}, {"object": "list", "data": [], "has_more": False}))
        client.get_payment_intent("pi_a/b?c")
        self.assertEqual(srv.requests[0].path, "/v1/payment_intents/pi_a%2Fb%3Fc")
        client.list_balance_transactions({"created[gte]": "2026-01-01T00:00:00Z", "limit": 5})
        self.assertEqual(srv.requests[1].query, {"created[gte]": ["2026-01-01T00:00:00Z"], "limit": ["5"]})
        client.list_events({"type": "payout.created", "limit": None})  # None is left out
        self.assertEqual(srv.requests[2].query, {"type": ["payout.created"]})
        with self.assertRaises(TypeError):
            client.get_payment_intent("")

    def test_a_publishable_key_only_confirms(self) -> None:
        srv, _, _ = self.serve((200, {}, dict(INTENT, status="succeeded")))
        pk = Payd("pk_test_abc", base_url=srv.url)
        with self.assertRaises(payd.PermissionDeniedError) as cm:
            pk.get_balance()
        self.assertEqual(cm.exception.code, "permission_denied")
        self.assertEqual(srv.requests, [])
        self.assertEqual(pk.confirm_payment_intent("pi_1", {"otp": "123456"})["status"], "succeeded")
        self.assertFalse(pk.livemode)
        self.assertTrue(Payd("sk_live_x").livemode)

    def test_redirects_are_not_followed(self) -> None:
        srv, client, _ = self.serve((302, {"Location": "http://127.0.0.1:1/elsewhere"}, b""))
        with self.assertRaises(PaydError) as cm:
            client.get_balance()
        self.assertEqual(cm.exception.status, 302)
        self.assertEqual(len(srv.requests), 1)

    def test_raw_bodies(self) -> None:
        srv, client, _ = self.serve((202, {}, {"id": "po_bulk_1"}))
        res = client.request_raw("POST", "/v1/payouts/bulk", b"a,b\n", content_type="text/csv", idempotency_key="bulk-1")
        self.assertEqual(res.status, 202)
        self.assertEqual(json.loads(res.body)["id"], "po_bulk_1")
        self.assertEqual(srv.requests[0].headers["Content-Type"], "text/csv")
        self.assertEqual(srv.requests[0].headers["Idempotency-Key"], "bulk-1")
        self.assertEqual(srv.requests[0].body, b"a,b\n")

    def test_event_stream(self) -> None:
        sse = b': keep-alive\n\nid: 1\ndata: {"id":"evt_1",\ndata: "type":"payout.created"}\n\nid: 2\r\ndata:{"id":"evt_2"}\r\n\r\n'
        srv, client, _ = self.serve((200, {}, sse))
        with client.stream_events({"types": "payout.created"}) as stream:
            self.assertEqual(stream.next_event(), {"id": "evt_1", "type": "payout.created"})
            self.assertEqual(stream.last_id, "1")
            self.assertEqual([ev["id"] for ev in stream], ["evt_2"])
            self.assertEqual(stream.last_id, "2")
        self.assertEqual(srv.requests[0].headers["Accept"], "text/event-stream")
        self.assertEqual(srv.requests[0].query, {"types": ["payout.created"]})

    def test_version_matches_pyproject(self) -> None:
        pyproject = os.path.join(os.path.dirname(__file__), "..", "pyproject.toml")
        with open(pyproject, encoding="utf-8") as f:
            m = re.search(r'^version = "([^"]+)"', f.read(), re.M)
        self.assertIsNotNone(m)
        self.assertEqual(m.group(1) if m else None, payd.__version__)

    def test_licence_is_the_repositorys(self) -> None:
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "LICENSE"), "rb") as a, open(os.path.join(here, "..", "..", "..", "LICENSE"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_every_operation_has_a_method(self) -> None:
        for name, op in payd.OPERATIONS.items():
            self.assertTrue(callable(getattr(Payd, name, None)), name)
            self.assertIn(op.method, ("GET", "POST", "DELETE"))


if __name__ == "__main__":
    unittest.main()
