/**
 * Redis connections of the queue: `redis://` / `rediss://` URLs turned into ioredis options, and
 * clients that reconnect with a bounded exponential backoff and say so, once per outage.
 */
// Types only: ioredis itself loads when a client is created (~0.15 s of start-up otherwise).
import type { Redis, RedisOptions } from "ioredis";
import { UsageError } from "../../core/errors.js";

/** The parts of a queue URL, as ioredis takes them. */
export interface RedisConnectionOptions {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username?: string;
  readonly password?: string;
  /** Present for `rediss://`: TLS with the host name checked against the certificate. */
  readonly tls?: { readonly servername: string };
}

const DEFAULT_PORT = 6379;

/**
 * Parse `redis://[[user]:password@]host[:port][/db]` or the same with `rediss://` (TLS). A
 * mistake is a `UsageError` naming the flag and what was expected.
 */
export function parseRedisUrl(text: string, flag = "--queue"): RedisConnectionOptions {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(
      "bench.queue-url-invalid",
      `${flag} expects a URL like redis://127.0.0.1:6379/0 or rediss://:password@host:6380/0 (got "${redactRedisUrl(text)}")`,
    );
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new UsageError(
      "bench.queue-url-invalid",
      `${flag} expects the redis:// or rediss:// scheme (got "${url.protocol}//")`,
    );
  }
  if (url.hostname === "") {
    throw new UsageError("bench.queue-url-invalid", `${flag}: the URL names no host`);
  }
  const port = url.port === "" ? DEFAULT_PORT : Number(url.port);
  const path = url.pathname.replace(/^\//, "");
  const db = path === "" ? 0 : Number(path);
  if (!Number.isInteger(db) || db < 0 || !/^\d*$/.test(path)) {
    throw new UsageError(
      "bench.queue-url-invalid",
      `${flag}: the database is the path, a number ≥ 0 (got "/${path}")`,
    );
  }
  // IPv6 literals come back bracketed; ioredis wants the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    host,
    port,
    db,
    ...(username === "" ? {} : { username }),
    ...(password === "" ? {} : { password }),
    ...(url.protocol === "rediss:" ? { tls: { servername: host } } : {}),
  };
}

/** The URL with its password replaced, fit for logs and error messages. */
export function redactRedisUrl(text: string): string {
  return text.replace(/^(rediss?:\/\/)([^@/]*)@/, (_match, scheme: string, userInfo: string) => {
    const colon = userInfo.indexOf(":");
    return colon === -1 ? `${scheme}${userInfo}@` : `${scheme}${userInfo.slice(0, colon)}:***@`;
  });
}

/**
 * The connection options of a `--queue` value (a URL is parsed) and the label logs name it by:
 * the URL without its password, or `host:port/db` for options given directly.
 */
export function queueConnectionOf(queue: string | RedisConnectionOptions): {
  readonly connection: RedisConnectionOptions;
  readonly label: string;
} {
  if (typeof queue === "string") {
    return { connection: parseRedisUrl(queue), label: redactRedisUrl(queue) };
  }
  return { connection: queue, label: `${queue.host}:${queue.port}/${queue.db}` };
}

/** Delay before reconnect attempt `times` (1, 2, …): 250 ms doubling, at most 10 s. */
export function reconnectDelayMs(times: number): number {
  return Math.min(250 * 2 ** Math.max(0, times - 1), 10_000);
}

export interface ConnectionReporter {
  /** Called once when a working connection is lost, and once when it is back. */
  readonly onConnectionEvent?: (message: string) => void;
}

/**
 * A client for BullMQ (which requires `maxRetriesPerRequest: null`: commands wait through an
 * outage instead of failing) that reconnects with backoff and reports the outage once.
 */
export async function createRedisClient(
  options: RedisConnectionOptions,
  label: string,
  reporter: ConnectionReporter = {},
): Promise<Redis> {
  const { Redis } = await import("ioredis");
  let lostAt: number | undefined;
  let lastError = "";
  // `satisfies`, not an annotation: ioredis's own `RedisOptions` declares optional fields as
  // `T | undefined`, which its constructor refuses under `exactOptionalPropertyTypes`.
  const redisOptions = {
    host: options.host,
    port: options.port,
    db: options.db,
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
    ...(options.tls === undefined ? {} : { tls: { servername: options.tls.servername } }),
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => {
      const delay = reconnectDelayMs(times);
      if (lostAt === undefined) {
        lostAt = Date.now();
        reporter.onConnectionEvent?.(
          `redis connection to ${label} lost${lastError === "" ? "" : ` (${lastError})`}; reconnecting with backoff (next try in ${delay} ms)`,
        );
      }
      return delay;
    },
  } satisfies RedisOptions;
  const client = new Redis(redisOptions);
  // Without a listener ioredis prints every failed reconnect; the reporter says it once.
  client.on("error", (error: Error) => {
    lastError = error.message;
  });
  client.on("ready", () => {
    if (lostAt !== undefined) {
      reporter.onConnectionEvent?.(
        `redis connection to ${label} restored after ${((Date.now() - lostAt) / 1000).toFixed(1)} s`,
      );
      lostAt = undefined;
    }
  });
  return client;
}
