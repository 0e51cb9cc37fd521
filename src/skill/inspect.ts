import type { SkillEntry } from "./files.js";
import type { SkillValidationResult } from "./types.js";
import { checkSkillFolder, countLines, estimateTokens, toValidationResult } from "./validate.js";

export type SkillModality = "text" | "scripts" | "references" | "assets";

export interface SkillInspection extends SkillValidationResult {
  /** The frontmatter as written (also when invalid); empty when there is none. */
  readonly properties: Readonly<Record<string, unknown>>;
  /** `allowed-tools` split into names. */
  readonly allowedTools: string[];
  readonly files: SkillEntry[];
  readonly body: {
    readonly lines: number;
    readonly characters: number;
    /** 4 characters per token, rounded up. */
    readonly tokenEstimate: number;
  };
  readonly modalities: SkillModality[];
}

/** Everything a person wants to know about a skill folder at a glance. Never throws. */
export async function inspectSkillFolder(path: string): Promise<SkillInspection> {
  const checked = await checkSkillFolder(path);
  const markdown = checked.loaded.markdown;
  const properties = markdown?.frontmatter ?? {};
  const body = markdown?.body ?? "";
  const files = checked.loaded.tree?.entries ?? [];
  const tools = properties["allowed-tools"];
  const allowedTools =
    typeof tools === "string"
      ? tools.split(/\s+/).filter((tool) => tool !== "")
      : Array.isArray(tools)
        ? tools.filter((tool): tool is string => typeof tool === "string")
        : [];
  const hasFilesUnder = (folder: string): boolean =>
    files.some((entry) => entry.kind === "file" && entry.path.startsWith(`${folder}/`));
  const modalities: SkillModality[] = [];
  if (body.trim() !== "") modalities.push("text");
  for (const folder of ["scripts", "references", "assets"] as const) {
    if (hasFilesUnder(folder)) modalities.push(folder);
  }
  return {
    ...toValidationResult(checked),
    properties,
    allowedTools,
    files,
    body: {
      lines: countLines(body),
      characters: body.length,
      tokenEstimate: estimateTokens(body),
    },
    modalities,
  };
}
