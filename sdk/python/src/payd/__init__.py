"""payd: the payd API for Python back offices.

    from payd import Payd

    payd = Payd(os.environ["PAYD_API_KEY"], base_url="http://127.0.0.1:8080")
    pi = payd.create_payment_intent({"amount": 1500, "currency": "DJF", "provider": "bank_a",
                                     "customer_msisdn": "+25377123456"})

One method per operation of the API (named after its operationId in snake
case), each POST with an Idempotency-Key kept across retries, list iterators
(``all_*``), typed exceptions, and webhook verification (``payd.webhook``).
Standard library only.
"""

from ._core import (
    DEFAULT_BASE_URL,
    APIError,
    AuthenticationError,
    EventStream,
    IdempotencyError,
    InvalidRequestError,
    Operation,
    PaydError,
    PaydException,
    PaydNetworkError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    RawResponse,
    parse_retry_after,
)
from . import _generated
from ._generated import *  # noqa: F401,F403  (the models, OPERATIONS)
from ._generated import GeneratedClient
from ._version import __version__
from .webhook import VerifiedDelivery, WebhookVerificationError, signature_header, verify_webhook


class Payd(GeneratedClient):
    """A client for one payd and one API key (see BaseClient for the options)."""


__all__ = _generated.__all__ + [
    "APIError",
    "AuthenticationError",
    "DEFAULT_BASE_URL",
    "IdempotencyError",
    "InvalidRequestError",
    "PermissionDeniedError",
    "ProviderError",
    "RateLimitError",
    "EventStream",
    "Operation",
    "Payd",
    "PaydError",
    "PaydException",
    "PaydNetworkError",
    "RawResponse",
    "VerifiedDelivery",
    "WebhookVerificationError",
    "__version__",
    "parse_retry_after",
    "signature_header",
    "verify_webhook",
]
