/**
 * Synthesis: the fixed framework plus the slot library turn a target and retrieved evidence into
 * a temporary SKILL.md. The skill is checked with the Agent Skills validator (written to a
 * temporary folder) and must have the framework's required sections; a skill that fails is
 * recorded and the solver runs without one.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ModelClient } from "../model/index.js";
import { validateSkillFolder } from "../skill/index.js";
import { renderVisible, type VisibleTask } from "./family.js";
import { type PoolEntry, renderEvidence } from "./pool.js";
import { fillPrompt, promptText } from "./prompts.js";
import { renderSlots, type SlotLibrary } from "./slots.js";

/** Sections every synthesised skill body must have, in this order. */
export const requiredSections = ["When to use", "Approach", "Pitfalls", "Checks"] as const;

export type SynthesisTarget =
  | { readonly kind: "task"; readonly task: VisibleTask }
  | { readonly kind: "family"; readonly family: string; readonly description: string };

export interface SynthesisResult {
  /** The skill as the model wrote it (kept in the run log even when invalid). */
  readonly markdown: string;
  readonly valid: boolean;
  /** Why the skill was rejected: validator findings and missing sections. */
  readonly problems: readonly string[];
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** The synthesis prompt for a library, a target and evidence: the messages the model receives. */
export function synthesisPrompt(
  library: SlotLibrary,
  target: SynthesisTarget,
  evidence: readonly PoolEntry[],
): { system: string; prompt: string } {
  const system = fillPrompt(promptText("framework-v1.system.md"), {
    inputSlots: renderSlots(library.input),
    outputSlots: renderSlots(library.output),
    requiredSections: requiredSections.map((section) => `"## ${section}"`).join(", "),
  });
  const targetText =
    target.kind === "task"
      ? renderVisible(target.task)
      : fillPrompt(promptText("static-v1.user.md"), {
          family: target.family,
          description: target.description,
        });
  const prompt = fillPrompt(promptText("framework-v1.user.md"), {
    target: targetText,
    evidenceCount: String(evidence.length),
    evidence: renderEvidence(evidence),
  });
  return { system, prompt };
}

/** The SKILL.md text inside an answer that may wrap it in a code fence. */
export function extractSkillMarkdown(answer: string): string {
  const fenced = /```(?:markdown|md)?[^\n]*\n(---\n[\s\S]*?)```\s*$/i.exec(answer.trim());
  const text = fenced?.[1] ?? answer.trim();
  const start = text.indexOf("---");
  return `${(start > 0 ? text.slice(start) : text).trim()}\n`;
}

function skillName(markdown: string): string {
  const match = /^name:\s*["']?([^"'\n]+?)["']?\s*$/m.exec(markdown);
  const name = match?.[1]?.trim() ?? "";
  // The folder must carry the skill's own name for the name rule to be checked; anything unsafe
  // as a folder name is replaced and then reported by the validator as a mismatch.
  return /^[A-Za-z0-9._-]{1,100}$/.test(name) && name !== "." && name !== ".."
    ? name
    : "unnamed-skill";
}

/** Validate a SKILL.md text with the Agent Skills validator and the required sections. */
export async function checkSynthesisedSkill(markdown: string): Promise<string[]> {
  const parent = await mkdtemp(join(tmpdir(), "skillsmith-synth-skill-"));
  try {
    const folder = join(parent, skillName(markdown));
    await mkdir(folder);
    await writeFile(join(folder, "SKILL.md"), markdown);
    const result = await validateSkillFolder(folder);
    const problems = result.errors.map((finding) =>
      `${finding.code}: ${finding.message}`.replaceAll(parent, "<tmp>"),
    );
    let searchFrom = 0;
    for (const section of requiredSections) {
      const heading = new RegExp(`^##\\s+${section}\\s*$`, "im");
      const found = heading.exec(markdown.slice(searchFrom));
      if (found === null) problems.push(`missing or misplaced section "## ${section}"`);
      else searchFrom += found.index + found[0].length;
    }
    return problems;
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

export async function synthesiseSkill(
  model: ModelClient,
  library: SlotLibrary,
  target: SynthesisTarget,
  evidence: readonly PoolEntry[],
  signal?: AbortSignal,
): Promise<SynthesisResult> {
  const { system, prompt } = synthesisPrompt(library, target, evidence);
  const result = await model.generateText({
    role: "synthesiser",
    system,
    prompt,
    temperature: 0,
    ...(signal === undefined ? {} : { abortSignal: signal }),
  });
  const markdown = extractSkillMarkdown(result.text);
  const problems = await checkSynthesisedSkill(markdown);
  return {
    markdown,
    valid: problems.length === 0,
    problems,
    inputTokens: result.usage.inputTokens,
    outputTokens: result.usage.outputTokens,
  };
}
