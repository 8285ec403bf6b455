// The browser entry in a real Chromium: a page on another origin (a "shop"
// served here) loads the SDK as ES modules and confirms a payment intent
// with the publishable key, across origins; the same page checks that the
// SDK refuses a secret key in a browser.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, normalize, resolve } from "node:path";
import { Payd } from "../src/index.js";
import { startPayd, type RunningPayd } from "./payd-server.js";

const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find((p) => existsSync(p));
const sdkDir = resolve(import.meta.dirname, "..", "src");
let srv: RunningPayd | undefined;
let shop: Server | undefined;

before(async () => {
  if (chromium) srv = await startPayd();
});
after(async () => {
  shop?.close();
  await srv?.stop();
});

const page = (paydURL: string, pk: string, sk: string, id: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>shop checkout</title></head>
<body><pre id="out">pending</pre>
<script type="module">
import { confirmPaymentIntent } from "/sdk/browser.js";
import { Payd, PaydError } from "/sdk/index.js";
const out = document.getElementById("out");
const results = {};
try { new Payd(${JSON.stringify(sk)}, { baseURL: ${JSON.stringify(paydURL)} }); results.secretKey = "accepted"; }
catch (e) { results.secretKey = "refused"; }
try { await new Payd(${JSON.stringify(pk)}, { baseURL: ${JSON.stringify(paydURL)} }).getBalance(); results.balance = "read"; }
catch (e) { results.balance = e instanceof PaydError ? e.code : String(e); }
try {
  const pi = await confirmPaymentIntent(${JSON.stringify(pk)}, ${JSON.stringify(id)}, "123456", { baseURL: ${JSON.stringify(paydURL)} });
  results.confirm = pi.status;
  results.origin = location.origin;
} catch (e) { results.confirm = "error: " + (e && e.message); }
out.textContent = JSON.stringify(results);
</script></body></html>`;

test("a page on another origin confirms with the publishable key through @payd/payd/browser", async (t) => {
  if (!chromium) {
    if (process.env.CI === "true") assert.fail("chromium not found: apt-get install -y chromium");
    t.skip("chromium not found (apt-get install -y chromium)");
    return;
  }
  const payd = new Payd(srv!.secretKeys[0], { baseURL: srv!.url });
  const pi = await payd.createPaymentIntent({ amount: 900, currency: "DJF", provider: "bank_a", customer_msisdn: "+25377123456" });
  assert.equal(pi.status, "requires_action");

  const html = page(srv!.url, srv!.publishableKey, srv!.secretKeys[0], pi.id);
  shop = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://shop");
    if (url.pathname === "/") {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(html);
      return;
    }
    if (url.pathname.startsWith("/sdk/") && url.pathname.endsWith(".js")) {
      const file = normalize(join(sdkDir, url.pathname.slice("/sdk/".length)));
      if (file.startsWith(sdkDir) && existsSync(file)) {
        res.writeHead(200, { "Content-Type": "text/javascript" }).end(readFileSync(file));
        return;
      }
    }
    res.writeHead(404).end();
  });
  // "localhost" against payd's "127.0.0.1": another origin, even on the same machine.
  await new Promise<void>((r) => shop!.listen(0, "127.0.0.1", r));
  const shopURL = `http://localhost:${(shop!.address() as { port: number }).port}/`;

  const profile = mkdtempSync(join(tmpdir(), "payd-chromium-"));
  try {
    const dom = await new Promise<string>((res, rej) =>
      execFile(
        chromium,
        ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", `--user-data-dir=${profile}`, "--virtual-time-budget=20000", "--dump-dom", shopURL],
        { timeout: 90_000, maxBuffer: 1 << 20 },
        (err, stdout) => (err ? rej(err) : res(stdout)),
      ),
    );
    const m = /<pre id="out">([^<]*)<\/pre>/.exec(dom);
    assert.ok(m, `no result in the page:\n${dom}`);
    const results = JSON.parse(m[1].replace(/&quot;/g, '"').replace(/&amp;/g, "&"));
    assert.deepEqual(results, { secretKey: "refused", balance: "permission_denied", confirm: "succeeded", origin: shopURL.replace(/\/$/, "") });
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
  assert.equal((await payd.getPaymentIntent(pi.id)).status, "succeeded");
});
