"""Webhook verification: good, bad, old and future timestamps, rotated
secrets (several v1 values), malformed headers, and random input."""

from __future__ import annotations

import json
import random
import string
import unittest
from datetime import datetime, timezone

from payd.webhook import (
    DEFAULT_TOLERANCE_SECONDS,
    WebhookVerificationError,
    compute_signature,
    signature_header,
    verify_webhook,
)

SECRET = "whsec_current_secret_0123456789abcdef"
OLD = "whsec_previous_secret_0123456789abcdef"
NOW = 1_795_910_811
BODY = json.dumps(
    {"id": "evt_1", "object": "event", "type": "payment_intent.succeeded", "created_at": "2026-11-28T10:00:00Z",
     "livemode": False, "data": {"id": "pi_1", "object": {"id": "pi_1", "status": "succeeded"}}},
    separators=(",", ":"),
).encode()


def headers(sig: str, event_id: str = "evt_1") -> dict:
    return {"Service-Event-Id": event_id, "Service-Event-Type": "payment_intent.succeeded", "Service-Signature": sig}


class WebhookTest(unittest.TestCase):
    def verify(self, secrets, hdrs, body=BODY, now=NOW, **kw):
        return verify_webhook(secrets, hdrs, body, now=lambda: now, **kw)

    def refused(self, reason, secrets, hdrs, body=BODY, now=NOW, **kw):
        with self.assertRaises(WebhookVerificationError) as cm:
            self.verify(secrets, hdrs, body, now, **kw)
        self.assertEqual(cm.exception.reason, reason, str(cm.exception))

    def test_the_same_signature_as_payd(self) -> None:
        # The vector of the Go package webhook (ExampleComputeSignature).
        self.assertEqual(
            compute_signature("whsec_test", 1700000000, "evt_123", b'{"id":"evt_123"}'),
            "f7469f530ba94cb37b3ca28d1e61c04e33b1b36308b6b7cb5ebc331b1b248b6f",
        )

    def test_good(self) -> None:
        d = self.verify(SECRET, headers(signature_header(SECRET, NOW, "evt_1", BODY)))
        self.assertEqual(d.event_id, "evt_1")
        self.assertEqual(d.event_type, "payment_intent.succeeded")
        self.assertEqual(d.event["data"]["id"], "pi_1")
        self.assertEqual(d.signed_at, datetime.fromtimestamp(NOW, tz=timezone.utc))
        # Header names in any case, a str body, and http.client-style headers.
        lower = {k.lower(): v for k, v in headers(signature_header(SECRET, NOW, "evt_1", BODY)).items()}
        self.assertEqual(self.verify([SECRET], lower, BODY.decode()).event_id, "evt_1")

    def test_bad(self) -> None:
        sig = signature_header(SECRET, NOW, "evt_1", BODY)
        self.refused("no_valid_signature", "whsec_wrong", headers(sig))
        self.refused("no_valid_signature", SECRET, headers(sig), BODY.replace(b"succeeded", b"canceled!"))
        self.refused("no_valid_signature", SECRET, headers(sig, event_id="evt_2"))
        flipped = sig[:-1] + ("0" if sig[-1] != "0" else "1")
        self.refused("no_valid_signature", SECRET, headers(flipped))
        # Signed right, but the body is another event than the header names.
        other = BODY.replace(b'"evt_1"', b'"evt_9"')
        self.refused("event_mismatch", SECRET, headers(signature_header(SECRET, NOW, "evt_1", other)), other)

    def test_old_and_future_timestamps(self) -> None:
        old = NOW - DEFAULT_TOLERANCE_SECONDS - 1
        self.refused("timestamp_outside_tolerance", SECRET, headers(signature_header(SECRET, old, "evt_1", BODY)))
        future = NOW + DEFAULT_TOLERANCE_SECONDS + 1
        self.refused("timestamp_outside_tolerance", SECRET, headers(signature_header(SECRET, future, "evt_1", BODY)))
        edge = NOW - DEFAULT_TOLERANCE_SECONDS
        self.assertEqual(self.verify(SECRET, headers(signature_header(SECRET, edge, "evt_1", BODY))).event_id, "evt_1")
        self.refused("timestamp_outside_tolerance", SECRET, headers(signature_header(SECRET, NOW - 61, "evt_1", BODY)), tolerance_seconds=60)

    def test_rotated_secret(self) -> None:
        # During a rotation payd sends one v1 per secret, new first.
        both = headers(signature_header([SECRET, OLD], NOW, "evt_1", BODY))
        self.assertEqual(both["Service-Signature"].count("v1="), 2)
        for held in (SECRET, OLD, [OLD, SECRET], [SECRET, OLD]):
            with self.subTest(held=held):
                self.assertEqual(self.verify(held, both).event_id, "evt_1")
        self.refused("no_valid_signature", "whsec_neither", both)
        # After the grace period only the new secret signs: a receiver still
        # holding both verifies, one holding only the old does not.
        new_only = headers(signature_header(SECRET, NOW, "evt_1", BODY))
        self.assertEqual(self.verify([OLD, SECRET], new_only).event_id, "evt_1")
        self.refused("no_valid_signature", OLD, new_only)

    def test_malformed_and_missing(self) -> None:
        good = signature_header(SECRET, NOW, "evt_1", BODY)
        self.refused("missing_header", SECRET, {"Service-Event-Id": "evt_1"})
        self.refused("missing_header", SECRET, {"Service-Signature": good})
        for sig in ["", "v1=abcd", f"t={NOW}", f"t={NOW},v1=zz", f"t=-5,{good.split(',')[1]}", "t=1e9,v1=00", "garbage", "t=" + "9" * 40 + ",v1=00"]:
            with self.subTest(sig=sig):
                self.refused("missing_header" if sig == "" else "malformed_header", SECRET, headers(sig))
        self.refused("malformed_header", SECRET, headers(good + ",v1=" + "a" * 5000))

    def test_random_input_is_refused_cleanly(self) -> None:
        # A fuzz loop (seeded, bounded): whatever arrives, verification either
        # succeeds or raises WebhookVerificationError, never anything else.
        rng = random.Random(33)
        good = signature_header(SECRET, NOW, "evt_1", BODY)
        alphabet = string.printable + "é\x00"
        for _ in range(3000):
            sig = list(good)
            for _ in range(rng.randint(0, 6)):
                op = rng.random()
                pos = rng.randint(0, len(sig))
                if op < 0.4 and sig:
                    del sig[min(pos, len(sig) - 1)]
                elif op < 0.8:
                    sig.insert(pos, rng.choice(alphabet))
                else:
                    sig.insert(pos, rng.choice([",", "=", "t=", "v1=", ",v1="]))
            body = BODY if rng.random() < 0.7 else bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
            try:
                self.verify([SECRET, OLD], headers("".join(sig)), body)
            except WebhookVerificationError:
                pass


if __name__ == "__main__":
    unittest.main()
