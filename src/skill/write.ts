import { mkdir, mkdtemp, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { Document } from "yaml";
import { InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { formatFindingList } from "./format.js";
import { SKILL_FRONTMATTER_FIELDS, type SkillValidationResult } from "./types.js";
import { validateSkillFolder } from "./validate.js";

export interface SkillContent {
  /** Frontmatter fields; written in the specification's order. */
  readonly frontmatter: Readonly<Record<string, unknown>>;
  /** Markdown instructions after the frontmatter. */
  readonly body: string;
  /** Extra files by relative path (`scripts/run.py`, `references/api.md`). */
  readonly files?: Readonly<Record<string, string | Uint8Array>>;
}

/** The text of a `SKILL.md` for the given frontmatter and body. */
export function renderSkillMarkdown(
  frontmatter: Readonly<Record<string, unknown>>,
  body: string,
): string {
  const known: readonly string[] = SKILL_FRONTMATTER_FIELDS;
  const ordered: Record<string, unknown> = {};
  for (const key of known) if (frontmatter[key] !== undefined) ordered[key] = frontmatter[key];
  for (const [key, value] of Object.entries(frontmatter)) {
    if (!known.includes(key) && value !== undefined) ordered[key] = value;
  }
  // lineWidth 0: a folded description would still parse, but diffs of skills stay readable.
  const yaml = new Document(ordered).toString({ lineWidth: 0 });
  const trimmedBody = body.replace(/^\n+/, "");
  return `---\n${yaml}---\n\n${trimmedBody.endsWith("\n") ? trimmedBody : `${trimmedBody}\n`}`;
}

function checkRelativePath(path: string): void {
  const segments = path.split("/");
  const bad =
    path === "" ||
    path.includes("\\") ||
    path.includes("\0") ||
    path.startsWith("/") ||
    /^[a-zA-Z]:/.test(path) ||
    segments.some((segment) => segment === "" || segment === "." || segment === "..") ||
    path === "SKILL.md";
  if (bad) {
    throw new InputError(
      "skill.skill-file-path-invalid",
      `cannot write "${path}": extra files need a relative path inside the skill (no "..", no leading "/", not SKILL.md)`,
      { field: "files" },
    );
  }
}

/**
 * Write a skill folder at `dir` so that it is valid and appears all at once: the files are
 * written into a staging folder beside `dir`, validated there, then renamed into place. An
 * existing `dir` is replaced (moved aside, then deleted). Throws `InputError` listing the
 * findings when the content would not be a valid skill; nothing is written then.
 */
export async function writeSkillFolder(
  dir: string,
  content: SkillContent,
): Promise<SkillValidationResult> {
  const target = resolve(dir);
  const files = content.files ?? {};
  for (const path of Object.keys(files)) checkRelativePath(path);

  const parent = dirname(target);
  await mkdir(parent, { recursive: true });
  const staging = await mkdtemp(join(parent, `.${basename(target)}.write-`));
  try {
    const staged = join(staging, basename(target));
    await mkdir(staged);
    await writeFile(
      join(staged, "SKILL.md"),
      renderSkillMarkdown(content.frontmatter, content.body),
    );
    for (const [path, data] of Object.entries(files)) {
      await mkdir(dirname(join(staged, path)), { recursive: true });
      await writeFile(join(staged, path), data);
    }
    const check = await validateSkillFolder(staged);
    if (!check.valid) {
      throw new InputError(
        "skill.skill-invalid",
        `refusing to write an invalid skill to ${dir}:\n${formatFindingList(check.errors)}`,
        { file: dir },
        { data: { errors: check.errors } },
      );
    }
    const existing = await unlessMissing(target, stat(target));
    if (existing === undefined) {
      await rename(staged, target);
    } else {
      const previous = join(staging, "previous");
      await rename(target, previous);
      try {
        await rename(staged, target);
      } catch (error) {
        await rename(previous, target);
        throw error;
      }
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return validateSkillFolder(dir);
}
