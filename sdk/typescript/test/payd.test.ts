// The SDK against a real `payd serve` (see payd-server.ts): one test per
// resource family, in order, sharing one server.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { Payd, PaydError, verifyWebhook, type PaymentIntent, type VerifiedDelivery } from "../src/index.js";
import { confirmPaymentIntent } from "../src/browser.js";
import { startPayd, type RunningPayd } from "./payd-server.js";

let srv: RunningPayd;
let payd: Payd;
let paid: PaymentIntent;

before(async () => {
  srv = await startPayd();
  payd = new Payd(srv.secretKeys[0], { baseURL: srv.url });
});
after(async () => {
  await srv?.stop();
});

test("health", async () => {
  assert.ok(await payd.getHealth());
  assert.ok(await payd.getReadiness());
});

test("payment intents: create, confirm with the publishable key, refusals, idempotency, iteration", async () => {
  const pi = await payd.createPaymentIntent({
    amount: 1500, currency: "DJF", provider: "bank_a", customer_msisdn: "+25377123456", description: "Order 1001", metadata: { order: "1001" },
  });
  assert.equal(pi.status, "requires_action");
  assert.equal(pi.next_action?.type, "collect_otp");

  const pk = new Payd(srv.publishableKey, { baseURL: srv.url });
  await assert.rejects(pk.getBalance(), (e: unknown) => e instanceof PaydError && e.code === "permission_denied");
  const confirmed = await confirmPaymentIntent(srv.publishableKey, pi.id, "123456", { baseURL: srv.url });
  assert.equal(confirmed.status, "succeeded");
  assert.equal(confirmed.amount_captured_minor, 1500);
  paid = await payd.getPaymentIntent(pi.id);
  assert.equal(paid.status, "succeeded");

  await assert.rejects(
    payd.createPaymentIntent({ amount: 200, currency: "DJF", provider: "wallet_a", customer_msisdn: "+25377123456" }, { headers: { "X-Service-Scenario": "insufficient_funds" } }),
    (e: unknown) => e instanceof PaydError && e.status === 402 && e.code === "insufficient_funds" && (e.body as PaymentIntent).status === "canceled",
  );

  const key = `order-${crypto.randomUUID()}`;
  const params = { amount_minor: 700, currency: "DJF" as const, provider: "bank_a" as const, customer_msisdn: "+25377123456" };
  const first = await payd.createPaymentIntent(params, { idempotencyKey: key });
  const again = await payd.createPaymentIntent(params, { idempotencyKey: key });
  assert.equal(again.id, first.id);
  await assert.rejects(payd.createPaymentIntent({ ...params, amount_minor: 701 }, { idempotencyKey: key }), (e: unknown) => e instanceof PaydError && e.status === 422 && e.code === "idempotency_key_reused");
  await assert.rejects(payd.createPaymentIntent({ currency: "DJF", provider: "bank_a" }), (e: unknown) => e instanceof PaydError && e.status === 400 && !!e.param && e.requestId?.startsWith("req_") === true);
  await assert.rejects(payd.getPaymentIntent("pi_missing"), (e: unknown) => e instanceof PaydError && e.status === 404 && e.code === "resource_missing");

  const ids: string[] = [];
  for await (const it of payd.allPaymentIntents({ limit: 2 })) ids.push(it.id);
  assert.equal(ids.length, 3);
  assert.equal(ids[ids.length - 1], pi.id);
});

test("refunds", async () => {
  const re = await payd.createRefund({ payment_intent: paid.id, amount_minor: 500, reason: "requested_by_customer" });
  assert.equal(re.amount_minor, 500);
  assert.equal((await payd.getRefund(re.id)).id, re.id);
  const page = await payd.listRefunds({ payment_intent: paid.id });
  assert.ok(page.data.some((r) => r.id === re.id));
});

test("balance, top-up, balance transactions, settlement report, settings", async () => {
  await payd.createSandboxTopup({ currency: "DJF", amount_minor: 100000 });
  const bal = await payd.getBalance();
  assert.ok(bal.balances.some((b) => b.currency === "DJF" && b.available > 0));
  let n = 0;
  for await (const bt of payd.allBalanceTransactions({ limit: 1 })) {
    assert.match(bt.id, /^txn_/);
    n++;
  }
  assert.ok(n >= 2, `${n} balance transactions`);
  const rep = await payd.getSettlementReport({ date: new Date().toISOString().slice(0, 10) });
  assert.equal(rep.object, "settlement_report");
  const res = await payd.updateSettings({ approval_threshold_minor: 1_000_000 });
  assert.equal(res.object, "settings");
  const loosen = await payd.updateSettings({ approval_threshold_minor: null });
  assert.equal(loosen.object, "settings_change");
  const logs = await payd.listRequestLogs();
  assert.equal(logs.object, "list");
});

test("payouts and a bulk batch", async () => {
  const po = await payd.createPayout({ amount_minor: 2500, currency: "DJF", provider: "wallet_a", recipient_msisdn: "+25377111222" });
  assert.equal(po.amount, 2500);
  assert.equal((await payd.getPayout(po.id)).id, po.id);
  const batch = await payd.createPayoutBatch({
    items: [
      { amount_minor: 100, currency: "DJF", provider: "wallet_a", recipient_msisdn: "+25377111333", reference: "r1" },
      { amount_minor: 200, currency: "DJF", provider: "wallet_a", recipient_msisdn: "+25377111444", reference: "r2" },
    ],
  });
  assert.match(batch.id, /^po_bulk_/);
  let n = 0;
  for await (const _ of payd.allPayouts({ limit: 1 })) n++;
  assert.equal(n, 3);
});

test("webhooks: a signed delivery reaches a local receiver and verifies", async () => {
  let secret = "";
  const deliveries: VerifiedDelivery[] = [];
  const failures: unknown[] = [];
  const receiver = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      deliveries.push(await verifyWebhook(secret, req.headers as Record<string, string>, new Uint8Array(Buffer.concat(chunks))));
      res.writeHead(200).end();
    } catch (e) {
      failures.push(e);
      res.writeHead(400).end();
    }
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  try {
    const port = (receiver.address() as { port: number }).port;
    const we = await payd.createWebhookEndpoint({ url: `http://127.0.0.1:${port}/webhooks`, enabled_events: ["*"], description: "ts sdk test" });
    secret = we.secret;
    const ev = await payd.triggerSandboxEvent({ event_type: "payment_intent.succeeded" });
    const deadline = Date.now() + 30_000;
    while (!deliveries.some((d) => d.eventId === ev.id)) {
      if (Date.now() > deadline) assert.fail("no delivery in 30s");
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(failures, []);
    assert.equal((await payd.getEvent(ev.id)).type, "payment_intent.succeeded");
    await payd.updateWebhookEndpoint(we.id, { disabled: true });
    assert.equal((await payd.getWebhookEndpoint(we.id)).status, "disabled");
    const del = await payd.deleteWebhookEndpoint(we.id);
    assert.equal(del.deleted, true);
  } finally {
    receiver.close();
  }

  const ac = new AbortController();
  const stream = await payd.streamEvents({ types: "payout.created" }, { signal: ac.signal });
  try {
    const po = await payd.createPayout({ amount_minor: 10, currency: "DJF", provider: "wallet_a", recipient_msisdn: "+25377111666" });
    const ev = await stream.next();
    assert.equal(ev?.type, "payout.created");
    assert.equal(ev?.data.id, po.id);
  } finally {
    await stream.close();
    ac.abort();
  }
});

test("terminals", async () => {
  const term = await payd.createTerminal({ serial_number: `SN-${crypto.randomUUID().slice(0, 8)}`, model: "countertop" });
  assert.equal(term.status, "inactive");
  assert.equal((await payd.activateTerminal(term.id, {})).status, "active");
  await assert.rejects(payd.activateTerminal(term.id, {}), (e: unknown) => e instanceof PaydError && e.status === 409 && e.code === "invalid_state");
  assert.equal((await payd.listTerminals()).data.length, 1);
  assert.equal((await payd.deleteTerminal(term.id)).deleted, true);
});

test("billing: customer, subscription, invoice, test clock", async () => {
  const clock = await payd.createTestClock({ frozen_time: Date.UTC(2026, 0, 1) / 1000, name: "ts" });
  const cus = await payd.createCustomer({ name: "Hodan Ali", email: "hodan@example.com", test_clock: clock.id, default_payment: { provider: "wallet_a", customer_msisdn: "+25377123456" } });
  const sub = await payd.createSubscription({ customer: cus.id, currency: "DJF", interval: "month", items: [{ description: "Plan", amount_minor: 1000 }] });
  assert.equal((await payd.getSubscription(sub.id)).customer, cus.id);
  const inv = await payd.createInvoice({ customer: cus.id, currency: "DJF", lines: [{ description: "Setup", amount_minor: 500 }], collection_method: "send_invoice", days_until_due: 7 });
  assert.equal(inv.status, "draft");
  assert.equal((await payd.finalizeInvoice(inv.id)).status, "open");
  assert.equal((await payd.voidInvoice(inv.id)).status, "void");
  assert.equal((await payd.cancelSubscription(sub.id, {})).status, "canceled");
  assert.equal((await payd.deleteCustomer(cus.id)).deleted, true);
});
