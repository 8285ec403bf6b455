// payd's five-minute walk-through with the TypeScript SDK (@payd/payd):
// create a payment intent, confirm it with the sandbox SMS code, receive
// and verify the signed webhook, pay out part of the proceeds, refund part
// of the payment.
//
//   go run ./cmd/payd serve                                   # prints the demo secret key
//   (cd sdk/typescript && npm ci && npm run build)
//   cd examples/typescript && npm ci && npm run build
//   PAYD_API_KEY=sk_test_... npm start
//
// PAYD_URL (default http://127.0.0.1:8080) points at another payd. The
// example receives webhooks on 127.0.0.1 (a random port) and registers that
// address as a test-mode endpoint for the length of the run.

import { createServer, type IncomingMessage } from "node:http";
import { pathToFileURL } from "node:url";
import { Payd, PaydError, verifyWebhook, type VerifiedDelivery } from "@payd/payd";

export async function walkthrough(payd: Payd, say: (line: string) => void = console.log): Promise<void> {
  // 1. A webhook receiver: verify each delivery on the raw body before
  // trusting anything in it.
  let secret = "";
  const waiting: VerifiedDelivery[] = [];
  const receiver = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      waiting.push(await verifyWebhook(secret, req.headers as Record<string, string>, new Uint8Array(Buffer.concat(chunks))));
      res.writeHead(200).end(); // answer quickly; payd retries anything else
    } catch {
      res.writeHead(400).end("signature verification failed");
    }
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as { port: number }).port;

  const awaitEvent = async (type: string, id: string): Promise<VerifiedDelivery> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const d = waiting.find((x) => x.eventType === type && x.event.data.id === id);
      if (d) return d;
      if (Date.now() > deadline) throw new Error(`no ${type} webhook for ${id} within a minute`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const endpoint = await payd.createWebhookEndpoint({
    url: `http://127.0.0.1:${port}/webhooks`,
    enabled_events: ["payment_intent.succeeded", "payout.succeeded", "refund.succeeded"],
    description: "walk-through",
  });
  secret = endpoint.secret; // shown only in this answer: keep it in your secrets store
  say(`webhook endpoint ${endpoint.id} -> ${endpoint.url}`);
  try {
    // 2. A payment intent. The SDK sends an Idempotency-Key and keeps it
    // across its own retries; your order's reference makes a retry after a
    // crash of your process safe too.
    const order = `order-${crypto.randomUUID().slice(0, 8)}`;
    let pi = await payd.createPaymentIntent(
      { amount: 1500, currency: "DJF", provider: "bank_a", customer_msisdn: "+25377123456", description: `Order ${order}`, metadata: { order } },
      { idempotencyKey: order },
    );
    say(`payment intent ${pi.id}: ${pi.status} (next action ${pi.next_action?.type})`);

    // 3. Confirm with the customer's code (always 123456 in the sandbox). In a
    // browser, confirmPaymentIntent from "@payd/payd/browser" does this with
    // the publishable key.
    try {
      pi = await payd.confirmPaymentIntent(pi.id, { otp: "123456" });
    } catch (e) {
      if (e instanceof PaydError && e.code === "otp_invalid") throw new Error("wrong code: the intent is canceled, create another");
      throw e;
    }
    say(`payment intent ${pi.id}: ${pi.status}, ${pi.amount_captured_minor} ${pi.currency} captured`);

    // 4. The signed webhook: fulfil the order here, not on the redirect.
    let d = await awaitEvent("payment_intent.succeeded", pi.id);
    say(`webhook ${d.eventId} ${d.eventType} for ${d.event.data.id} (signature verified)`);

    // 5. Pay out part of the proceeds to a wallet.
    const po = await payd.createPayout({
      amount_minor: 1000, currency: "DJF", provider: "wallet_a", recipient_msisdn: "+25377654321", recipient_name: "Amina Hassan", reference: `payout-${order}`,
    });
    say(`payout ${po.id}: ${po.status}`);
    d = await awaitEvent("payout.succeeded", po.id);
    say(`webhook ${d.eventId} ${d.eventType} for ${d.event.data.id} (signature verified)`);

    // 6. Refund part of the payment.
    const re = await payd.createRefund({ payment_intent: pi.id, amount_minor: 300, reason: "requested_by_customer" });
    say(`refund ${re.id}: ${re.status}`);
    if (re.status !== "succeeded") {
      d = await awaitEvent("refund.succeeded", re.id);
      say(`webhook ${d.eventId} ${d.eventType} for ${d.event.data.id} (signature verified)`);
    }

    // 7. The balance, and the intents so far (the iterator fetches pages as needed).
    for (const b of (await payd.getBalance()).balances) {
      say(`balance ${b.currency}: available ${b.available_minor}, reserved ${b.reserved_minor}, pending ${b.pending_minor}`);
    }
    let n = 0;
    for await (const _ of payd.allPaymentIntents({ status: "succeeded" })) n++;
    say(`${n} succeeded payment intent(s)`);
  } finally {
    await payd.deleteWebhookEndpoint(endpoint.id).catch(() => undefined);
    receiver.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const key = process.env.PAYD_API_KEY;
  if (!key) {
    console.error("set PAYD_API_KEY to a test secret key (sk_test_...): `payd serve` prints the demo merchant's");
    process.exit(1);
  }
  walkthrough(new Payd(key, { baseURL: process.env.PAYD_URL ?? "http://127.0.0.1:8080" })).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
