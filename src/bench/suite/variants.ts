/**
 * Skill variants: further versions of a suite skill's Agent Skills folders, each run as its own
 * arm (`variant:<name>`) beside `with` (the suite's own folders) and `without` (none), so every
 * pair of arms can be compared. Declared in `skill.yaml` (`variants: {v2: [path, …]}`, paths
 * relative to the skill folder) or on the command line (`--variant v2=path`,
 * `--variant <skill>:v2=path` in a suite with several skills).
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { UsageError } from "../../core/errors.js";
import { unlessMissing } from "../../core/fs.js";
import { validateSkillFolder } from "../../skill/validate.js";
import type { Suite, SuiteSkill } from "./types.js";

/** Variant names: short ids that cannot be mistaken for the two fixed arms. */
export const VARIANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const RESERVED = new Set(["with", "without", "none", "skill"]);

export function isVariantName(name: string): boolean {
  return VARIANT_NAME.test(name) && !RESERVED.has(name);
}

export interface VariantOption {
  /** The skill it belongs to; undefined means the suite's only skill. */
  readonly skill?: string;
  readonly name: string;
  /** The Agent Skills folder (absolute). */
  readonly folder: string;
}

/** Parse one `--variant [skill:]name=path` value (path resolved against `cwd`). */
export function parseVariantOption(text: string, cwd: string): VariantOption {
  const equals = text.indexOf("=");
  const head = equals < 0 ? "" : text.slice(0, equals);
  const path = equals < 0 ? "" : text.slice(equals + 1);
  const colon = head.indexOf(":");
  const skill = colon < 0 ? undefined : head.slice(0, colon);
  const name = colon < 0 ? head : head.slice(colon + 1);
  if (path === "" || !isVariantName(name) || skill === "") {
    throw new UsageError(
      "bench.variant-invalid",
      `--variant ${JSON.stringify(text)}: expected [skill:]name=path, name of letters, digits, . _ - (not with, without, none or skill)`,
    );
  }
  return { ...(skill === undefined ? {} : { skill }), name, folder: resolve(cwd, path) };
}

/**
 * Parse one `--variant [skill:]name=dirA,dirB` value: one option per folder, all of one name,
 * so a variant arm can hold several skills (a peer benchmark's multi-skill treatment).
 */
export function parseVariantOptions(text: string, cwd: string): VariantOption[] {
  const first = parseVariantOption(text, cwd);
  const path = text.slice(text.indexOf("=") + 1);
  const folders = path.split(",");
  if (folders.some((folder) => folder === "")) {
    throw new UsageError(
      "bench.variant-invalid",
      `--variant ${JSON.stringify(text)}: expected [skill:]name=dir[,dir...] with no empty folder`,
    );
  }
  return folders.map((folder) => ({ ...first, folder: resolve(cwd, folder) }));
}

/**
 * The suite with the command line's variants added to their skills. Each folder must be a valid
 * Agent Skills folder; a name the skill already has in skill.yaml, or the same folder twice, is
 * a usage error, so one arm never means two things. Options of one name add their folders to
 * one arm (`--variant v2=a,b`).
 */
export async function withVariants(
  suite: Suite,
  options: readonly VariantOption[],
): Promise<Suite> {
  if (options.length === 0) return suite;
  const added = new Map<string, Map<string, string[]>>();
  for (const option of options) {
    // Checked here, not only by the CLI's parser: library callers build these values themselves,
    // and a reserved arm name or a path would make one arm mean two things or name stray files.
    if (!isVariantName(option.name)) {
      throw new UsageError(
        "bench.variant-invalid",
        `variant name ${JSON.stringify(option.name)}: letters, digits, . _ - (not with, without, none or skill)`,
      );
    }
    let skill: SuiteSkill | undefined;
    if (option.skill === undefined) {
      if (suite.skills.length !== 1) {
        throw new UsageError(
          "bench.variant-skill-ambiguous",
          `--variant ${option.name}=…: the suite has ${suite.skills.length} skills; name one as --variant <skill>:${option.name}=<path> (skills: ${suite.skills.map((item) => item.id).join(", ")})`,
        );
      }
      skill = suite.skills[0];
    } else {
      skill = suite.skills.find((item) => item.id === option.skill);
    }
    if (skill === undefined) {
      throw new UsageError(
        "bench.variant-skill-unknown",
        `--variant ${option.skill}:${option.name}: the suite has no skill "${option.skill}"`,
      );
    }
    const own = added.get(skill.id) ?? new Map<string, string[]>();
    const folders = own.get(option.name) ?? [];
    if (skill.variants?.[option.name] !== undefined || folders.includes(option.folder)) {
      throw new UsageError(
        "bench.variant-duplicate",
        `variant "${option.name}" of skill ${skill.id} is given twice${folders.includes(option.folder) ? ` with ${option.folder}` : " (skill.yaml declares it)"}`,
      );
    }
    await checkVariantFolder(option.folder, `--variant ${option.name}`);
    own.set(option.name, [...folders, option.folder]);
    added.set(skill.id, own);
  }
  return {
    ...suite,
    skills: suite.skills.map((skill) => {
      const own = added.get(skill.id);
      if (own === undefined) return skill;
      return { ...skill, variants: { ...(skill.variants ?? {}), ...Object.fromEntries(own) } };
    }),
  };
}

/** A variant folder must be a valid Agent Skills folder, like the suite's own. */
export async function checkVariantFolder(folder: string, where: string): Promise<void> {
  const info = await unlessMissing(folder, stat(folder));
  if (info?.isDirectory() !== true) {
    throw new UsageError("bench.variant-folder-missing", `${where}: ${folder} is not a folder`);
  }
  const validation = await validateSkillFolder(folder);
  if (validation.errors.length > 0) {
    const first = validation.errors[0];
    throw new UsageError(
      "bench.variant-folder-invalid",
      `${where}: ${folder} is not a valid Agent Skills folder: ${first?.message ?? "invalid"}${validation.errors.length > 1 ? ` (and ${validation.errors.length - 1} more)` : ""}`,
    );
  }
}

/** The variant names of a skill, sorted, so arms come in one order everywhere. */
export function variantNames(skill: Pick<SuiteSkill, "variants">): string[] {
  return Object.keys(skill.variants ?? {}).sort();
}
