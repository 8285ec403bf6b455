"""Verification of payd's webhook deliveries.

Every delivery is a POST whose body is the event as JSON, with the headers
``Service-Event-Id``, ``Service-Event-Type`` and
``Service-Signature: t=<unix>,v1=<hex>``. ``v1`` is the lowercase hex
HMAC-SHA256, keyed with the endpoint's whole ``whsec_...`` secret, of
``"{t}.{Service-Event-Id}.{raw body}"``. While an endpoint's secret is being
rotated each delivery carries one ``v1`` per secret (new first); a delivery is
genuine when any of them matches a secret the receiver holds.

Answer 400 when verification fails and 2xx within five seconds when it
succeeds; de-duplicate on ``event_id`` (deliveries are at least once).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

#: How far a delivery's timestamp may be from the receiver's clock, in seconds.
DEFAULT_TOLERANCE_SECONDS = 300

#: The delivery headers.
HEADER_EVENT_ID = "Service-Event-Id"
HEADER_EVENT_TYPE = "Service-Event-Type"
HEADER_SIGNATURE = "Service-Signature"

# A header longer than this is refused before it is parsed: rotation makes at
# most two signatures, so a few hundred bytes is already generous.
_MAX_SIGNATURE_HEADER = 4096


class WebhookVerificationError(Exception):
    """Why a delivery was refused; answer 400 and ignore it.

    ``reason`` is one of ``missing_header``, ``malformed_header``,
    ``timestamp_outside_tolerance``, ``no_valid_signature``,
    ``event_mismatch``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class VerifiedDelivery:
    """A verified delivery. ``event_id`` is the de-duplication key."""

    event_id: str
    event_type: str
    signed_at: datetime
    #: The event envelope: ``{"id", "object": "event", "type", "created_at", "livemode", "data": {"id", "object"}}``.
    event: Dict[str, Any]


def _header(headers: Any, name: str) -> Optional[str]:
    # Accepts a plain dict (any case), email.message.Message / http.client
    # headers, or a WSGI-like mapping with .get.
    if isinstance(headers, Mapping):
        for k, v in headers.items():
            if isinstance(k, str) and k.lower() == name.lower():
                if isinstance(v, (list, tuple)):
                    return str(v[0]) if v else None
                return None if v is None else str(v)
        return None
    get = getattr(headers, "get", None)
    if get is not None:
        v = get(name)
        return None if v is None else str(v)
    raise TypeError("payd: headers must be a mapping or have .get")


def _parse_signature(header: str) -> Tuple[int, List[bytes]]:
    if len(header) > _MAX_SIGNATURE_HEADER:
        raise WebhookVerificationError("malformed_header", "Service-Signature is too long")
    t: Optional[int] = None
    v1: List[bytes] = []
    for part in header.split(","):
        k, sep, v = part.strip().partition("=")
        if not sep:
            continue
        if k == "t" and v.isascii() and v.isdigit() and len(v) <= 12:
            t = int(v)
        elif k == "v1":
            try:
                if v.isascii() and len(v) % 2 == 0 and v:
                    v1.append(bytes.fromhex(v))
            except ValueError:
                pass
    if t is None or not v1:
        raise WebhookVerificationError("malformed_header", "Service-Signature is not t=<unix>,v1=<hex>")
    return t, v1


def compute_signature(secret: str, t: int, event_id: str, raw_body: bytes) -> str:
    """The lowercase hex v1 signature of one delivery."""
    msg = f"{t}.{event_id}.".encode("utf-8") + raw_body
    return hmac.new(secret.encode("utf-8"), msg, hashlib.sha256).hexdigest()


def signature_header(secret: Union[str, Sequence[str]], t: Union[int, float, datetime], event_id: str, raw_body: Union[bytes, str]) -> str:
    """A Service-Signature header as payd makes it, for receivers' own tests.

    Several secrets give one ``v1`` each, in the order given (as during a
    rotation: new first).
    """
    if isinstance(t, datetime):
        unix = int(t.timestamp())
    else:
        unix = int(t)
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else raw_body
    secrets = [secret] if isinstance(secret, str) else list(secret)
    return f"t={unix}," + ",".join("v1=" + compute_signature(s, unix, event_id, body) for s in secrets)


def verify_webhook(
    secrets: Union[str, Sequence[str]],
    headers: Any,
    raw_body: Union[bytes, bytearray, str],
    *,
    tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[Callable[[], float]] = None,
) -> VerifiedDelivery:
    """Verifies one delivery given its headers and raw body.

    Pass the body exactly as received (never re-encode the JSON first).
    ``secrets`` may hold the old secret too while you roll it. Raises
    WebhookVerificationError when the delivery must be refused.
    ``tolerance_seconds`` 0 turns the timestamp check off (tests only).
    """
    event_id = _header(headers, HEADER_EVENT_ID)
    sig = _header(headers, HEADER_SIGNATURE)
    if not event_id or not sig:
        raise WebhookVerificationError("missing_header", "missing Service-Signature or Service-Event-Id")
    t, v1 = _parse_signature(sig)
    current = time.time() if now is None else now()
    if tolerance_seconds > 0 and abs(current - t) > tolerance_seconds:
        raise WebhookVerificationError("timestamp_outside_tolerance", f"signed at {t}, {round(current - t)}s from now")
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else bytes(raw_body)
    msg = f"{t}.{event_id}.".encode("utf-8") + body
    matched = False
    for secret in [secrets] if isinstance(secrets, str) else list(secrets):
        want = hmac.new(secret.encode("utf-8"), msg, hashlib.sha256).digest()
        for got in v1:
            # Every pair is compared, in constant time, so the time taken
            # says nothing about which signature or secret matched.
            if hmac.compare_digest(want, got):
                matched = True
    if not matched:
        raise WebhookVerificationError("no_valid_signature", "no signature matches the expected one")
    try:
        event = json.loads(body)
    except ValueError:
        raise WebhookVerificationError("event_mismatch", "the body is not an event") from None
    if not isinstance(event, dict) or event.get("id") != event_id:
        raise WebhookVerificationError("event_mismatch", "the body's event id differs from Service-Event-Id")
    try:
        signed_at = datetime.fromtimestamp(t, tz=timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise WebhookVerificationError("malformed_header", "Service-Signature's t is not a time") from None
    return VerifiedDelivery(
        event_id=event_id,
        event_type=_header(headers, HEADER_EVENT_TYPE) or str(event.get("type", "")),
        signed_at=signed_at,
        event=event,
    )
