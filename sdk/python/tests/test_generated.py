"""The generated module is consistent: every annotation it writes names a
type that exists (resolved with typing.get_type_hints, as a type checker or a
validator would), and the operation table and the methods agree."""

from __future__ import annotations

import inspect
import typing
import unittest

import payd
from payd import _generated


class GeneratedTest(unittest.TestCase):
    def test_every_type_resolves(self) -> None:
        n = 0
        for name in _generated.__all__:
            obj = getattr(_generated, name)
            if isinstance(obj, type) and issubclass(obj, dict) and hasattr(obj, "__annotations__"):
                hints = typing.get_type_hints(obj)
                self.assertTrue(hints or name.endswith("Request"), name)
                n += 1
        self.assertGreater(n, 50)

    def test_every_method_resolves(self) -> None:
        for name, op in payd.OPERATIONS.items():
            method = getattr(payd.Payd, name)
            hints = typing.get_type_hints(method, vars(_generated))
            self.assertIn("return", hints, name)
            params = list(inspect.signature(method).parameters)
            self.assertEqual(params[1 : 1 + len(op.path_params)], list(op.path_params), name)
            self.assertEqual("idempotency_key" in params, op.method == "POST", name)

    def test_required_and_optional_keys(self) -> None:
        self.assertIn("id", payd.PaymentIntent.__required_keys__)
        self.assertIn("currency", payd.PaymentIntentCreate.__required_keys__)
        self.assertIn("amount", payd.PaymentIntentCreate.__optional_keys__)
        self.assertIn("created[gte]", payd.ListPaymentIntentsParams.__optional_keys__)


if __name__ == "__main__":
    unittest.main()
