"""The hand-written transport of the payd SDK.

Idempotency keys kept across retries, exponential backoff with jitter,
Retry-After, typed errors, cursor pagination and server-sent events, on the
standard library alone (urllib.request). _generated.py adds one method per
operation on top of it.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import platform
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from datetime import timezone
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from ._version import __version__

#: Where the client sends requests unless told otherwise.
DEFAULT_BASE_URL = "http://127.0.0.1:8080"

# A retry never waits longer than a day, whatever Retry-After says.
_MAX_RETRY_AFTER = 86400.0


@dataclass(frozen=True)
class Operation:
    """One operation of the API, as the generated table describes it."""

    name: str
    method: str
    path: str
    path_params: Tuple[str, ...]
    idempotency_required: bool
    public: bool
    also_decode: Tuple[int, ...]


class PaydException(Exception):
    """The base of every exception the SDK raises for a call."""


class PaydError(PaydException):
    """An error answer of the API: its envelope, and the HTTP status.

    ``code`` is the machine-readable reason (``resource_missing``,
    ``idempotency_key_reused``, ...), ``param`` the request field at fault,
    ``request_id`` what to quote to support. For a provider's refusal of a
    payment (402) ``body`` is the canceled payment intent.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        type: str,
        code: str,
        param: Optional[str] = None,
        request_id: Optional[str] = None,
        rows: Optional[List[Dict[str, Any]]] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        #: HTTP status of the answer (0 when the SDK refused the call itself).
        self.status = status
        self.type = type
        self.code = code
        self.message = message
        self.param = param
        self.request_id = request_id
        #: Every bad row of a bulk payout: ``[{"row", "param", "message"}]``.
        self.rows = rows
        #: The answer's parsed body.
        self.body = body

    def __str__(self) -> str:
        s = f"payd: {self.status} {self.code}: {self.message}"
        if self.param:
            s += f" (param {self.param})"
        if self.request_id:
            s += f" [{self.request_id}]"
        return s


class InvalidRequestError(PaydError):
    """``invalid_request_error``: the request is wrong (400, 404, 409, 413, 415); ``param`` names the field."""


class AuthenticationError(PaydError):
    """``authentication_error``: the API key is missing or unknown (401)."""


class PermissionDeniedError(PaydError):
    """``permission_error``: the key may not do this (403), e.g. a self-approval or a publishable key."""


class IdempotencyError(PaydError):
    """``idempotency_error``: the Idempotency-Key was used for another request (422) or is still running (409)."""


class RateLimitError(PaydError):
    """``rate_limit_error``: too many requests (429); raised once the retries (after Retry-After) are spent."""


class ProviderError(PaydError):
    """``provider_error``: a provider refused or did not answer (402, 502, 503, 504); for a refused
    payment ``body`` is the canceled payment intent."""


class APIError(PaydError):
    """``api_error``: payd failed (500), or could not reach its database (503 ``database_unavailable``)."""


# The exception class of each error type of the envelope.
_ERROR_CLASSES = {
    "invalid_request_error": InvalidRequestError,
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDeniedError,
    "idempotency_error": IdempotencyError,
    "rate_limit_error": RateLimitError,
    "provider_error": ProviderError,
    "api_error": APIError,
}


def _error(message: str, *, type: str, **kw: Any) -> PaydError:
    return _ERROR_CLASSES.get(type, PaydError)(message, type=type, **kw)


class PaydNetworkError(PaydException):
    """No answer arrived after every retry (connection refused or reset, timeout)."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        #: How many attempts were made.
        self.attempts = attempts


@dataclass(frozen=True)
class RawResponse:
    """The answer of request_raw: status, headers and body bytes."""

    status: int
    headers: Mapping[str, str]
    body: bytes


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Parses Retry-After (delay seconds or an HTTP date) into seconds; None when absent or unreadable."""
    if not value:
        return None
    s = value.strip()
    if s.isascii() and s.isdigit():
        return min(float(s), _MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(s)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now_ts = time.time() if now is None else now
    return min(max(when.timestamp() - now_ts, 0.0), _MAX_RETRY_AFTER)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # payd never redirects an API call; a 3xx is an answer, not a hop to take
    # with the key attached.
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


# What a failed attempt that got no (complete) answer looks like.
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError, OSError)


class BaseClient:
    """The transport every generated method goes through."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        max_retries: int = 3,
        min_backoff: float = 0.25,
        max_backoff: float = 8.0,
        max_retry_wait: float = 30.0,
        timeout: float = 60.0,
        app_info: Optional[str] = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """A client for one payd and one API key.

        ``max_retries`` retries of one call (0 turns them off); waits start at
        ``min_backoff`` seconds and double up to ``max_backoff``; a
        Retry-After longer than ``max_retry_wait`` seconds is raised at once;
        ``timeout`` bounds each attempt in seconds; ``app_info`` ("shop/1.2")
        goes first in the User-Agent.
        """
        if not api_key:
            raise ValueError("payd: an API key is required")
        self._key = api_key
        self._base_url = base_url.rstrip("/")
        self._max_retries = max(max_retries, 0)
        self._min_backoff = min_backoff
        self._max_backoff = max_backoff
        self._max_retry_wait = max_retry_wait
        self._timeout = timeout
        self._sleep = sleep
        ua = f"payd-python/{__version__} (Python {platform.python_version()})"
        self._user_agent = f"{app_info} {ua}" if app_info else ua
        self._opener = urllib.request.build_opener(_NoRedirect)

    @property
    def livemode(self) -> bool:
        """True for a live key (sk_live_, pk_live_)."""
        return self._key.startswith(("sk_live_", "pk_live_"))

    def _backoff(self, attempt: int) -> float:
        # Doubled per attempt, capped, jittered into the upper half of its
        # step so that many clients do not retry in step.
        d = min(self._min_backoff * (2**attempt), self._max_backoff)
        return d / 2 + random.random() * (d / 2)

    def _url(self, op: Operation, path: Mapping[str, str], query: Optional[Mapping[str, Any]]) -> str:
        p = op.path
        for name in op.path_params:
            v = path.get(name)
            if not isinstance(v, str) or v == "":
                raise TypeError(f"payd: {op.name} needs {name}")
            p = p.replace("{" + name + "}", urllib.parse.quote(v, safe=""))
        pairs = []
        for k, v in (query or {}).items():
            if v is None or v == "":
                continue
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, (list, tuple)):
                v = ",".join(str(x) for x in v)
            pairs.append((k, str(v)))
        qs = urllib.parse.urlencode(pairs)
        return self._base_url + p + ("?" + qs if qs else "")

    def _send(
        self,
        op: Operation,
        url: str,
        data: Optional[bytes],
        content_type: Optional[str],
        idempotency_key: Optional[str],
        headers: Optional[Mapping[str, str]],
        accept: str,
        stream: bool = False,
    ) -> Tuple[http.client.HTTPResponse, bytes]:
        """Sends one call, retrying as the policy allows, and returns a 2xx answer.

        The body is read here (so a connection dropped mid-answer is retried
        too), except for streams, whose body is left to EventStream.
        """
        if self._key.startswith("pk_") and op.name != "confirmPaymentIntent" and not op.public:
            raise PermissionDeniedError(
                f"payd: a publishable key can only confirm payment intents, not call {op.name}",
                status=0,
                type="permission_error",
                code="permission_denied",
            )
        h: Dict[str, str] = {
            "Authorization": f"Bearer {self._key}",
            "Accept": accept,
            "User-Agent": self._user_agent,
        }
        if op.method == "POST":
            if content_type:
                h["Content-Type"] = content_type
            # One key per logical call, made before the first attempt and sent
            # unchanged on every retry: payd runs the call at most once.
            h["Idempotency-Key"] = idempotency_key or f"payd-python-{uuid.uuid4()}"
        h.update(headers or {})
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, headers=h, method=op.method)
            try:
                # For a stream the timeout bounds each read: payd sends a
                # keep-alive every 15 s, so silence that long means the
                # connection is gone.
                res = self._opener.open(req, timeout=self._timeout)
                body = b"" if stream else res.read()
                if not stream:
                    res.close()
                return res, body
            except urllib.error.HTTPError as e:
                try:
                    text = e.read()
                except _NETWORK_ERRORS:
                    text = b""
                finally:
                    e.close()
                err = _error_from(e.code, e.headers, text)
                wait = self._retry_wait(err, e.headers, attempt)
                if wait is None:
                    raise err from None
            except _NETWORK_ERRORS as e:
                if attempt >= self._max_retries:
                    raise PaydNetworkError(
                        f"payd: {op.method} {op.path}: no answer after {attempt + 1} attempt(s): {e}",
                        attempt + 1,
                    ) from e
                wait = self._backoff(attempt)
            self._sleep(wait)
            attempt += 1

    def _retry_wait(self, e: PaydError, headers: Any, attempt: int) -> Optional[float]:
        if attempt >= self._max_retries:
            return None
        # 429, and 503 database_unavailable (payd could not reach its database
        # and did nothing): after Retry-After.
        if e.status == 429 or (e.status == 503 and e.code == "database_unavailable"):
            ra = parse_retry_after(headers.get("Retry-After") if headers is not None else None)
            if ra is None:
                return self._backoff(attempt)
            return None if ra > self._max_retry_wait else ra
        # The first request with this key is still running: its answer will be
        # replayed once it ends.
        if e.status == 409 and e.code == "idempotency_key_in_use":
            return self._backoff(attempt)
        return None

    def _request(
        self,
        op: Operation,
        path: Mapping[str, str],
        body: Any,
        query: Optional[Mapping[str, Any]],
        *,
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Any:
        data = None
        if op.method == "POST":
            data = json.dumps({} if body is None else body, separators=(",", ":")).encode("utf-8")
        _, text = self._send(op, self._url(op, path, query), data, "application/json", idempotency_key, headers, "application/json")
        return json.loads(text) if text else None

    def _paginate(
        self,
        op: Operation,
        path: Mapping[str, str],
        query: Optional[Mapping[str, Any]],
        cursor: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Iterator[Any]:
        q: Dict[str, Any] = dict(query or {})
        backward = bool(q.get("ending_before"))
        while True:
            page = self._request(op, path, None, q, headers=headers)
            data = page.get("data") or []
            for item in data:
                yield item
            if not page.get("has_more") or not data:
                return
            edge = data[0] if backward else data[-1]
            q["ending_before" if backward else "starting_after"] = edge[cursor]

    def _open_stream(
        self,
        op: Operation,
        path: Mapping[str, str],
        body: Any,
        query: Optional[Mapping[str, Any]],
        *,
        headers: Optional[Mapping[str, str]] = None,
    ) -> "EventStream":
        res, _ = self._send(op, self._url(op, path, query), None, None, None, headers, "text/event-stream", stream=True)
        return EventStream(res)

    def request_raw(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        *,
        content_type: str = "application/json",
        accept: str = "application/json",
        idempotency_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> RawResponse:
        """Sends a body other than JSON (a bulk payout CSV, a pacs.008 XML
        message) with the same keys, retries and errors as every method."""
        op = Operation(name=method + " " + path, method=method.upper(), path=path, path_params=(), idempotency_required=False, public=False, also_decode=())
        data = body if op.method == "POST" else None
        res, text = self._send(op, self._base_url + path, data, content_type, idempotency_key, headers, accept)
        return RawResponse(status=res.status, headers=dict(res.headers.items()), body=text)


def _error_from(status: int, headers: Any, text: bytes) -> PaydError:
    body: Any
    try:
        body = json.loads(text) if text else None
    except ValueError:
        body = text.decode("utf-8", "replace")
    request_id = headers.get("Request-Id") if headers is not None else None
    env = body.get("error") if isinstance(body, dict) else None
    if isinstance(env, dict):
        return _error(
            str(env.get("message") or ""),
            status=status,
            type=str(env.get("type") or "api_error"),
            code=str(env.get("code") or ""),
            param=env.get("param") or None,
            request_id=env.get("request_id") or request_id,
            rows=env.get("rows"),
            body=body,
        )
    last = body.get("last_error") if isinstance(body, dict) else None
    if isinstance(last, dict):
        # A provider's refusal of a payment (402): the body is the canceled intent.
        return ProviderError(
            str(last.get("message") or ""),
            status=status,
            type="provider_error",
            code=str(last.get("code") or ""),
            request_id=request_id,
            body=body,
        )
    return APIError("answer without an error envelope", status=status, type="api_error", code=str(status), request_id=request_id, body=body)


class EventStream:
    """Server-sent events, as ``payd listen`` reads them.

    Iterate it (``for event in stream``) or call next_event(); ``last_id`` is
    the id of the last event read, to resume with ``last_event_id`` after a
    reconnect. Close it when done (or use ``with``): payd keeps only a few
    open per key.
    """

    def __init__(self, res: http.client.HTTPResponse) -> None:
        self._res = res
        #: The id of the last event read.
        self.last_id: Optional[str] = None

    def next_event(self) -> Optional[Dict[str, Any]]:
        """The next event, or None when the stream ended."""
        data: List[str] = []
        ev_id: Optional[str] = None
        while True:
            try:
                raw = self._res.readline()
            except _NETWORK_ERRORS as e:
                self.close()
                raise PaydNetworkError(f"payd: the event stream broke: {e}; reconnect with last_event_id={self.last_id}", 1) from e
            if not raw:
                return None
            line = raw.decode("utf-8").rstrip("\r\n")
            if line == "":
                if data:
                    if ev_id:
                        self.last_id = ev_id
                    return json.loads("\n".join(data))  # type: ignore[no-any-return]
                ev_id = None
                continue
            if line.startswith("data:"):
                data.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])
            elif line.startswith("id:"):
                ev_id = line[3:].strip()

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        try:
            while True:
                ev = self.next_event()
                if ev is None:
                    return
                yield ev
        finally:
            self.close()

    def close(self) -> None:
        """Ends the stream."""
        self._res.close()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
