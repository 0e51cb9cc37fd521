/**
 * A content-addressed cache of model calls in SQLite (WAL). The key is the SHA-256 of a canonical
 * JSON of what determines the answer: provider, model, prompt (system and messages), tools and
 * the settings that change the output. Credentials, headers and base URLs are never part of the
 * key or of the stored value, and the stored value loses every known secret (a response that
 * echoes a key, a tool call that carries one) before it is written: see `redact.ts`.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { canonicalJson } from "../core/canonical-json.js";
import { InfrastructureError } from "../core/errors.js";
import { redactedJson } from "./redact.js";

export type CacheMode = "use" | "refresh" | "off" | "replay-only";
export const cacheModes: readonly CacheMode[] = ["use", "refresh", "off", "replay-only"];

/** Cache keys hash the one canonical JSON (`../core/canonical-json.ts`). */
export { canonicalJson } from "../core/canonical-json.js";

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The part of a model call that identifies it; extra fields beyond these are ignored. */
export interface CallIdentity {
  readonly provider: string;
  readonly model: string;
  readonly request: unknown;
}

export function cacheKey(identity: CallIdentity): string {
  return sha256(
    canonicalJson({
      provider: identity.provider,
      model: identity.model,
      request: identity.request,
    }),
  );
}

export class ModelCallCache {
  private readonly database: Database.Database;
  private readonly select: Database.Statement<[string], { value: string }>;
  private readonly upsert: Database.Statement<[string, string, string, string, string]>;

  private constructor(readonly path: string) {
    try {
      if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
      this.database = new Database(path);
      this.database.pragma("journal_mode = WAL");
      this.database.pragma("busy_timeout = 5000");
      this.database.exec(
        `CREATE TABLE IF NOT EXISTS model_calls (
           key TEXT PRIMARY KEY,
           provider TEXT NOT NULL,
           model TEXT NOT NULL,
           created_at TEXT NOT NULL,
           value TEXT NOT NULL
         )`,
      );
    } catch (cause) {
      throw new InfrastructureError(
        "model.cache-open",
        `cannot open the model call cache ${path}`,
        { cause, data: { path } },
      );
    }
    this.select = this.database.prepare("SELECT value FROM model_calls WHERE key = ?");
    this.upsert = this.database.prepare(
      `INSERT INTO model_calls (key, provider, model, created_at, value) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at`,
    );
  }

  static open(path: string): ModelCallCache {
    return new ModelCallCache(path);
  }

  get(key: string): unknown {
    const row = this.select.get(key);
    return row === undefined ? undefined : (JSON.parse(row.value) as unknown);
  }

  set(key: string, identity: { provider: string; model: string }, value: unknown): void {
    this.upsert.run(
      key,
      identity.provider,
      identity.model,
      new Date().toISOString(),
      // The cache file is a store like any other: redacted at its write boundary, whatever the
      // caller already removed (the middleware knows only its own key).
      redactedJson(value),
    );
  }

  get size(): number {
    return (
      this.database.prepare("SELECT COUNT(*) AS count FROM model_calls").get() as { count: number }
    ).count;
  }

  close(): void {
    if (this.database.open) this.database.close();
  }
}
