/**
 * Export a wiki entry as an Agent Skills folder (`SKILL.md` + `scripts/` + `assets/` +
 * `references/`), so a wiki skill installs into Claude Code or Codex like any other skill.
 */
import { readFile } from "node:fs/promises";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import { InputError } from "../core/errors.js";
import { NAME_MAX_LENGTH, type SkillValidationResult, writeSkillFolder } from "../skill/index.js";
import { OVERVIEW_FILE, type WikiEntry } from "./store.js";

const DESCRIPTION_LIMIT = 1024;

/** The skill name for an entry: its name as lowercase hyphen words, within the spec's 64 characters. */
export function exportedSkillName(skillName: string): string {
  const words = skillName
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
  let name = "";
  for (const word of words) {
    const next = name === "" ? word : `${name}-${word}`;
    if (next.length > NAME_MAX_LENGTH) break;
    name = next;
  }
  return name === "" ? "wiki-skill" : name;
}

export interface ExportResult {
  readonly name: string;
  readonly dir: string;
  readonly validation: SkillValidationResult;
}

/**
 * A file the entry's `meta.json` lists, read from inside the entry's folder. A wiki may come from
 * someone else, so a listed path that leaves the folder is refused, and a missing or unreadable
 * file is an error naming the entry and the file instead of a bare ENOENT.
 */
async function entryFile(entry: WikiEntry, listed: string): Promise<Buffer> {
  const root = resolve(entry.dir);
  const path = resolve(root, listed);
  const inside = relative(root, path);
  const location = { file: join(entry.dir, "meta.json"), field: "files" };
  if (inside === "" || inside.startsWith("..") || isAbsolute(inside))
    throw new InputError(
      "wiki.entry-file-outside",
      `entry ${entry.meta.skill_id} lists "${listed}", which is outside its folder`,
      location,
    );
  try {
    return await readFile(path);
  } catch (cause) {
    throw new InputError(
      "wiki.entry-file-missing",
      `entry ${entry.meta.skill_id} lists "${listed}", which cannot be read (${(cause as NodeJS.ErrnoException).code ?? "error"}): rebuild the wiki or remove the entry`,
      location,
      { cause },
    );
  }
}

/** Write the entry as `<parent>/<name>/`; returns where and the validation of the written folder. */
export async function exportEntry(entry: WikiEntry, parent: string): Promise<ExportResult> {
  const { meta } = entry;
  const name = exportedSkillName(meta.skill_name);
  const overview = (await entryFile(entry, OVERVIEW_FILE)).toString("utf8");
  const files: Record<string, Uint8Array> = {};
  const scripts: string[] = [];
  const assets: string[] = [];
  for (const listed of meta.files.code) {
    const target = `scripts/${basename(listed)}`;
    files[target] = await entryFile(entry, listed);
    scripts.push(target);
  }
  for (const listed of meta.files.visual) {
    const target = `assets/${basename(listed)}`;
    files[target] = await entryFile(entry, listed);
    assets.push(target);
  }
  const provenanceLines = meta.provenance.map(
    (each) =>
      `- ${each.source_path} (${each.resource_type}, ${each.locator}), sha256 ${each.sha256}, licence ${each.licence ?? "unknown"} (${each.licence_flag})`,
  );
  files["references/provenance.md"] = Buffer.from(
    `# Provenance\n\nDistilled into the skill wiki (domain ${meta.domain}, id ${meta.skill_id}) from:\n\n${provenanceLines.join("\n")}\n`,
  );
  const description = truncate(
    `${meta.skill_name}. Use when: ${meta.applicability}`.replace(/\s+/g, " ").trim(),
    DESCRIPTION_LIMIT,
  );
  const body = [
    overview.trim(),
    "",
    ...(scripts.length === 0
      ? []
      : [
          "## Scripts",
          "",
          ...scripts.map(
            (script) =>
              `- \`${script}\` (${meta.code_language ?? "code"}; sandbox check: exec_ok ${String(meta.exec_ok)})`,
          ),
          "",
        ]),
    ...(assets.length === 0
      ? []
      : ["## Assets", "", ...assets.map((asset) => `- \`${asset}\``), ""]),
    "See `references/provenance.md` for where this skill came from.",
  ].join("\n");
  const dir = join(parent, name);
  const validation = await writeSkillFolder(dir, {
    frontmatter: {
      name,
      description,
      metadata: {
        "skillsmith-wiki-id": meta.skill_id,
        "skillsmith-wiki-domain": meta.domain,
        "skillsmith-wiki-category": meta.category_path.join("/"),
        "skillsmith-wiki-status": meta.validation_status,
      },
    },
    body,
    files,
  });
  return { name, dir, validation };
}

function truncate(text: string, limit: number): string {
  const points = [...text];
  return points.length <= limit ? text : `${points.slice(0, limit - 1).join("")}…`;
}
