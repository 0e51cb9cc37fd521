/**
 * Reading a stored file's format tag inside its zod schema (`format-tag.ts` writes it): the
 * current tag exactly, a mismatch said in words a user can act on, older tags read as the current.
 */
import { z } from "zod";
import { type FormatTag, type OlderTag, TAG_PATTERN, upgradeFormatTag } from "./format-tag.js";

/** Why `found` is not `tag`, in words a user can act on. */
function formatMismatch(tag: FormatTag, found: unknown): string {
  const expected = tag.match(TAG_PATTERN);
  const actual = typeof found === "string" ? found.match(TAG_PATTERN) : null;
  if (found === undefined) return `expected format "${tag}", found no format field`;
  if (expected !== null && actual !== null && actual[1] === expected[1]) {
    return Number(actual[2]) > Number(expected[2])
      ? `format "${found as string}" is from a later skillsmith; this one reads "${tag}" (upgrade skillsmith)`
      : `format "${found as string}" is no longer read; this skillsmith reads "${tag}"`;
  }
  return `expected format "${tag}", found ${JSON.stringify(found)} (not this kind of skillsmith file)`;
}

/** The `format` field of a stored file's schema: exactly `tag`, a mismatch said in words. */
export function formatTagSchema<const Tag extends FormatTag>(tag: Tag): z.ZodLiteral<Tag> {
  return z.literal(tag, { error: (issue) => formatMismatch(tag, issue.input) });
}

/**
 * `schema` (whose `format` is `formatTagSchema(tag)`) reading files tagged in the older styles
 * as `tag`: the older tag is replaced before the schema sees the file.
 */
export function readingOlderTags<Schema extends z.ZodType>(
  schema: Schema,
  tag: FormatTag,
  older: readonly OlderTag[],
) {
  return z.preprocess((value) => upgradeFormatTag(value, tag, older), schema);
}
