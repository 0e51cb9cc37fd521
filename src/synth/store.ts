/**
 * The on-disk home of a family's slot libraries and patches: `libraries/<version>.json` for every
 * accepted version (v1 is the shipped initial library), `patches/<n>.json` for every proposed
 * patch (accepted or not) with rationale and diff, and `current` naming the latest version.
 * Every file is written through the redacting writers of `model/redact.ts`: slot texts, patch
 * rationales and optimisation reports come from model answers, which can quote a key.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../core/errors.js";
import { redactedJsonFile, writeRedactedFile } from "../model/redact.js";
import { promptText } from "./prompts.js";
import { parseSlotLibrary, type SlotLibrary } from "./slots.js";

export const initialLibraryVersion = "v1";

export function initialLibrary(): SlotLibrary {
  return parseSlotLibrary(JSON.parse(promptText("slots-v1.json")), "prompts/synth/slots-v1.json");
}

export interface PatchRecord {
  readonly number: number;
  readonly epoch: number;
  readonly baseVersion: string;
  /** The version it became when accepted. */
  readonly resultVersion?: string;
  readonly status: "accepted" | "rejected-invalid" | "rejected-no-gain";
  readonly reason: string;
  readonly rationale: string;
  readonly operations: readonly unknown[];
  readonly diff: string;
  readonly scores?: {
    readonly base: number;
    readonly candidate: number;
    readonly tasks: readonly string[];
  };
  readonly createdAt: string;
}

export class LibraryStore {
  constructor(readonly directory: string) {}

  private libraryPath(version: string): string {
    return join(this.directory, "libraries", `${version}.json`);
  }

  /** A stored version; v1 falls back to the shipped library when not stored yet. */
  async load(version: string): Promise<SlotLibrary> {
    if (!/^v\d+$/.test(version))
      throw new InputError(
        "synth.library.version",
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
      if ((error as NodeJS.ErrnoException).code === "ENOENT" && version === initialLibraryVersion)
        return initialLibrary();
      throw new InputError(
        "synth.library.missing",
        `library version ${version} is not stored`,
        {
          file: path,
        },
        { cause: error },
      );
    }
    return parseSlotLibrary(JSON.parse(text), path);
  }

  async save(library: SlotLibrary): Promise<void> {
    await writeRedactedFile(this.libraryPath(library.version), redactedJsonFile(library));
    await writeRedactedFile(join(this.directory, "current"), `${library.version}\n`);
  }

  /** The latest accepted version, v1 when nothing was optimised yet. */
  async current(): Promise<string> {
    try {
      return (
        (await readFile(join(this.directory, "current"), "utf8")).trim() || initialLibraryVersion
      );
    } catch {
      return initialLibraryVersion;
    }
  }

  async versions(): Promise<string[]> {
    const names = await readdir(join(this.directory, "libraries")).catch(() => [] as string[]);
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
    const names = (await readdir(directory).catch(() => [] as string[]))
      .filter((name) => name.endsWith(".json"))
      .sort();
    const records: PatchRecord[] = [];
    for (const name of names)
      records.push(JSON.parse(await readFile(join(directory, name), "utf8")) as PatchRecord);
    return records;
  }

  /**
   * Keep an optimisation's report (settings, epochs, cost) as `optimisations/<time>.json`;
   * returns the path.
   */
  async saveOptimisation(report: unknown, createdAt = new Date()): Promise<string> {
    const path = join(
      this.directory,
      "optimisations",
      `${createdAt.toISOString().replaceAll(":", "-")}.json`,
    );
    await writeRedactedFile(path, redactedJsonFile(report));
    return path;
  }

  async savePatch(record: Omit<PatchRecord, "number">): Promise<PatchRecord> {
    const number = (await this.patches()).length + 1;
    const full: PatchRecord = { number, ...record };
    await writeRedactedFile(
      join(this.directory, "patches", `${String(number).padStart(4, "0")}.json`),
      redactedJsonFile(full),
    );
    // A readable diff beside the JSON, for reviewers who do not want to read escaped strings.
    await writeRedactedFile(
      join(this.directory, "patches", `${String(number).padStart(4, "0")}.diff`),
      `# ${full.status}: ${full.reason}\n# rationale: ${full.rationale}\n${full.diff}\n`,
    );
    return full;
  }
}
