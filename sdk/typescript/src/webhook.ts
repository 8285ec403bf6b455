// Verification of payd's webhook deliveries, with Web Crypto (Node 20 and
// browsers alike): Service-Signature is "t=<unix>,v1=<hex>", the lowercase
// hex HMAC-SHA256, keyed with the endpoint's whole "whsec_..." secret, of
// "{t}.{Service-Event-Id}.{raw body}".

import type { Event } from "./generated.js";

/** How far a delivery's timestamp may be from the receiver's clock, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Why a delivery was refused; answer 400 and ignore it. */
export class WebhookVerificationError extends Error {
  readonly reason: "missing_header" | "malformed_header" | "no_valid_signature" | "timestamp_outside_tolerance" | "event_mismatch";
  constructor(reason: WebhookVerificationError["reason"], message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** A verified delivery. `eventId` is the de-duplication key. */
export interface VerifiedDelivery {
  eventId: string;
  eventType: string;
  signedAt: Date;
  event: Event;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(h: HeaderSource, name: string): string | undefined {
  if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? undefined;
  const rec = h as Record<string, string | string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name.toLowerCase());
  const v = key ? rec[key] : undefined;
  return Array.isArray(v) ? v[0] : v;
}

function hexToBytes(hex: string): Uint8Array | undefined {
  if (!/^([0-9a-f]{2})+$/i.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Compares in time that depends only on the lengths. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

async function hmac(secret: string, message: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const enc = new TextEncoder();
  const key = await globalThis.crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, message));
}

/**
 * Verifies one delivery given its headers and raw body (exactly as received;
 * never re-encode the JSON first). `secrets` may hold the old secret too
 * while you roll it.
 */
export async function verifyWebhook(
  secrets: string | string[],
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  options: { toleranceSeconds?: number; now?: () => Date } = {},
): Promise<VerifiedDelivery> {
  const eventId = header(headers, "Service-Event-Id");
  const sigHeader = header(headers, "Service-Signature");
  if (!eventId || !sigHeader) throw new WebhookVerificationError("missing_header", "missing Service-Signature or Service-Event-Id");
  let t: number | undefined;
  const v1: Uint8Array[] = [];
  for (const part of sigHeader.split(",")) {
    const [k, v] = part.trim().split("=", 2);
    if (k === "t" && v && /^\d+$/.test(v)) t = Number(v);
    else if (k === "v1" && v) {
      const b = hexToBytes(v);
      if (b) v1.push(b);
    }
  }
  if (t === undefined || v1.length === 0) throw new WebhookVerificationError("malformed_header", "Service-Signature is not t=<unix>,v1=<hex>");
  const tol = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = (options.now?.() ?? new Date()).getTime() / 1000;
  if (tol > 0 && Math.abs(now - t) > tol) {
    throw new WebhookVerificationError("timestamp_outside_tolerance", `signed at ${t}, ${Math.round(now - t)}s from now`);
  }
  const enc = new TextEncoder();
  const body = typeof rawBody === "string" ? enc.encode(rawBody) : rawBody;
  const prefix = enc.encode(`${t}.${eventId}.`);
  const msg = new Uint8Array(prefix.length + body.length);
  msg.set(prefix);
  msg.set(body, prefix.length);
  let matched = false;
  for (const s of Array.isArray(secrets) ? secrets : [secrets]) {
    const want = await hmac(s, msg);
    for (const got of v1) if (constantTimeEqual(want, got)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError("no_valid_signature", "no signature matches the expected one");
  let event: Event;
  try {
    event = JSON.parse(new TextDecoder().decode(body)) as Event;
  } catch {
    throw new WebhookVerificationError("event_mismatch", "the body is not an event");
  }
  if (event.id !== eventId) throw new WebhookVerificationError("event_mismatch", "the body's event id differs from Service-Event-Id");
  return { eventId, eventType: header(headers, "Service-Event-Type") ?? event.type, signedAt: new Date(t * 1000), event };
}

/** Computes a Service-Signature header, for receivers' own tests. */
export async function signatureHeader(secret: string, t: Date, eventId: string, rawBody: string): Promise<string> {
  const unix = Math.floor(t.getTime() / 1000);
  const mac = await hmac(secret, new TextEncoder().encode(`${unix}.${eventId}.${rawBody}`));
  return `t=${unix},v1=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
