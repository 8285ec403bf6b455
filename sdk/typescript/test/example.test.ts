// Runs examples/typescript (built with `npm ci && npm run build` in that
// directory, as .ci/run does) against a real payd serve.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Payd } from "../src/index.js";
import { startPayd, type RunningPayd } from "./payd-server.js";

const example = resolve(import.meta.dirname, "..", "..", "..", "..", "examples", "typescript", "dist", "walkthrough.js");
const built = existsSync(example);
let srv: RunningPayd | undefined;

before(async () => {
  if (built) srv = await startPayd();
});
after(async () => {
  await srv?.stop();
});

test("examples/typescript walks through against payd", async (t) => {
  if (!built) {
    if (process.env.CI === "true") assert.fail(`${example} is missing: build examples/typescript first`);
    t.skip("examples/typescript is not built: cd examples/typescript && npm ci && npm run build");
    return;
  }
  const { walkthrough } = (await import(pathToFileURL(example).href)) as { walkthrough: (p: Payd, say: (s: string) => void) => Promise<void> };
  const lines: string[] = [];
  await walkthrough(new Payd(srv!.secretKeys[0], { baseURL: srv!.url }), (s) => lines.push(s));
  const out = lines.join("\n");
  for (const want of ["requires_action (next action collect_otp)", "succeeded, 1500 DJF captured", "payment_intent.succeeded", "payout.succeeded", "balance DJF: available 200", "1 succeeded payment intent(s)"]) {
    assert.ok(out.includes(want), `output lacks ${want}:\n${out}`);
  }
});
