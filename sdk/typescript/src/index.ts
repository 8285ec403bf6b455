// @payd/payd: the payd API for Node and browsers.
//
//   import { Payd } from "@payd/payd";
//   const payd = new Payd(process.env.PAYD_API_KEY!, { baseURL: "http://127.0.0.1:8080" });
//   const pi = await payd.createPaymentIntent({ amount: 1500, currency: "DJF", provider: "bank_a", customer_msisdn: "+25377123456" });
//
// In a browser only a publishable key (pk_...) is accepted, and only
// confirmPaymentIntent may be called with it (see ./browser).

import { GeneratedClient } from "./generated.js";

export * from "./generated.js";
export { VERSION, PaydError, PaydNetworkError, EventStream, parseRetryAfter, isBrowser } from "./core.js";
export type { ClientOptions, RequestOptions, List, OperationSpec } from "./core.js";
export { verifyWebhook, signatureHeader, WebhookVerificationError, DEFAULT_TOLERANCE_SECONDS } from "./webhook.js";
export type { VerifiedDelivery } from "./webhook.js";

/** A client for one payd and one API key. */
export class Payd extends GeneratedClient {
  /** True for a live key (sk_live_, pk_live_). */
  get livemode(): boolean {
    return this.key.startsWith("sk_live_") || this.key.startsWith("pk_live_");
  }
}

export default Payd;
