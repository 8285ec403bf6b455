// Starts a real payd for the tests: the binary from PAYD_BIN, or one built
// with `go build` from this repository; SQLite in a temporary directory, a
// free port, and a merchant made with `payd merchant create --json`.

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export interface RunningPayd {
  url: string;
  secretKeys: string[];
  publishableKey: string;
  merchantId: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

const repoRoot = resolve(import.meta.dirname, "..", "..", "..", "..");

export async function startPayd(): Promise<RunningPayd> {
  const dir = mkdtempSync(join(tmpdir(), "payd-ts-"));
  let bin = process.env.PAYD_BIN;
  if (!bin) {
    bin = join(dir, "payd");
    execFileSync("go", ["build", "-o", bin, "./cmd/payd"], { cwd: repoRoot, stdio: "inherit" });
  }
  const port = await freePort();
  const env = {
    ...process.env,
    PAYD_DATABASE_URL: `sqlite:${join(dir, "payd.db")}`,
    PAYD_ADDR: `127.0.0.1:${port}`,
    PAYD_PUBLIC_URL: `http://127.0.0.1:${port}`,
    PAYD_DEMO: "false",
    PAYD_RATE_LIMIT: "0",
    PAYD_SANDBOX_PUSH_DELAY: "100ms",
    PAYD_SANDBOX_TIMEOUT_DELAY: "100ms",
    PAYD_WEBHOOK_RETRY_SCHEDULE: "100ms,200ms,400ms",
  };
  execFileSync(bin, ["migrate"], { env, stdio: "ignore" });
  const out = execFileSync(bin, ["merchant", "create", "--name", "TypeScript SDK test", "--json"], { env, stdio: ["ignore", "pipe", "ignore"] }).toString();
  const created = JSON.parse(out) as { merchant_id: string; secret_keys: string[]; publishable_key: string };
  const proc: ChildProcess = spawn(bin, ["serve"], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr?.on("data", (d) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`payd serve exited ${proc.exitCode}: ${stderr}`);
    try {
      const r = await fetch(url + "/readyz");
      if (r.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`payd did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    secretKeys: created.secret_keys,
    publishableKey: created.publishable_key,
    merchantId: created.merchant_id,
    async stop() {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
