/**
 * The one convention for the format of a file skillsmith stores and reads back: a `format` field
 * holding `skillsmith-<kind>/<version>` (`skillsmith-run/1`). The kind says what the file is, so a
 * file of another kind or not of skillsmith's is told apart from a damaged one; the version says
 * which schema reads it, so a file of a later skillsmith is refused by name rather than misread.
 *
 * Older versions tagged some files three other ways (a bare `format: 1`, a name with a separate
 * `version`, a lone `version`) or not at all. A reader lists the older tags its files were
 * written with (`readingOlderTags` in `format-tag-schema.ts`), and such a file reads as the current
 * tag: a user's run directory or cache from an earlier version still loads. This module writes
 * tags and loads no zod (writers on the CLI's start-up path import it); readers use the schema one.
 */

/** `skillsmith-<kind>/<version>`. */
export type FormatTag<
  Kind extends string = string,
  Version extends number = number,
> = `skillsmith-${Kind}/${Version}`;

/** The tag a writer puts in a file's `format` field. */
export function formatTag<const Kind extends string, const Version extends number>(
  kind: Kind,
  version: Version,
): FormatTag<Kind, Version> {
  return `skillsmith-${kind}/${version}`;
}

/** How an older version of skillsmith tagged a file that now reads as the current tag. */
export type OlderTag =
  /** `format: 1`: a bare number. */
  | { readonly style: "number"; readonly format: number }
  /** `format: "skillsmith-skills-lock", version: 1`: a name and a separate version. */
  | { readonly style: "name-and-version"; readonly format: string; readonly version: number }
  /** `version: 1` and no `format`. */
  | { readonly style: "version"; readonly version: number }
  /** No tag at all: files written before the kind had one. */
  | { readonly style: "none" };

export const TAG_PATTERN = /^skillsmith-([a-z0-9-]+)\/(\d+)$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The fields of `value` an older tag of this style occupies, when `value` carries it. */
function olderTagFields(value: Record<string, unknown>, older: OlderTag): string[] | undefined {
  switch (older.style) {
    case "number":
      return value.format === older.format ? ["format"] : undefined;
    case "name-and-version":
      return value.format === older.format && value.version === older.version
        ? ["format", "version"]
        : undefined;
    case "version":
      return !("format" in value) && value.version === older.version ? ["version"] : undefined;
    case "none":
      return !("format" in value) && !("version" in value) ? [] : undefined;
  }
}

/**
 * `value` with an older tag replaced by `tag` (the older tag's fields removed), or `value` itself
 * when it carries none of `older` (the schema then judges its `format`).
 */
export function upgradeFormatTag(
  value: unknown,
  tag: FormatTag,
  older: readonly OlderTag[],
): unknown {
  if (!isRecord(value)) return value;
  for (const style of older) {
    const fields = olderTagFields(value, style);
    if (fields === undefined) continue;
    const rest = Object.fromEntries(Object.entries(value).filter(([key]) => !fields.includes(key)));
    return { format: tag, ...rest };
  }
  return value;
}
