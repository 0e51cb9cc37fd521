import { randomBytes } from "node:crypto";
import { cp, mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { stringify } from "yaml";
import { InputError } from "../../core/errors.js";
import { pathKind } from "../suite/files.js";

/** Something of the source that was not imported (or imported incompletely), and why. */
export interface ImportProblem {
  /** The source file or folder, relative to the input folder when inside it. */
  readonly path: string;
  readonly message: string;
}

/** A file copied beside a verifier because the verifier imports it (or pytest loads it). */
export interface CopiedHelper {
  /** The source file, relative to the input folder. */
  readonly path: string;
  /** Where it was written, relative to the suite folder. */
  readonly into: string;
  /** `skill/requirement` whose verifier needs it. */
  readonly for: string;
}

export interface ImportResult {
  /** Absolute path of the suite written; absent when nothing could be imported. */
  readonly out?: string;
  readonly skills: number;
  readonly requirements: number;
  readonly problems: ImportProblem[];
  /** Quirks handled soundly (e.g. merged duplicate keys), for the human log only. */
  readonly notes: string[];
  /** Helper files copied beside the verifiers that import them. */
  readonly copied?: CopiedHelper[];
  /** The commands to run next, as the importer knows them for its layout (printed as hints). */
  readonly next?: readonly string[];
}

// The importers ask the suite loader's question, with its answer for unreadable paths.
export { pathKind };

/**
 * A suite is written into a hidden sibling folder and renamed into place at the end, so an
 * interrupted import never leaves a half-written suite at `--out`.
 */
export class SuiteStaging {
  private constructor(
    readonly out: string,
    readonly folder: string,
  ) {}

  static async open(out: string): Promise<SuiteStaging> {
    const target = resolve(out);
    const kind = await pathKind(target);
    if (kind === "file" || kind === "other") {
      throw new InputError("bench.suite-out-exists", `--out ${out} exists and is not a folder`, {
        file: out,
      });
    }
    if (kind === "directory" && (await readdir(target)).length > 0) {
      throw new InputError(
        "bench.suite-out-exists",
        `--out ${out} already exists and is not empty; choose a new folder (imports never overwrite)`,
        { file: out },
      );
    }
    const folder = join(
      dirname(target),
      `.${basename(target)}.import-${randomBytes(4).toString("hex")}`,
    );
    await mkdir(folder, { recursive: true });
    return new SuiteStaging(target, folder);
  }

  async writeYaml(relativePath: string, value: unknown, header?: string): Promise<void> {
    const comment = header === undefined ? "" : `${header.replace(/^/gm, "# ")}\n`;
    await this.writeText(relativePath, `${comment}${stringify(value, { lineWidth: 0 })}`);
  }

  async writeText(relativePath: string, text: string | Uint8Array): Promise<void> {
    const path = join(this.folder, relativePath);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }

  async copy(source: string, relativePath: string): Promise<void> {
    const path = join(this.folder, relativePath);
    await mkdir(dirname(path), { recursive: true });
    await cp(source, path, { recursive: true, verbatimSymlinks: true });
  }

  async commit(): Promise<string> {
    if ((await pathKind(this.out)) === "directory") await rm(this.out, { recursive: true });
    await mkdir(dirname(this.out), { recursive: true });
    await rename(this.folder, this.out);
    return this.out;
  }

  async discard(): Promise<void> {
    await rm(this.folder, { recursive: true, force: true });
  }
}

/** `8g` → 8192, `512m` → 512, `2G` → 2048; a bare number is bytes (the Docker convention). */
export function memoryToMegabytes(value: unknown): number | undefined {
  if (typeof value === "number" && value > 0) return Math.max(1, Math.round(value / 1024 / 1024));
  if (typeof value !== "string") return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(value);
  if (match?.[1] === undefined) return undefined;
  const amount = Number(match[1]);
  const unit = (match[2] ?? "").toLowerCase();
  const factor: Record<string, number> = {
    "": 1 / 1024 / 1024,
    k: 1 / 1024,
    m: 1,
    g: 1024,
    t: 1024 * 1024,
  };
  const megabytes = Math.round(amount * (factor[unit] ?? 0));
  return megabytes > 0 ? megabytes : undefined;
}

/** `"4"` → 4, `2.5` → 2.5; anything else is absent. */
export function positiveNumber(value: unknown): number | undefined {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) && number > 0 ? number : undefined;
}

/** A folder-safe id derived from a name: lower case, runs of other characters become `-`. */
export function toId(name: string): string {
  const id = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .replace(/[-.]+$/, "")
    .slice(0, 128);
  return id === "" ? "task" : id;
}
