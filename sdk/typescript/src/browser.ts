// The browser entry: what a checkout page may do with a publishable key —
// confirm a payment intent with the customer's SMS code. Secret keys are
// refused here, so they cannot end up in a page.

import type { PaymentIntent } from "./generated.js";
import type { ClientOptions, RequestOptions } from "./core.js";
import { Payd } from "./index.js";

export { PaydError, PaydNetworkError } from "./core.js";
export type { PaymentIntent } from "./generated.js";

/** Confirms intent `id` with `otp`, using a publishable key (pk_test_... or pk_live_...). */
export async function confirmPaymentIntent(
  publishableKey: string,
  id: string,
  otp: string,
  options: ClientOptions & RequestOptions = {},
): Promise<PaymentIntent> {
  if (!publishableKey.startsWith("pk_")) {
    throw new Error("payd: the browser entry takes a publishable key (pk_...) only");
  }
  const { idempotencyKey, headers, signal, ...clientOptions } = options;
  return new Payd(publishableKey, clientOptions).confirmPaymentIntent(id, { otp }, { idempotencyKey, headers, signal });
}
