// The package as a user gets it: `npm pack` the SDK, install the tarball into
// an empty project, and use it from an ES module and from CommonJS against a
// real payd serve.

import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startPayd, type RunningPayd } from "./payd-server.js";

const sdkDir = resolve(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")) as { name: string; version: string };
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

let srv: RunningPayd;
let project: string;

before(async () => {
  srv = await startPayd();
  project = mkdtempSync(join(tmpdir(), "payd-ts-consumer-"));
});
after(async () => {
  await srv?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

// The scripts: each creates a payment intent with the secret key, confirms it
// through the browser entry point with the publishable key, and prints what
// it saw as JSON.
const body = (load: string) => `${load}
const payd = new Payd(process.env.PAYD_KEY, { baseURL: process.env.PAYD_URL });
payd.createPaymentIntent({ amount: 1500, currency: "DJF", provider: "bank_a", customer_msisdn: "+25377123456" })
  .then((pi) => browser.confirmPaymentIntent(process.env.PAYD_PK, pi.id, "123456", { baseURL: process.env.PAYD_URL })
    .then((done) => console.log(JSON.stringify({ version: VERSION, created: pi.status, confirmed: done.status, id: done.id,
      errorClass: typeof PaydError }))));
`;

test("npm pack, install the tarball into an empty project, run it as ESM and CommonJS", () => {
  const packed = JSON.parse(
    execFileSync(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", project], { cwd: sdkDir }).toString(),
  ) as { filename: string; files: { path: string }[] }[];
  const files = packed[0].files.map((f) => f.path).sort();
  for (const want of ["LICENSE", "README.md", "package.json", "dist/src/index.js", "dist/src/index.d.ts", "dist/src/browser.js",
    "dist/cjs/index.js", "dist/cjs/index.d.ts", "dist/cjs/browser.js", "dist/cjs/package.json"]) {
    assert.ok(files.includes(want), `the tarball lacks ${want}: ${files.join(", ")}`);
  }
  assert.ok(!files.some((f) => f.startsWith("dist/test/") || f.startsWith("src/") || f.startsWith("node_modules/")),
    `the tarball carries more than the build: ${files.join(", ")}`);

  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "payd-consumer", version: "1.0.0", private: true }));
  execFileSync(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error", "--offline", join(project, packed[0].filename)],
    { cwd: project, stdio: ["ignore", "ignore", "inherit"] });
  const installed = JSON.parse(readFileSync(join(project, "node_modules", "@payd", "payd", "package.json"), "utf8"));
  assert.equal(installed.name, pkg.name);
  assert.equal(installed.license, "Apache-2.0");

  writeFileSync(join(project, "esm.mjs"), body(
    `import { Payd, VERSION, PaydError } from "@payd/payd";\nimport * as browser from "@payd/payd/browser";`));
  writeFileSync(join(project, "cjs.cjs"), body(
    `const { Payd, VERSION, PaydError } = require("@payd/payd");\nconst browser = require("@payd/payd/browser");`));
  const env = { ...process.env, PAYD_URL: srv.url, PAYD_KEY: srv.secretKeys[0], PAYD_PK: srv.publishableKey };
  const seen = new Set<string>();
  for (const script of ["esm.mjs", "cjs.cjs"]) {
    const out = JSON.parse(execFileSync(process.execPath, [script], { cwd: project, env }).toString());
    assert.deepEqual({ ...out, id: undefined }, { version: pkg.version, created: "requires_action", confirmed: "succeeded", id: undefined, errorClass: "function" }, script);
    assert.match(out.id, /^pi_/);
    seen.add(out.id);
  }
  assert.equal(seen.size, 2, "each script made its own payment intent");

  // Both builds resolve to the files the exports map names.
  const resolved = execFileSync(process.execPath, ["--input-type=module", "-e",
    `import { createRequire } from "node:module"; const r = createRequire(process.cwd() + "/x.js");
     console.log(JSON.stringify([import.meta.resolve("@payd/payd"), r.resolve("@payd/payd"), r.resolve("@payd/payd/browser")]))`],
  { cwd: project }).toString();
  const [esm, cjs, cjsBrowser] = JSON.parse(resolved) as string[];
  assert.match(esm, /node_modules\/@payd\/payd\/dist\/src\/index\.js$/);
  assert.match(cjs, /node_modules\/@payd\/payd\/dist\/cjs\/index\.js$/);
  assert.match(cjsBrowser, /node_modules\/@payd\/payd\/dist\/cjs\/browser\.js$/);
});
