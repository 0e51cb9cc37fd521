/**
 * Deterministic checks on what the requirement engineer and the test engineer answered. They
 * never call a model, so a finding is reproducible and can be argued with.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "../../core/process.js";
import { findKeywordOnlyChecks } from "../../env/index.js";

export interface GeneratedRequirement {
  readonly id: string;
  readonly background: string;
  readonly requirement: string;
  readonly fileOperations: readonly string[];
  readonly acceptanceCriteria: readonly string[];
}

/**
 * Words in a row shared with the skill body above which a requirement counts as restating the
 * skill. Twelve words is longer than any natural shared phrase ("the function should return a
 * list of") and shorter than a copied checklist step.
 */
export const RESTATEMENT_WORD_RUN = 12;

/** Lower case, punctuation to spaces, whitespace collapsed: the form duplicates are compared in. */
export function normaliseText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

function words(text: string): string[] {
  const normalised = normaliseText(text);
  return normalised === "" ? [] : normalised.split(" ");
}

/** The longest run of consecutive words the two texts share (longest common word substring). */
export function longestSharedWordRun(candidate: string, reference: string): number {
  const candidateWords = words(candidate);
  const referenceWords = words(reference);
  // Dynamic programming over word positions; texts are a few thousand words at most.
  let previous = new Array<number>(referenceWords.length + 1).fill(0);
  let longest = 0;
  for (const word of candidateWords) {
    const current = new Array<number>(referenceWords.length + 1).fill(0);
    for (let index = 0; index < referenceWords.length; index += 1) {
      if (referenceWords[index] === word) {
        const run = (previous[index] ?? 0) + 1;
        current[index + 1] = run;
        if (run > longest) longest = run;
      }
    }
    previous = current;
  }
  return longest;
}

/**
 * Problems with a requirement engineer's answer: fewer requirements than asked, duplicates (same
 * normalised requirement text, or same id) and requirements that restate the skill (a run of at
 * least `RESTATEMENT_WORD_RUN` words copied from the skill body).
 */
export function requirementFindings(
  requirements: readonly GeneratedRequirement[],
  skillBody: string,
  expected: number,
): { findings: string[]; rejected: Set<number> } {
  const findings: string[] = [];
  const rejected = new Set<number>();
  const seenText = new Map<string, string>();
  const seenId = new Map<string, number>();
  requirements.forEach((requirement, index) => {
    const key = normaliseText(requirement.requirement);
    const earlier = seenText.get(key);
    if (earlier !== undefined) {
      findings.push(
        `requirement "${requirement.id}" duplicates requirement "${earlier}" (same requirement text); write a different one`,
      );
      rejected.add(index);
      return;
    }
    seenText.set(key, requirement.id);
    const idKey = requirement.id.toLowerCase();
    if (seenId.has(idKey)) {
      findings.push(`id "${requirement.id}" is used twice; ids must be unique`);
    }
    seenId.set(idKey, index);
    const text = [
      requirement.background,
      requirement.requirement,
      ...requirement.acceptanceCriteria,
    ].join("\n");
    const run = longestSharedWordRun(text, skillBody);
    if (run >= RESTATEMENT_WORD_RUN) {
      findings.push(
        `requirement "${requirement.id}" restates the skill (${run} consecutive words copied from the skill document); describe the outcome, not the skill's method`,
      );
      rejected.add(index);
    }
  });
  const kept = requirements.length - rejected.size;
  if (kept < expected) {
    findings.push(`expected ${expected} distinct requirements, got ${kept} usable ones`);
  }
  return { findings, rejected };
}

export interface TestFileCheck {
  readonly testCount: number;
  readonly missingDocstrings: readonly string[];
  readonly findings: readonly string[];
}

const testDefinition = /^(\s*)(?:async\s+)?def\s+(test_\w*)\s*\(/;

/**
 * Count `def test_*` functions and check each has a docstring: the first statement after the
 * signature (which may span lines, ending at the line that ends with `:`) is a string literal.
 */
export function inspectTestFile(
  content: string,
  minTests: number,
  fileName: string,
): TestFileCheck {
  const lines = content.split(/\r?\n/);
  const missingDocstrings: string[] = [];
  let testCount = 0;
  for (let index = 0; index < lines.length; index += 1) {
    const match = testDefinition.exec(lines[index] ?? "");
    if (match === null) continue;
    testCount += 1;
    let cursor = index;
    while (cursor < lines.length && !/:\s*(#.*)?$/.test(lines[cursor] ?? "")) cursor += 1;
    cursor += 1;
    while (cursor < lines.length && /^\s*(#.*)?$/.test(lines[cursor] ?? "")) cursor += 1;
    const first = (lines[cursor] ?? "").trim();
    if (!/^[rRuUbBfF]{0,2}("""|'''|"|')/.test(first)) missingDocstrings.push(match[2] ?? "");
  }
  const findings: string[] = [];
  if (testCount < minTests) {
    findings.push(`${fileName}: ${testCount} test functions; at least ${minTests} are required`);
  }
  if (missingDocstrings.length > 0) {
    findings.push(
      `${fileName}: tests without a docstring: ${missingDocstrings.join(", ")}; every test needs one`,
    );
  }
  for (const finding of findKeywordOnlyChecks([{ path: fileName, content }])) {
    findings.push(
      `${finding.file}:${finding.line} ${finding.test} only searches source text (${finding.reason}); run the code instead`,
    );
  }
  return { testCount, missingDocstrings, findings };
}

/** Whether Python can compile the file; the compiler's message when it cannot. */
export async function pythonCompileFinding(
  content: string,
  fileName: string,
): Promise<string | undefined> {
  const folder = await mkdtemp(join(tmpdir(), "skillsmith-compile-"));
  try {
    const path = join(folder, fileName);
    await writeFile(path, content);
    const result = await runProcess("python3", ["-m", "py_compile", path], {
      timeoutMs: 30_000,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONPYCACHEPREFIX: folder },
    });
    if (result.spawnError !== undefined) {
      return `could not run python3 to compile ${fileName}: ${result.spawnError.message}`;
    }
    if (result.exitCode === 0) return undefined;
    const message = `${result.stderr}${result.stdout}`.split(folder).join("").trim();
    return `${fileName} does not compile: ${message.split("\n").slice(-4).join(" ")}`;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
