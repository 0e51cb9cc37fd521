/**
 * `bench generate`: a suite for users who bring only a skill and a repository (protocol A steps
 * 2–3). A requirement engineer writes the requirements; a test engineer writes one pytest file
 * per requirement; every file is checked deterministically and then run on the untouched
 * repository (negative control), and weak ones are regenerated with the findings.
 *
 * One file although past 400 lines: it is one pipeline (ask requirements, ask and check
 * verifiers, write the suite) in the order it runs; the prompts and repository description are
 * already apart.
 */
import { cp, mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { stringify as stringifyYaml } from "yaml";
import { z } from "zod";
import { InputError, InternalError } from "../../core/errors.js";
import { unreadableError, writeFileAtomic } from "../../core/fs.js";
import {
  type PreparedBase,
  prepareBase,
  type SandboxV1,
  type VerifierSpec,
  validateVerifier,
} from "../../env/index.js";
import type { ModelClient, UsageTotals } from "../../model/index.js";
import { parseSkillMarkdown, SKILL_FILE_NAME, validateSkillFolder } from "../../skill/index.js";
import {
  AGENT_SKILLS_FOLDER,
  REQUIREMENT_FILE,
  REQUIREMENTS_FOLDER,
  SKILL_FILE,
  SKILLS_FOLDER,
  SUITE_FILE,
  VERIFIER_FILE,
  VERIFIER_FOLDER,
} from "../suite/layout.js";
import { validateSuite } from "../suite/load.js";
import { SUITE_FORMAT } from "../suite/schema.js";
import type { SuiteProblem } from "../suite/types.js";
import {
  type GeneratedRequirement,
  inspectTestFile,
  pythonCompileFinding,
  requirementFindings,
} from "./checks.js";
import { benchPromptText, fillBenchPrompt, GENERATION_PROMPT_VERSION } from "./prompts.js";
import { describeRepository, type RepositoryMetadata } from "./repository.js";

export const REQUIREMENT_ENGINEER_ROLE = "requirement-engineer";
export const TEST_ENGINEER_ROLE = "test-engineer";
/** Where generated verifiers are mounted in suites (outside `/workspace/<repo>`). */
const VERIFIER_MOUNT = "/workspace/tests";

const requirementSchema = z.object({
  id: z.string().min(1),
  background: z.string().min(1),
  requirement: z.string().min(1),
  fileOperations: z.array(z.string().min(1)),
  acceptanceCriteria: z.array(z.string().min(1)).min(1),
});
const requirementsAnswerSchema = z.object({ requirements: z.array(requirementSchema).min(1) });
const testFileAnswerSchema = z.object({ fileName: z.string().min(1), content: z.string().min(1) });

export interface GenerateSuiteOptions {
  readonly skill: string;
  /** A URL, folder or bundle path (anything `prepareBase` accepts). */
  readonly repository: string;
  readonly commit: string;
  readonly out: string;
  readonly model: ModelClient;
  readonly sandbox: SandboxV1;
  readonly requirements?: number;
  readonly minTests?: number;
  /** Regenerations of a verifier after its first attempt (0 = never regenerate). */
  readonly maxRounds?: number;
  readonly cacheDir?: string;
  /** Progress lines for a person (the CLI sends them to stderr). */
  readonly onLog?: (line: string) => void;
}

export interface GeneratedVerifierSummary {
  readonly requirement: string;
  readonly file: string;
  readonly tests: number;
  readonly rounds: number;
  readonly weak: boolean;
  /** Findings of the last round; empty when the verifier is sound. */
  readonly findings: readonly string[];
}

export interface GenerateSuiteResult {
  readonly out: string;
  readonly skill: string;
  readonly requirements: number;
  readonly requirementRounds: number;
  /** Findings that remained after the requirement engineer's last answer. */
  readonly requirementFindings: readonly string[];
  readonly verifiers: readonly GeneratedVerifierSummary[];
  readonly weak: number;
  readonly usage: Readonly<Record<string, UsageTotals>>;
  readonly suiteProblems: readonly SuiteProblem[];
  readonly valid: boolean;
}

/** Requirement ids become folder names: letters, digits, `.`, `_`, `-`, unique. */
function folderIds(requirements: readonly GeneratedRequirement[]): string[] {
  const used = new Set<string>();
  return requirements.map((requirement, index) => {
    const cleaned =
      requirement.id
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, "-")
        .replace(/^[^a-z0-9]+/, "")
        .slice(0, 60) || `requirement-${index + 1}`;
    let id = cleaned;
    for (let suffix = 2; used.has(id); suffix += 1) id = `${cleaned}-${suffix}`;
    used.add(id);
    return id;
  });
}

function findingsBlock(findings: readonly string[]): string {
  if (findings.length === 0) return "";
  return [
    "",
    "# Findings on your previous answer (fix every one)",
    "",
    ...findings.map((finding) => `- ${finding}`),
  ].join("\n");
}

function bulletList(items: readonly string[]): string {
  return items.length === 0 ? "(none)" : items.map((item) => `- ${item}`).join("\n");
}

export function renderRequirementMarkdown(requirement: GeneratedRequirement): string {
  return [
    "## Background",
    "",
    requirement.background.trim(),
    "",
    "## Requirement",
    "",
    requirement.requirement.trim(),
    "",
    "## File Operations",
    "",
    bulletList(requirement.fileOperations.map((path) => `\`${path}\``)),
    "",
    "## Acceptance Criteria",
    "",
    bulletList(requirement.acceptanceCriteria),
    "",
  ].join("\n");
}

interface LoadedSkill {
  readonly folder: string;
  readonly name: string;
  readonly description: string;
  readonly body: string;
}

async function loadSkill(folder: string): Promise<LoadedSkill> {
  const validation = await validateSkillFolder(folder);
  if (!validation.valid) {
    const first = validation.errors[0];
    throw new InputError(
      "bench.generate-skill-invalid",
      `--skill ${folder} is not a valid Agent Skills folder: ${validation.errors.map((error) => error.message).join("; ")}`,
      { file: first?.file ?? join(folder, SKILL_FILE_NAME), field: "--skill" },
    );
  }
  const file = join(folder, SKILL_FILE_NAME);
  const parsed = parseSkillMarkdown(await readFile(file, "utf8"), file);
  const name = parsed.frontmatter?.name;
  const description = parsed.frontmatter?.description;
  return {
    folder,
    name: typeof name === "string" ? name : basename(folder),
    description: typeof description === "string" ? description : "",
    body: parsed.body,
  };
}

/** What both model roles are told about the repository (prompt placeholders by name). */
function repositoryPromptFields(repository: RepositoryMetadata): Record<string, string> {
  return {
    repositoryName: repository.name,
    language: repository.language,
    testCommand: repository.testCommand,
    structure: repository.structure,
  };
}

async function askRequirements(
  options: GenerateSuiteOptions,
  skill: LoadedSkill,
  repository: RepositoryMetadata,
  count: number,
): Promise<{ requirements: GeneratedRequirement[]; rounds: number; findings: string[] }> {
  const system = fillBenchPrompt(benchPromptText("requirement-engineer-v1.system.md"), {
    count: String(count),
  });
  let findings: string[] = [];
  let kept: GeneratedRequirement[] = [];
  let rounds = 0;
  // One answer, and one re-ask with the findings when the first had problems.
  for (let round = 1; round <= 2; round += 1) {
    rounds = round;
    const prompt = fillBenchPrompt(benchPromptText("requirement-engineer-v1.user.md"), {
      skillName: skill.name,
      skillDescription: skill.description,
      skillBody: skill.body,
      ...repositoryPromptFields(repository),
      commit: repository.commit,
      readme: repository.readme,
      findings: findingsBlock(findings),
    });
    const answer = await options.model.generateObject(requirementsAnswerSchema, {
      role: REQUIREMENT_ENGINEER_ROLE,
      system,
      prompt,
    });
    const checked = requirementFindings(answer.object.requirements, skill.body, count);
    findings = checked.findings;
    kept = answer.object.requirements.filter((_requirement, index) => !checked.rejected.has(index));
    options.onLog?.(
      `requirement engineer, round ${round}: ${kept.length} usable requirements${findings.length > 0 ? `, ${findings.length} findings` : ""}`,
    );
    if (findings.length === 0) break;
  }
  if (kept.length === 0) {
    throw new InputError(
      "bench.generate-no-requirements",
      `the requirement engineer produced no usable requirement: ${findings.join("; ")}`,
    );
  }
  return { requirements: kept.slice(0, count), rounds, findings };
}

interface VerifierAttempt {
  readonly content: string;
  readonly tests: number;
  readonly findings: string[];
  /** True when the static checks passed and the negative control ran. */
  readonly validated: boolean;
}

async function negativeControl(
  options: GenerateSuiteOptions,
  base: PreparedBase,
  fileName: string,
  content: string,
): Promise<string[]> {
  // `validateVerifier` writes verifier files into the workspace root; a hidden folder keeps
  // them away from the repository's own tests, and `python -m pytest` puts the root on sys.path.
  const folder = ".skillsmith-verifier";
  const verifier: VerifierSpec = {
    files: [{ path: `${folder}/${fileName}`, content }],
    command: `python3 -m pytest -q -p no:cacheprovider ${folder}/${fileName} --junitxml=${folder}/junit.xml`,
    resultsFile: `${folder}/junit.xml`,
    timeoutMs: 120_000,
  };
  const validation = await validateVerifier({ base, verifier, sandbox: options.sandbox });
  return validation.problems.map((problem) =>
    problem.startsWith("negative control:")
      ? `${problem} (these checks cannot tell a solution from no change: make them depend on the new behaviour)`
      : problem,
  );
}

async function generateVerifier(
  options: GenerateSuiteOptions,
  base: PreparedBase,
  repository: RepositoryMetadata,
  requirement: GeneratedRequirement,
  id: string,
  minTests: number,
  maxRounds: number,
): Promise<GeneratedVerifierSummary & { content: string }> {
  const idUnderscored = id.replace(/[^a-zA-Z0-9]+/g, "_");
  const fileName = `test_${idUnderscored}.py`;
  const system = fillBenchPrompt(benchPromptText("test-engineer-v1.system.md"), {
    minTests: String(minTests),
    mountPath: repository.mountPath,
  });
  let findings: string[] = [];
  let best: VerifierAttempt | undefined;
  let last: VerifierAttempt | undefined;
  let rounds = 0;
  for (let round = 1; round <= 1 + maxRounds; round += 1) {
    rounds = round;
    const prompt = fillBenchPrompt(benchPromptText("test-engineer-v1.user.md"), {
      ...repositoryPromptFields(repository),
      mountPath: repository.mountPath,
      id,
      idUnderscored,
      background: requirement.background,
      requirement: requirement.requirement,
      fileOperations: bulletList(requirement.fileOperations),
      acceptanceCriteria: bulletList(requirement.acceptanceCriteria),
      findings: findingsBlock(findings),
    });
    const answer = await options.model.generateObject(testFileAnswerSchema, {
      role: TEST_ENGINEER_ROLE,
      system,
      prompt,
    });
    const content = answer.object.content.endsWith("\n")
      ? answer.object.content
      : `${answer.object.content}\n`;
    const inspection = inspectTestFile(content, minTests, fileName);
    findings = [...inspection.findings];
    const compileProblem = await pythonCompileFinding(content, fileName);
    if (compileProblem !== undefined) findings.unshift(compileProblem);
    let validated = false;
    if (findings.length === 0) {
      validated = true;
      findings = await negativeControl(options, base, fileName, content);
    }
    last = { content, tests: inspection.testCount, findings, validated };
    // A file that at least passed the static checks beats one that did not, whatever came later.
    if (best === undefined || validated || !best.validated) best = last;
    options.onLog?.(
      `test engineer, ${id}, round ${round}: ${inspection.testCount} tests, ${findings.length === 0 ? "sound" : `${findings.length} findings`}`,
    );
    if (findings.length === 0) break;
  }
  const chosen = best ?? last;
  if (chosen === undefined) {
    throw new InternalError("bench.generate-no-round", "unreachable: at least one round runs");
  }
  return {
    requirement: id,
    file: fileName,
    tests: chosen.tests,
    rounds,
    weak: chosen.findings.length > 0,
    findings: chosen.findings,
    content: chosen.content,
  };
}

async function ensureEmptyTarget(out: string): Promise<void> {
  // Only ENOENT is "free to use": ENOTDIR means `out` is a file (or under one), which must not
  // be taken for an empty folder, since the suite is later moved over `out`.
  const entries = await readdir(out).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw unreadableError(out, error);
  });
  if (entries.length > 0) {
    throw new InputError(
      "bench.generate-out-not-empty",
      `--out ${out} already exists and is not empty; choose a new folder`,
      { file: out, field: "--out" },
    );
  }
}

/** Generate a suite for one skill and one repository at a commit, then validate it. */
export async function generateSuite(options: GenerateSuiteOptions): Promise<GenerateSuiteResult> {
  const count = options.requirements ?? 10;
  const minTests = options.minTests ?? 8;
  const maxRounds = options.maxRounds ?? 2;
  const out = resolve(options.out);
  await ensureEmptyTarget(out);
  const skill = await loadSkill(resolve(options.skill));
  const base = await prepareBase({
    source: options.repository,
    commit: options.commit,
    ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
  });
  const repository = await describeRepository(base);
  options.onLog?.(
    `repository ${repository.name} at ${repository.commit.slice(0, 12)} (${repository.language})`,
  );

  const asked = await askRequirements(options, skill, repository, count);
  const ids = folderIds(asked.requirements);
  const verifiers: (GeneratedVerifierSummary & { content: string })[] = [];
  for (const [index, requirement] of asked.requirements.entries()) {
    const id = ids[index] ?? `requirement-${index + 1}`;
    verifiers.push(
      await generateVerifier(options, base, repository, requirement, id, minTests, maxRounds),
    );
  }

  // Written to a hidden sibling and renamed into place, so a failure leaves no half suite.
  const staging = join(dirname(out), `.${basename(out)}.generating-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  try {
    await writeSuite(staging, options, skill, base, asked.requirements, ids, verifiers);
    await rm(out, { recursive: true, force: true });
    await mkdir(dirname(out), { recursive: true });
    await rename(staging, out);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  const validation = await validateSuite(out);
  return {
    out,
    skill: skill.name,
    requirements: asked.requirements.length,
    requirementRounds: asked.rounds,
    requirementFindings: asked.findings,
    verifiers: verifiers.map(({ content: _content, ...summary }) => summary),
    weak: verifiers.filter((verifier) => verifier.weak).length,
    usage: options.model.ledger.byRole(),
    suiteProblems: validation.problems,
    valid: validation.valid,
  };
}

function repositoryEntry(repository: string): { url: string } | { path: string } {
  return /^(https?|ssh|git|file):\/\/|^git@/.test(repository)
    ? { url: repository }
    : { path: resolve(repository) };
}

async function writeSuite(
  root: string,
  options: GenerateSuiteOptions,
  skill: LoadedSkill,
  base: PreparedBase,
  requirements: readonly GeneratedRequirement[],
  ids: readonly string[],
  verifiers: readonly (GeneratedVerifierSummary & { content: string })[],
): Promise<void> {
  const skillId =
    skill.name.replace(/[^a-zA-Z0-9._-]+/g, "-").replace(/^[^a-zA-Z0-9]+/, "") || "skill";
  const skillRoot = join(root, SKILLS_FOLDER, skillId);
  await writeFileAtomic(
    join(root, SUITE_FILE),
    stringifyYaml({
      format: SUITE_FORMAT,
      name: `${skillId}-generated`,
      description: `Generated by skillsmith bench generate (prompts ${GENERATION_PROMPT_VERSION}) for skill ${skill.name} on ${base.repositoryName}.`,
      configurations: [
        { id: "claude-code-default", agent: "claude-code", limits: { timeoutSeconds: 1800 } },
      ],
    }),
  );
  await mkdir(join(skillRoot, AGENT_SKILLS_FOLDER), { recursive: true });
  await cp(skill.folder, join(skillRoot, AGENT_SKILLS_FOLDER, skill.name), { recursive: true });
  await writeFileAtomic(
    join(skillRoot, SKILL_FILE),
    stringifyYaml({
      repository: {
        ...repositoryEntry(options.repository),
        commit: base.commit,
        name: base.repositoryName,
      },
      source: {
        generator: "skillsmith bench generate",
        prompts: GENERATION_PROMPT_VERSION,
        model: `${options.model.spec.provider}:${options.model.spec.model}`,
      },
    }),
  );
  for (const [index, requirement] of requirements.entries()) {
    const id = ids[index];
    const verifier = verifiers[index];
    if (id === undefined || verifier === undefined) continue;
    const folder = join(skillRoot, REQUIREMENTS_FOLDER, id);
    await writeFileAtomic(join(folder, REQUIREMENT_FILE), renderRequirementMarkdown(requirement));
    await writeFileAtomic(join(folder, VERIFIER_FOLDER, verifier.file), verifier.content);
    await writeFileAtomic(
      join(folder, VERIFIER_FILE),
      stringifyYaml({
        // The repository root is the working directory, as during generation, so tests import
        // the code under test the same way in both places.
        command: `python3 -m pytest "$SKILLSMITH_VERIFIER/${verifier.file}" -v --tb=short -p no:cacheprovider --junitxml="$SKILLSMITH_VERIFIER/junit.xml"`,
        files: [verifier.file],
        mountPath: VERIFIER_MOUNT,
        cwd: base.workspaceMountPath,
        timeoutSeconds: 300,
        junit: `${VERIFIER_MOUNT}/junit.xml`,
        source: {
          generator: "skillsmith bench generate",
          prompts: GENERATION_PROMPT_VERSION,
          rounds: verifier.rounds,
          tests: verifier.tests,
          weak: verifier.weak,
          ...(verifier.findings.length === 0 ? {} : { findings: [...verifier.findings] }),
        },
      }),
    );
  }
}
