/**
 * The one canonical JSON: object keys sorted (by UTF-16 code units) at every depth, so equal
 * values give one text — what run fingerprints and model-cache keys hash. Built as text rather
 * than through `JSON.stringify` of a sorted copy, because an object enumerates integer-like keys
 * (`"9"`, `"10"`) numerically first whatever order they were added in.
 *
 * Beyond JSON: `undefined` members and functions are left out of objects (and are `null` in
 * arrays), bytes are `{"$bytes": base64}`, URLs their `href`, dates their ISO text, bigints their
 * decimal text.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined || typeof value === "function") return "null";
  if (typeof value === "bigint") return JSON.stringify(value.toString());
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (value instanceof Uint8Array) {
    return canonicalJson({ $bytes: Buffer.from(value).toString("base64") });
  }
  if (value instanceof URL) return JSON.stringify(value.href);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined && typeof item !== "function")
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
}
