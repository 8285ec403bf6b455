// The transport without a server: a scripted fetch records every attempt.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Payd, PaydError, PaydNetworkError, parseRetryAfter, verifyWebhook, signatureHeader, WebhookVerificationError } from "../src/index.js";
import { confirmPaymentIntent } from "../src/browser.js";

interface Call {
  url: string;
  init: RequestInit;
}

const intent = {
  id: "pi_1", object: "payment_intent", status: "succeeded", amount_minor: 1500, amount_captured_minor: 1500,
  amount_refunded_minor: 0, refunded: false, currency: "DJF", provider: "bank_a", customer_msisdn: null, description: null,
  metadata: {}, return_url: null, next_action: null, last_error: null, payment_method_details: null, livemode: false,
  created_at: "2026-11-21T21:03:33Z", succeeded_at: "2026-11-21T21:03:34Z", canceled_at: null,
};

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", "Request-Id": "req_1", ...headers } });
}

function errorBody(code: string, type = "invalid_request_error", param?: string) {
  return { error: { type, code, message: `${code} message`, param, request_id: "req_1" } };
}

function scripted(answers: ((call: Call) => Response | Promise<Response>)[]) {
  const calls: Call[] = [];
  const waits: number[] = [];
  const fetchImpl = (async (url: string | URL | Request, init?: RequestInit) => {
    const call = { url: String(url), init: init ?? {} };
    calls.push(call);
    const a = answers[Math.min(calls.length - 1, answers.length - 1)];
    return a(call);
  }) as typeof fetch;
  const sleep = async (ms: number) => {
    waits.push(ms);
  };
  return { calls, waits, fetchImpl, sleep };
}

const header = (c: Call, name: string) => (c.init.headers as Record<string, string>)[name];

test("one idempotency key per call, kept across its retries", async () => {
  const s = scripted([
    () => {
      throw new TypeError("fetch failed");
    },
    () => json(409, errorBody("idempotency_key_in_use", "idempotency_error")),
    () => json(201, intent),
  ]);
  const payd = new Payd("sk_test_x", { baseURL: "http://payd.test", fetch: s.fetchImpl, sleep: s.sleep });
  const pi = await payd.createPaymentIntent({ amount: 1500, currency: "DJF", provider: "bank_a" });
  assert.equal(pi.id, "pi_1");
  assert.equal(s.calls.length, 3);
  const key = header(s.calls[0], "Idempotency-Key");
  assert.match(key, /^payd-node-[0-9a-f-]{36}$/);
  for (const c of s.calls) {
    assert.equal(header(c, "Idempotency-Key"), key);
    assert.equal(c.init.body, s.calls[0].init.body);
  }
  assert.equal(s.waits.length, 2);
  assert.ok(s.waits[0] >= 125 && s.waits[0] <= 250, `first wait ${s.waits[0]}`);
  assert.ok(s.waits[1] >= 250 && s.waits[1] <= 500, `second wait ${s.waits[1]}`);

  await payd.createPaymentIntent({ amount: 1500, currency: "DJF", provider: "bank_a" }, { idempotencyKey: "order-1001" });
  assert.equal(header(s.calls[3], "Idempotency-Key"), "order-1001");
  assert.equal(header(s.calls[3], "Authorization"), "Bearer sk_test_x");
  assert.match(header(s.calls[3], "User-Agent"), /^payd-node\/\d+\.\d+\.\d+$/);
});

test("429 waits as Retry-After says; a longer wait is thrown", async () => {
  const s = scripted([
    () => json(429, errorBody("rate_limited", "rate_limit_error"), { "Retry-After": "2" }),
    () => json(200, { object: "balance", livemode: false, balances: [] }),
  ]);
  const payd = new Payd("sk_test_x", { fetch: s.fetchImpl, sleep: s.sleep });
  const bal = await payd.getBalance();
  assert.equal(bal.object, "balance");
  assert.deepEqual(s.waits, [2000]);
  assert.equal(header(s.calls[0], "Idempotency-Key"), undefined);

  const t = scripted([() => json(429, errorBody("rate_limited", "rate_limit_error"), { "Retry-After": "120" })]);
  const p2 = new Payd("sk_test_x", { fetch: t.fetchImpl, sleep: t.sleep, maxRetryWaitMs: 10_000 });
  await assert.rejects(p2.getBalance(), (e: unknown) => e instanceof PaydError && e.status === 429 && e.code === "rate_limited");
  assert.equal(t.calls.length, 1);
});

test("503 database_unavailable is retried with the same key after Retry-After; another 503 is not", async () => {
  const s = scripted([
    () => json(503, errorBody("database_unavailable", "api_error"), { "Retry-After": "1" }),
    () => json(201, { id: "pi_1", object: "payment_intent", status: "requires_action" }),
  ]);
  const payd = new Payd("sk_test_x", { fetch: s.fetchImpl, sleep: s.sleep });
  await payd.createPaymentIntent({ amount: 1500, currency: "DJF", provider: "bank_a" });
  assert.deepEqual(s.waits, [1000]);
  assert.equal(s.calls.length, 2);
  assert.equal(header(s.calls[1], "Idempotency-Key"), header(s.calls[0], "Idempotency-Key"));
  assert.equal(s.calls[1].init.body, s.calls[0].init.body);

  const t = scripted([() => json(503, errorBody("provider_unavailable", "provider_error"), { "Retry-After": "1" })]);
  const p2 = new Payd("sk_test_x", { fetch: t.fetchImpl, sleep: t.sleep });
  await assert.rejects(p2.getBalance(), (e: unknown) => e instanceof PaydError && e.status === 503 && e.code === "provider_unavailable");
  assert.equal(t.calls.length, 1);
});

test("errors carry the envelope and are not retried", async () => {
  for (const status of [400, 401, 404, 409, 422, 500]) {
    const s = scripted([() => json(status, errorBody("some_code", "invalid_request_error", "amount"))]);
    const payd = new Payd("sk_test_x", { fetch: s.fetchImpl, sleep: s.sleep });
    await assert.rejects(payd.createPayout({ currency: "DJF", provider: "wallet_a" }), (e: unknown) => {
      assert.ok(e instanceof PaydError);
      assert.equal(e.status, status);
      assert.equal(e.code, "some_code");
      assert.equal(e.param, "amount");
      assert.equal(e.requestId, "req_1");
      assert.equal(e.type, "invalid_request_error");
      return true;
    });
    assert.equal(s.calls.length, 1);
  }
});

test("a refused payment throws with the canceled intent as body", async () => {
  const refused = { ...intent, status: "canceled", last_error: { code: "insufficient_funds", message: "too low", provider: "wallet_a" } };
  const s = scripted([() => json(402, refused)]);
  const payd = new Payd("sk_test_x", { fetch: s.fetchImpl, sleep: s.sleep });
  await assert.rejects(
    payd.createPaymentIntent({ amount: 2, currency: "DJF", provider: "wallet_a" }, { headers: { "X-Service-Scenario": "insufficient_funds" } }),
    (e: unknown) => e instanceof PaydError && e.status === 402 && e.code === "insufficient_funds" && (e.body as { status: string }).status === "canceled",
  );
  assert.equal(header(s.calls[0], "X-Service-Scenario"), "insufficient_funds");
});

test("network errors give up after the retries", async () => {
  const s = scripted([
    () => {
      throw new TypeError("fetch failed");
    },
  ]);
  const payd = new Payd("sk_test_x", { fetch: s.fetchImpl, sleep: s.sleep, maxRetries: 2 });
  await assert.rejects(payd.getBalance(), (e: unknown) => e instanceof PaydNetworkError && e.attempts === 3);
  assert.equal(s.calls.length, 3);
});

test("iterators follow the cursor and stop when the loop does", async () => {
  const ids = ["pi_7", "pi_6", "pi_5", "pi_4", "pi_3"];
  const s = scripted([
    (c) => {
      const u = new URL(c.url);
      const after = u.searchParams.get("starting_after");
      const start = after ? ids.indexOf(after) + 1 : 0;
      const page = ids.slice(start, start + 2);
      return json(200, { object: "list", data: page.map((id) => ({ ...intent, id })), has_more: start + 2 < ids.length });
    },
  ]);
  const payd = new Payd("sk_test_x", { fetch: s.fetchImpl, sleep: s.sleep });
  const got: string[] = [];
  for await (const pi of payd.allPaymentIntents({ limit: 2, status: "succeeded" })) got.push(pi.id);
  assert.deepEqual(got, ids);
  assert.equal(s.calls.length, 3);
  assert.deepEqual(
    s.calls.map((c) => new URL(c.url).searchParams.get("starting_after")),
    [null, "pi_6", "pi_4"],
  );
  assert.equal(new URL(s.calls[0].url).searchParams.get("status"), "succeeded");
  const before = s.calls.length;
  for await (const pi of payd.allPaymentIntents({ limit: 2 })) {
    assert.equal(pi.id, "pi_7");
    break;
  }
  assert.equal(s.calls.length, before + 1);
});

test("a publishable key may only confirm", async () => {
  const s = scripted([() => json(200, intent)]);
  const payd = new Payd("pk_test_x", { fetch: s.fetchImpl, sleep: s.sleep });
  await assert.rejects(payd.getBalance(), (e: unknown) => e instanceof PaydError && e.code === "permission_denied" && e.status === 0);
  assert.equal(s.calls.length, 0);
  const pi = await confirmPaymentIntent("pk_test_x", "pi_1", "123456", { fetch: s.fetchImpl, baseURL: "http://payd.test" });
  assert.equal(pi.id, "pi_1");
  assert.equal(s.calls[0].url, "http://payd.test/v1/payment_intents/pi_1/confirm");
  assert.equal(s.calls[0].init.body, JSON.stringify({ otp: "123456" }));
  await assert.rejects(confirmPaymentIntent("sk_test_x", "pi_1", "123456"), /publishable key/);
});

test("in a browser a secret key is refused", () => {
  const g = globalThis as Record<string, unknown>;
  g.window = {};
  g.document = {};
  try {
    assert.throws(() => new Payd("sk_test_x"), /only a publishable key/);
    assert.doesNotThrow(() => new Payd("pk_test_x"));
  } finally {
    delete g.window;
    delete g.document;
  }
});

test("Retry-After in seconds or as a date", () => {
  const now = Date.parse("2026-11-26T05:00:00Z");
  assert.equal(parseRetryAfter("3", now), 3000);
  assert.equal(parseRetryAfter(new Date(now + 7000).toUTCString(), now), 7000);
  assert.equal(parseRetryAfter("soon", now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
});

test("webhook signatures: the Go package's scheme", async () => {
  const secret = "whsec_test";
  const body = JSON.stringify({ id: "evt_1", object: "event", type: "payout.created", created_at: "2026-11-26T05:00:00Z", livemode: false, data: { id: "po_1", object: {} } });
  const t = new Date("2026-11-26T05:00:00Z");
  const sig = await signatureHeader(secret, t, "evt_1", body);
  const headers = { "Service-Signature": sig, "Service-Event-Id": "evt_1", "Service-Event-Type": "payout.created" };
  const d = await verifyWebhook(secret, headers, body, { now: () => t });
  assert.equal(d.eventId, "evt_1");
  assert.equal(d.event.data.id, "po_1");
  // The same delivery signed by the Go package (webhook.SignatureHeader).
  assert.equal(sig, "t=1795669200,v1=6489bdde621935802a7d626221934d825db6145e122dbae8224fae668c32a6bf");
  const reject = async (h: Record<string, string>, b: string, reason: string, now = t) =>
    assert.rejects(verifyWebhook(secret, h, b, { now: () => now }), (e: unknown) => e instanceof WebhookVerificationError && e.reason === reason);
  await reject(headers, body + " ", "no_valid_signature");
  await reject({ ...headers, "Service-Signature": "garbage" }, body, "malformed_header");
  await reject({ "Service-Event-Id": "evt_1" }, body, "missing_header");
  await reject(headers, body, "timestamp_outside_tolerance", new Date(t.getTime() + 600_000));
  assert.ok(await verifyWebhook(["whsec_old", secret], headers, body, { now: () => t }));
});
