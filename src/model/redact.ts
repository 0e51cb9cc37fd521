/**
 * Secret redaction for everything skillsmith stores or prints (trajectories, logs, reports,
 * recorded requests, error messages): known key values are replaced wherever they occur, and
 * text that looks like a key is replaced even when nobody told us about it.
 */

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

function redactText(text: string, knownSecrets: readonly string[]): string {
  let result = text;
  // Longest first, so a key that contains another known key is removed whole.
  const known = [...new Set(knownSecrets)]
    .filter((secret) => secret.length >= minimumSecretLength)
    .sort((left, right) => right.length - left.length);
  for (const secret of known) result = result.split(secret).join(redactionMarker);
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
  return redactValue(value, knownSecrets, new WeakMap()) as T;
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

/** Every secret known here: the registered ones and the key-like variables of `environment`. */
export function knownSecrets(
  environment: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  return [...registered, ...secretsFromEnvironment(environment)];
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
