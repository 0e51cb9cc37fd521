/**
 * The on-disk home of a family's slot libraries and patches: `libraries/<version>.json` for every
 * accepted version (v1 is the shipped initial library), `patches/<n>.json` for every proposed
 * patch (accepted or not) with rationale and diff, and `current` naming the latest version.
 *
 * Every JSON file the store writes carries its format tag (`core/format-tag.ts`:
 * `skillsmith-synth-library/1`, `skillsmith-synth-patch/1`, `skillsmith-synth-optimisation/1`).
 * Files written before the tags say `format: 1`, and those before that have no `format`: both
 * read as version 1, the layout they have; a file of a later version or another kind is refused
 * with a message saying so, never misread.
 *
 * Every file is written through the redacting writers of `model/redact.ts`: slot texts, patch
 * rationales and optimisation reports come from model answers, which can quote a key.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { type FormatTag, formatTag, type OlderTag } from "../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../core/format-tag-schema.js";
import { isMissing, unlessMissing, unreadableError } from "../core/fs.js";
import { parseInput } from "../core/parse.js";
import { redactedJsonFile, writeRedactedFile } from "../model/redact.js";
import { promptText } from "./prompts.js";
import { parseSlotLibrary, type SlotLibrary } from "./slots.js";

export const initialLibraryVersion = "v1";

/** The tags of the store's JSON files. */
export const SYNTH_LIBRARY_FORMAT = formatTag("synth-library", 1);
export const SYNTH_PATCH_FORMAT = formatTag("synth-patch", 1);
export const SYNTH_OPTIMISATION_FORMAT = formatTag("synth-optimisation", 1);

/** The store's files before the tags: `format: 1`. */
const OLDER_STORE_TAGS: readonly OlderTag[] = [{ style: "number", format: 1 }];

/**
 * The file's content without its `format`, after checking that it is `tag` (or an older tag).
 * Files from before any tag have no `format`: read as `tag` here, not through the core's "none"
 * style, which also wants no `version` field, and a library's `version` is its content.
 */
function readableFormat(value: unknown, path: string, tag: FormatTag): Record<string, unknown> {
  const untagged = typeof value === "object" && value !== null && !("format" in value);
  const schema = readingOlderTags(
    z.looseObject({ format: formatTagSchema(tag) }),
    tag,
    OLDER_STORE_TAGS,
  );
  const { format: _format, ...rest } = parseInput(
    schema,
    untagged ? { format: tag, ...value } : value,
    {
      code: "synth.store-format",
      location: { file: path },
    },
  );
  return rest;
}

/** JSON text of a store file, tagged and redacted (`model/redact.ts`). */
function storeJson(tag: FormatTag, value: object): string {
  return redactedJsonFile({ format: tag, ...value });
}

export function initialLibrary(): SlotLibrary {
  return parseSlotLibrary(JSON.parse(promptText("slots-v1.json")), "prompts/synth/slots-v1.json");
}

/** A stored patch (`patches/<n>.json`, without its `format`), read back through this schema. */
const patchRecordSchema = z.object({
  number: z.number().int().nonnegative(),
  epoch: z.number().int().nonnegative(),
  baseVersion: z.string(),
  /** The version it became when accepted. */
  resultVersion: z.string().optional(),
  status: z.enum(["accepted", "rejected-invalid", "rejected-no-gain"]),
  reason: z.string(),
  rationale: z.string(),
  operations: z.array(z.unknown()).readonly(),
  diff: z.string(),
  scores: z
    .object({
      base: z.number(),
      candidate: z.number(),
      tasks: z.array(z.string()).readonly(),
    })
    .readonly()
    .optional(),
  createdAt: z.string(),
});

export type PatchRecord = z.infer<typeof patchRecordSchema>;

export class LibraryStore {
  constructor(readonly directory: string) {}

  private libraryPath(version: string): string {
    return join(this.directory, "libraries", `${version}.json`);
  }

  /** A stored version; v1 falls back to the shipped library when not stored yet. */
  async load(version: string): Promise<SlotLibrary> {
    if (!/^v\d+$/.test(version))
      throw new InputError(
        "synth.library-version",
        `"${version}" is not a library version (v1, v2, ...)`,
        {
          field: "--library",
        },
      );
    const path = this.libraryPath(version);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if (!isMissing(error)) throw unreadableError(path, error);
      if (version === initialLibraryVersion) return initialLibrary();
      throw new InputError(
        "synth.library-missing",
        `library version ${version} is not stored`,
        {
          file: path,
        },
        { cause: error },
      );
    }
    return parseSlotLibrary(readableFormat(JSON.parse(text), path, SYNTH_LIBRARY_FORMAT), path);
  }

  async save(library: SlotLibrary): Promise<void> {
    await writeRedactedFile(
      this.libraryPath(library.version),
      storeJson(SYNTH_LIBRARY_FORMAT, library),
    );
    await writeRedactedFile(join(this.directory, "current"), `${library.version}\n`);
  }

  /** The latest accepted version, v1 when nothing was optimised yet. */
  async current(): Promise<string> {
    const path = join(this.directory, "current");
    const text = await unlessMissing(path, readFile(path, "utf8"));
    return text?.trim() || initialLibraryVersion;
  }

  async versions(): Promise<string[]> {
    const folder = join(this.directory, "libraries");
    const names = (await unlessMissing(folder, readdir(folder))) ?? [];
    const stored = names
      .filter((name) => /^v\d+\.json$/.test(name))
      .map((name) => name.slice(0, -5));
    return [...new Set([initialLibraryVersion, ...stored])].sort(
      (left, right) => Number(left.slice(1)) - Number(right.slice(1)),
    );
  }

  async nextVersion(): Promise<string> {
    const versions = await this.versions();
    return `v${Math.max(...versions.map((version) => Number(version.slice(1)))) + 1}`;
  }

  async patches(): Promise<PatchRecord[]> {
    const directory = join(this.directory, "patches");
    const names = ((await unlessMissing(directory, readdir(directory))) ?? [])
      .filter((name) => name.endsWith(".json"))
      .sort();
    const records: PatchRecord[] = [];
    for (const name of names) {
      const path = join(directory, name);
      const stored = readableFormat(
        JSON.parse(await readFile(path, "utf8")),
        path,
        SYNTH_PATCH_FORMAT,
      );
      records.push(
        parseInput(patchRecordSchema, stored, {
          code: "synth.patch-invalid",
          location: { file: path },
        }),
      );
    }
    return records;
  }

  /**
   * Keep an optimisation's report (settings, epochs, cost) as `optimisations/<time>.json`;
   * returns the path.
   */
  async saveOptimisation(report: object, createdAt = new Date()): Promise<string> {
    const path = join(
      this.directory,
      "optimisations",
      `${createdAt.toISOString().replaceAll(":", "-")}.json`,
    );
    await writeRedactedFile(path, storeJson(SYNTH_OPTIMISATION_FORMAT, report));
    return path;
  }

  async savePatch(record: Omit<PatchRecord, "number">): Promise<PatchRecord> {
    const number = (await this.patches()).length + 1;
    const full: PatchRecord = { number, ...record };
    await writeRedactedFile(
      join(this.directory, "patches", `${String(number).padStart(4, "0")}.json`),
      storeJson(SYNTH_PATCH_FORMAT, full),
    );
    // A readable diff beside the JSON, for reviewers who do not want to read escaped strings.
    await writeRedactedFile(
      join(this.directory, "patches", `${String(number).padStart(4, "0")}.diff`),
      `# ${full.status}: ${full.reason}\n# rationale: ${full.rationale}\n${full.diff}\n`,
    );
    return full;
  }
}
