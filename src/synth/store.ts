/**
 * The on-disk home of a family's slot libraries and patches: `libraries/<version>.json` for every
 * accepted version (v1 is the shipped initial library), `patches/<n>.json` for every proposed
 * patch (accepted or not) with rationale and diff, and `current` naming the latest version.
 *
 * Every JSON file the store writes carries `format` (`SYNTH_STORE_FORMAT`). Files written before
 * the field existed have none and are read as format 1, the layout they have; a file of a later
 * format is refused with a message saying so, never misread.
 *
 * Every file is written through the redacting writers of `model/redact.ts`: slot texts, patch
 * rationales and optimisation reports come from model answers, which can quote a key.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { isMissing, unlessMissing, unreadableError } from "../core/fs.js";
import { parseInput } from "../core/parse.js";
import { redactedJsonFile, writeRedactedFile } from "../model/redact.js";
import { promptText } from "./prompts.js";
import { parseSlotLibrary, type SlotLibrary } from "./slots.js";

export const initialLibraryVersion = "v1";

/** The layout version of the store's JSON files (libraries, patches, optimisation reports). */
export const SYNTH_STORE_FORMAT = 1;

/** The file's content without its `format`, after checking that we can read that format. */
function readableFormat(value: unknown, path: string): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const { format, ...rest } = value as Record<string, unknown>;
  // No field: written before formats were recorded, which is format 1's layout.
  if (format === undefined || format === SYNTH_STORE_FORMAT) return rest;
  throw new InputError(
    "synth.store-format",
    `written in store format ${JSON.stringify(format)}; this skillsmith reads format ${SYNTH_STORE_FORMAT} (and files without a format): use the skillsmith that wrote it, or a newer one`,
    { file: path, field: "format" },
  );
}

/** JSON text of a store file, tagged with the store format and redacted (`model/redact.ts`). */
function storeJson(value: object): string {
  return redactedJsonFile({ format: SYNTH_STORE_FORMAT, ...value });
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
    return parseSlotLibrary(readableFormat(JSON.parse(text), path), path);
  }

  async save(library: SlotLibrary): Promise<void> {
    await writeRedactedFile(this.libraryPath(library.version), storeJson(library));
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
      const stored = readableFormat(JSON.parse(await readFile(path, "utf8")), path);
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
    await writeRedactedFile(path, storeJson(report));
    return path;
  }

  async savePatch(record: Omit<PatchRecord, "number">): Promise<PatchRecord> {
    const number = (await this.patches()).length + 1;
    const full: PatchRecord = { number, ...record };
    await writeRedactedFile(
      join(this.directory, "patches", `${String(number).padStart(4, "0")}.json`),
      storeJson(full),
    );
    // A readable diff beside the JSON, for reviewers who do not want to read escaped strings.
    await writeRedactedFile(
      join(this.directory, "patches", `${String(number).padStart(4, "0")}.diff`),
      `# ${full.status}: ${full.reason}\n# rationale: ${full.rationale}\n${full.diff}\n`,
    );
    return full;
  }
}
