// The hand-written transport of the payd SDK: idempotency keys kept across
// retries, exponential backoff with jitter, Retry-After, typed errors,
// cursor pagination and server-sent events. generated.ts adds one method per
// operation on top of it.

/** The SDK's version, sent in the User-Agent header (in Node). */
export const VERSION = "0.1.0";

/** One operation of the API, as the generated table describes it. */
export interface OperationSpec {
  readonly name: string;
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  readonly path: string;
  readonly pathParams: readonly string[];
  readonly idempotencyRequired: boolean;
  readonly public: boolean;
  readonly alsoDecode: readonly number[];
}

/** One page of a list, newest first. */
export interface List<T> {
  object: "list";
  data: T[];
  has_more: boolean;
}

/** Per-call options. */
export interface RequestOptions {
  /** Sent as Idempotency-Key instead of a generated key (POST only). */
  idempotencyKey?: string;
  /** Extra request headers, e.g. { "X-Service-Scenario": "insufficient_funds" } in test mode. */
  headers?: Record<string, string>;
  /** Aborts the call, including any wait between retries. */
  signal?: AbortSignal;
}

/** Options of a client. */
export interface ClientOptions {
  /** The API's base URL; default http://127.0.0.1:8080. */
  baseURL?: string;
  /** Retries of one call (default 3; 0 turns them off). */
  maxRetries?: number;
  /** First wait between retries in ms (default 250); doubles per retry. */
  minBackoffMs?: number;
  /** Largest wait between retries in ms (default 8000). */
  maxBackoffMs?: number;
  /** Longest Retry-After honoured in ms (default 30000); a longer one is thrown at once. */
  maxRetryWaitMs?: number;
  /** The fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** Prepended to the User-Agent, e.g. "shop/1.2". */
  appInfo?: string;
  /** Waits between retries (tests replace it). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The API error envelope, thrown for every error answer. */
export class PaydError extends Error {
  /** HTTP status of the answer (0 when no answer arrived). */
  readonly status: number;
  readonly type: string;
  readonly code: string;
  /** The request field at fault, when one is. */
  readonly param?: string;
  readonly requestId?: string;
  /** Every bad row of a bulk payout (code invalid_rows). */
  readonly rows?: { row: number; param: string; message: string }[];
  /** The answer's parsed body: for a provider's refusal (402) the canceled payment intent. */
  readonly body?: unknown;

  constructor(init: {
    status: number;
    type: string;
    code: string;
    message: string;
    param?: string;
    requestId?: string;
    rows?: { row: number; param: string; message: string }[];
    body?: unknown;
  }) {
    super(init.message);
    this.name = "PaydError";
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param;
    this.requestId = init.requestId;
    this.rows = init.rows;
    this.body = init.body;
  }
}

/** Thrown when no answer arrived after every retry. */
export class PaydNetworkError extends Error {
  readonly attempts: number;
  constructor(message: string, attempts: number, cause: unknown) {
    super(message, { cause });
    this.name = "PaydNetworkError";
    this.attempts = attempts;
  }
}

/** True in a browser (a window with a document). */
export const isBrowser = (): boolean =>
  typeof (globalThis as { window?: unknown }).window !== "undefined" &&
  typeof (globalThis as { document?: unknown }).document !== "undefined";

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Parses Retry-After (delay seconds or an HTTP date) into ms. */
export function parseRetryAfter(v: string | null, now = Date.now()): number | undefined {
  if (!v) return undefined;
  const s = v.trim();
  if (/^\d+$/.test(s)) return Math.min(Number(s), 86400) * 1000;
  const t = Date.parse(s);
  if (Number.isNaN(t)) return undefined;
  return Math.max(t - now, 0);
}

interface CallArgs {
  path: Record<string, string>;
  query?: object;
  body?: unknown;
}

/** The transport every generated method goes through. */
export abstract class BaseClient {
  protected readonly key: string;
  protected readonly baseURL: string;
  protected readonly maxRetries: number;
  protected readonly minBackoffMs: number;
  protected readonly maxBackoffMs: number;
  protected readonly maxRetryWaitMs: number;
  protected readonly fetchImpl: typeof fetch;
  protected readonly userAgent: string;
  protected readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(key: string, options: ClientOptions = {}) {
    if (!key) throw new Error("payd: an API key is required");
    if (isBrowser() && !key.startsWith("pk_")) {
      throw new Error("payd: only a publishable key (pk_...) may be used in a browser; keep secret keys on your server");
    }
    this.key = key;
    this.baseURL = (options.baseURL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
    this.maxRetries = Math.max(options.maxRetries ?? 3, 0);
    this.minBackoffMs = options.minBackoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 8000;
    this.maxRetryWaitMs = options.maxRetryWaitMs ?? 30000;
    const f = options.fetch ?? globalThis.fetch;
    this.fetchImpl = f.bind(globalThis);
    this.userAgent = `${options.appInfo ? options.appInfo + " " : ""}payd-node/${VERSION}`;
    this.sleep = options.sleep ?? sleepFor;
  }

  /** The wait before retry attempt+1: doubled per attempt, capped, jittered into its upper half. */
  protected backoff(attempt: number): number {
    const d = Math.min(this.minBackoffMs * 2 ** attempt, this.maxBackoffMs);
    return d / 2 + Math.random() * (d / 2);
  }

  private url(op: OperationSpec, args: CallArgs): string {
    let path = op.path;
    for (const p of op.pathParams) {
      const v = args.path[p];
      if (typeof v !== "string" || v === "") throw new TypeError(`payd: ${op.name} needs ${p}`);
      path = path.replace(`{${p}}`, encodeURIComponent(v));
    }
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(args.query ?? {})) {
      if (v === undefined || v === null || v === "") continue;
      q.set(k, String(v));
    }
    const qs = q.toString();
    return this.baseURL + path + (qs ? "?" + qs : "");
  }

  /** Sends a call and returns its successful answer, retrying as the policy allows. */
  protected async send(op: OperationSpec, args: CallArgs, options: RequestOptions, accept = "application/json"): Promise<Response> {
    if (this.key.startsWith("pk_") && op.name !== "confirmPaymentIntent" && !op.public) {
      throw new PaydError({
        status: 0,
        type: "permission_error",
        code: "permission_denied",
        message: `payd: a publishable key can only confirm payment intents, not call ${op.name}`,
      });
    }
    const url = this.url(op, args);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.key}`,
      Accept: accept,
    };
    if (!isBrowser()) headers["User-Agent"] = this.userAgent;
    let body: string | undefined;
    if (op.method === "POST") {
      body = JSON.stringify(args.body ?? {});
      headers["Content-Type"] = "application/json";
      // One key per logical call, kept across its retries.
      headers["Idempotency-Key"] = options.idempotencyKey ?? `payd-node-${globalThis.crypto.randomUUID()}`;
    }
    Object.assign(headers, options.headers ?? {});
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchImpl(url, { method: op.method, headers, body, signal: options.signal });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        if (attempt < this.maxRetries) {
          await this.sleep(this.backoff(attempt), options.signal);
          continue;
        }
        throw new PaydNetworkError(`payd: ${op.method} ${op.path}: no answer after ${attempt + 1} attempt(s)`, attempt + 1, err);
      }
      if (res.ok) return res;
      const text = await res.text();
      const error = errorFrom(res, text);
      const wait = this.retryWait(error, res, attempt);
      if (wait !== undefined) {
        await this.sleep(wait, options.signal);
        continue;
      }
      throw error;
    }
  }

  private retryWait(e: PaydError, res: Response, attempt: number): number | undefined {
    if (attempt >= this.maxRetries) return undefined;
    // 429, and 503 database_unavailable (payd could not reach its database and did nothing): after Retry-After.
    if (e.status === 429 || (e.status === 503 && e.code === "database_unavailable")) {
      const ra = parseRetryAfter(res.headers.get("Retry-After"));
      if (ra === undefined) return this.backoff(attempt);
      return ra > this.maxRetryWaitMs ? undefined : ra;
    }
    if (e.status === 409 && e.code === "idempotency_key_in_use") return this.backoff(attempt);
    return undefined;
  }

  protected async request<T>(op: OperationSpec, args: CallArgs, options: RequestOptions = {}): Promise<T> {
    const res = await this.send(op, args, options);
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  protected async *paginate<T>(op: OperationSpec, args: CallArgs, cursor: string, options: RequestOptions = {}): AsyncGenerator<T> {
    const query: Record<string, unknown> = { ...(args.query ?? {}) };
    const backward = !!query["ending_before"];
    for (;;) {
      const page = await this.request<List<T>>(op, { ...args, query }, options);
      for (const item of page.data) yield item;
      if (!page.has_more || page.data.length === 0) return;
      const edge = backward ? page.data[0] : page.data[page.data.length - 1];
      query[backward ? "ending_before" : "starting_after"] = (edge as Record<string, unknown>)[cursor];
    }
  }

  protected async openStream<T>(op: OperationSpec, args: CallArgs, options: RequestOptions = {}): Promise<EventStream<T>> {
    const res = await this.send(op, args, options, "text/event-stream");
    return new EventStream<T>(res);
  }
}

function errorFrom(res: Response, text: string): PaydError {
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  const requestId = res.headers.get("Request-Id") ?? undefined;
  const env = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (env && typeof env === "object") {
    return new PaydError({
      status: res.status,
      type: String(env.type ?? "api_error"),
      code: String(env.code ?? ""),
      message: String(env.message ?? ""),
      param: env.param as string | undefined,
      requestId: (env.request_id as string | undefined) ?? requestId,
      rows: env.rows as PaydError["rows"],
      body,
    });
  }
  const last = (body as { last_error?: { code: string; message: string } } | undefined)?.last_error;
  if (last) {
    return new PaydError({ status: res.status, type: "provider_error", code: last.code, message: last.message, requestId, body });
  }
  return new PaydError({ status: res.status, type: "api_error", code: String(res.status), message: "answer without an error envelope", requestId, body });
}

/** Server-sent events: `for await (const ev of stream)`; close() ends it. */
export class EventStream<T> implements AsyncIterable<T> {
  /** The id of the last event read, for resuming with last_event_id. */
  lastId?: string;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private buf = "";
  private readonly decoder = new TextDecoder();

  constructor(res: Response) {
    if (!res.body) throw new Error("payd: event stream without a body");
    this.reader = res.body.getReader();
  }

  /** The next event, or undefined when the stream ended. */
  async next(): Promise<T | undefined> {
    for (;;) {
      const end = this.buf.search(/\r?\n\r?\n/);
      if (end >= 0) {
        const block = this.buf.slice(0, end);
        this.buf = this.buf.slice(end).replace(/^\r?\n\r?\n/, "");
        let data = "";
        let id: string | undefined;
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith("data:")) data += (data ? "\n" : "") + line.slice(5).replace(/^ /, "");
          else if (line.startsWith("id:")) id = line.slice(3).trim();
        }
        if (!data) continue;
        if (id) this.lastId = id;
        return JSON.parse(data) as T;
      }
      const { value, done } = await this.reader.read();
      if (done) return undefined;
      this.buf += this.decoder.decode(value, { stream: true });
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      for (;;) {
        const ev = await this.next();
        if (ev === undefined) return;
        yield ev;
      }
    } finally {
      await this.close();
    }
  }

  /** Ends the stream (payd holds only a few open per key). */
  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}
