/**
 * Secret redaction for everything skillsmith stores or prints (trajectories, logs, reports,
 * recorded requests, error messages): known key values are replaced wherever they occur, and
 * text that looks like a key is replaced even when nobody told us about it.
 */
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "../core/fs.js";

export const redactionMarker = "[REDACTED]";

/**
 * Shapes of common credentials. Anthropic keys (`sk-ant-...`) are covered by the `sk-` pattern;
 * bearer tokens keep the word `Bearer` so a reader still sees what was there.
 */
const secretPatterns: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  /\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(x-api-key|api[_-]?key|authorization)(["']?\s*[:=]\s*["']?)[A-Za-z0-9._~+/=-]{12,}/gi,
];

/**
 * Other providers' token shapes, replaced whole: GitHub (classic and fine-grained), AWS access
 * key ids, Slack, Google API keys, Hugging Face, npm, GitLab.
 */
const tokenPatterns: readonly RegExp[] = [
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\bhf_[A-Za-z0-9]{30,}/g,
  /\bnpm_[A-Za-z0-9]{36}\b/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g,
];

/** Values shorter than this are not treated as secrets: redacting "a" everywhere helps no one. */
const minimumSecretLength = 6;

/**
 * Known values in the order they are replaced: deduplicated, long enough, longest first (so a
 * key that contains another known key is removed whole). Prepared once per redaction, not once
 * per string of a large value.
 */
function prepareKnown(knownSecrets: readonly string[]): string[] {
  return [...new Set(knownSecrets)]
    .filter((secret) => secret.length >= minimumSecretLength)
    .sort((left, right) => right.length - left.length);
}

function redactText(text: string, known: readonly string[]): string {
  let result = text;
  for (const secret of known)
    if (result.includes(secret)) result = result.split(secret).join(redactionMarker);
  for (const pattern of tokenPatterns) result = result.replace(pattern, redactionMarker);
  result = result.replace(secretPatterns[0] as RegExp, redactionMarker);
  result = result.replace(
    secretPatterns[1] as RegExp,
    (_match, word: string) => `${word} ${redactionMarker}`,
  );
  result = result.replace(
    secretPatterns[2] as RegExp,
    (_match, name: string, separator: string) => `${name}${separator}${redactionMarker}`,
  );
  return result;
}

/**
 * Return a copy of `value` with secrets removed: strings are redacted, arrays and plain objects
 * are walked (keys too), other values are returned as they are.
 */
export function redactSecrets<T>(value: T, knownSecrets: readonly string[] = []): T {
  return redactValue(value, prepareKnown(knownSecrets), new WeakMap()) as T;
}

function redactValue(
  value: unknown,
  knownSecrets: readonly string[],
  seen: WeakMap<object, unknown>,
): unknown {
  if (typeof value === "string") return redactText(value, knownSecrets);
  if (typeof value !== "object" || value === null) return value;
  const already = seen.get(value);
  if (already !== undefined) return already;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const item of value) copy.push(redactValue(item, knownSecrets, seen));
    return copy;
  }
  if (value instanceof Error) {
    const copy = new Error(redactText(value.message, knownSecrets));
    copy.name = value.name;
    if (value.stack !== undefined) copy.stack = redactText(value.stack, knownSecrets);
    seen.set(value, copy);
    return copy;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const [key, item] of Object.entries(value))
    copy[redactText(key, knownSecrets)] = redactValue(item, knownSecrets, seen);
  return copy;
}

/** Known secret values in an environment: the variables whose names say they hold keys. */
export function secretsFromEnvironment(
  environment: Readonly<Record<string, string | undefined>>,
): string[] {
  return Object.entries(environment)
    .filter(
      ([name, value]) =>
        value !== undefined &&
        /(API_?KEY|(^|_)KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i.test(name),
    )
    .map(([, value]) => value as string);
}

/**
 * Secrets this process was handed (model keys from flags, configuration files or suites), kept
 * for the life of the process so every store and output boundary can remove them, whichever
 * code path the value took to get there.
 */
const registered = new Set<string>();

/** Remember a secret value for `knownSecrets` (values too short to be keys are ignored). */
export function registerSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= minimumSecretLength) registered.add(value);
}

/** Take every key-like variable of `environment` as a known secret (entry points: CLI, worker). */
export function registerEnvironmentSecrets(
  environment: Readonly<Record<string, string | undefined>>,
): void {
  for (const value of secretsFromEnvironment(environment))
    if (looksLikeCredential(value)) registerSecret(value);
}

/**
 * Whether a value found in a variable whose *name* suggests a key looks like one. Such guesses
 * are replaced in every store, so a value like `default` or `true` (a `CACHE_KEY=default`) must
 * not count: it would rewrite ordinary fields of stored files (and make schema-checked ones
 * unreadable). Keys and tokens are long, or mix letters and digits.
 */
function looksLikeCredential(value: string): boolean {
  return value.length >= 16 || (value.length >= 8 && /[0-9]/.test(value) && /[A-Za-z]/.test(value));
}

/**
 * Every secret known here: the registered ones and the credential-like values of the key-like
 * variables of `environment`.
 */
export function knownSecrets(
  environment: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  return [...registered, ...secretsFromEnvironment(environment).filter(looksLikeCredential)];
}

/**
 * `redactSecrets` with every known secret: for the boundaries where data leaves skillsmith (the
 * results store, run files, the CLI's output), so that no field, present or future, escapes.
 */
export function redactKnownSecrets<T>(
  value: T,
  environment: Readonly<Record<string, string | undefined>> = process.env,
): T {
  return redactSecrets(value, knownSecrets(environment));
}

/*
 * The redacting writers: every file skillsmith stores (results aside, which live in SQLite) is
 * written through one of these, so the store's code does not have to know which of its fields
 * could carry a key. Known secrets are the registered ones and the environment's (see above).
 */

/**
 * JSON text of `value` with every known secret removed. The value is first taken through JSON
 * itself, so what is redacted is exactly what would be written (`toJSON` results, fields of class
 * instances), then every string (keys included) is redacted before serialising: redacting the
 * serialised text instead would miss a key split by an escape (`\nsk-…`).
 */
export function redactedJson(
  value: unknown,
  options: {
    readonly indent?: number;
    readonly environment?: Readonly<Record<string, string | undefined>>;
  } = {},
): string {
  const text = JSON.stringify(value);
  if (text === undefined) return "null";
  const plain = JSON.parse(text) as unknown;
  return JSON.stringify(redactKnownSecrets(plain, options.environment), null, options.indent);
}

/** `redactedJson` pretty-printed with a final newline: the shape of skillsmith's JSON files. */
export function redactedJsonFile(
  value: unknown,
  environment?: Readonly<Record<string, string | undefined>>,
): string {
  return `${redactedJson(value, { indent: 2, ...(environment === undefined ? {} : { environment }) })}\n`;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * File content with every known secret removed. Text (a string, or bytes that are valid UTF-8)
 * gets the full treatment, token shapes included. Other bytes (images, video frames) lose known
 * secrets only, each overwritten in place by as many `*` so offsets stay where they were (the
 * file may no longer decode, which is better than a key on disk); token shapes are not searched
 * there, as random binary data would match them now and then.
 */
export function redactFileContent(
  content: string | Uint8Array,
  environment?: Readonly<Record<string, string | undefined>>,
): string | Uint8Array {
  if (typeof content === "string") return redactKnownSecrets(content, environment);
  let text: string | undefined;
  try {
    text = strictUtf8.decode(content);
  } catch {
    // A probe: bytes that are not UTF-8 are binary, redacted in place below.
    text = undefined;
  }
  if (text !== undefined) {
    const redacted = redactKnownSecrets(text, environment);
    return redacted === text ? content : Buffer.from(redacted, "utf8");
  }
  let copy: Buffer | undefined;
  for (const secret of prepareKnown(knownSecrets(environment))) {
    const needle = Buffer.from(secret, "utf8");
    const haystack = copy ?? Buffer.from(content.buffer, content.byteOffset, content.byteLength);
    let at = haystack.indexOf(needle);
    while (at >= 0) {
      copy ??= Buffer.from(content);
      copy.fill(0x2a, at, at + needle.length);
      at = copy.indexOf(needle, at + needle.length);
    }
  }
  return copy ?? content;
}

/** `writeFileAtomic` of `content` with every known secret removed (see `redactFileContent`). */
export async function writeRedactedFile(
  path: string,
  content: string | Uint8Array,
  environment?: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  await writeFileAtomic(path, redactFileContent(content, environment));
}

/** Append `value` as one redacted JSON line (a JSONL log or pool), creating the folder. */
export async function appendRedactedJsonLine(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await appendFile(path, `${redactedJson(value)}\n`);
}
