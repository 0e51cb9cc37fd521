/**
 * The `<available_skills>` block agents put in their context: for each skill its name, its
 * description and where its `SKILL.md` lies, so the model can decide which to load (the
 * progressive disclosure of the Agent Skills format). Text is XML-escaped: a description holding
 * `</description><skill>…` must stay a description, not become a second skill.
 */
import { resolve } from "node:path";
import { InputError } from "../core/errors.js";
import { formatFindingList } from "./format.js";
import { SKILL_FILE_NAME } from "./parse.js";
import { checkSkillFolder, toValidationResult } from "./validate.js";

export interface PromptSkill {
  readonly name: string;
  readonly description: string;
  /** Where the agent reads the skill's `SKILL.md`. */
  readonly location: string;
}

/** Escape the five XML special characters (quotes too: the text may end up in an attribute). */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

export function renderAvailableSkills(skills: readonly PromptSkill[]): string {
  const lines = ["<available_skills>"];
  for (const skill of skills) {
    lines.push(
      "<skill>",
      `<name>${escapeXml(skill.name)}</name>`,
      `<description>${escapeXml(skill.description)}</description>`,
      `<location>${escapeXml(skill.location)}</location>`,
      "</skill>",
    );
  }
  lines.push("</available_skills>");
  return lines.join("\n");
}

/**
 * The prompt entries of skill folders, validated: an invalid skill is refused (`InputError`
 * naming its errors), since an agent would not load it either.
 */
export async function promptSkillsOf(folders: readonly string[]): Promise<PromptSkill[]> {
  const skills: PromptSkill[] = [];
  for (const folder of folders) {
    const checked = await checkSkillFolder(folder);
    const result = toValidationResult(checked);
    if (!result.valid || checked.frontmatter === undefined)
      throw new InputError(
        "skill.skill-invalid",
        `not a valid skill:\n${formatFindingList(result.errors)}`,
        { file: folder },
      );
    skills.push({
      name: checked.frontmatter.name,
      description: checked.frontmatter.description,
      location: resolve(folder, SKILL_FILE_NAME),
    });
  }
  return skills;
}
