/**
 * The SWE-Skills-Bench importer. One file although past 400 lines: it follows one layout
 * (benchmark_config.yaml, skills/, tasks/, tests/) in the order it is read, and its helpers
 * (repository resolution, verifier helper files) serve only that layout.
 */
import { readdir, readFile } from "node:fs/promises";
import { basename, isAbsolute, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { definedFields } from "../../core/defined.js";
import { InputError } from "../../core/errors.js";
import { unlessMissing } from "../../core/fs.js";
import { validateSkillFolder } from "../../skill/index.js";
import {
  AGENT_SKILLS_FOLDER,
  REQUIREMENT_FILE,
  REQUIREMENTS_FOLDER,
  SKILL_FILE,
  SKILLS_FOLDER,
  SUITE_FILE,
  VERIFIER_FILE,
  VERIFIER_FOLDER,
  WORKSPACE_ROOT,
} from "../suite/layout.js";
import { naturalCompare, repositoryName } from "../suite/load.js";
import { parseRequirementMarkdown } from "../suite/requirement.js";
import {
  type Configuration,
  idSchema,
  type SkillFile,
  SUITE_FORMAT,
  type SuiteFile,
  type SuiteProtocol,
  type VerifierFile,
} from "../suite/schema.js";
import { parseYamlMergingDuplicates } from "../suite/yaml.js";
import {
  type CopiedHelper,
  type ImportProblem,
  type ImportResult,
  memoryToMegabytes,
  pathKind,
  positiveNumber,
  SuiteStaging,
} from "./common.js";

/**
 * Importer of the public SWE-Skills-Bench layout (github.com/GeniusHTX/SWE-Skills-Bench):
 *
 *   config/benchmark_config.yaml     every skill: id, repo {url, commit}, environment {limits …}
 *   skills/<id>/SKILL.md             the skill
 *   tasks/batchN/<id>.md             requirement N of skill <id> (N = 1 … 10)
 *   tests/batchN/test_<id_>.py       its pytest verifier (`-` in the id becomes `_`)
 *
 * What is sound is imported; everything else becomes a problem. A skill is imported when it is
 * in the config with a usable repository (url and commit), has a valid SKILL.md and at least
 * one task file. A requirement whose test file is missing is still imported — its
 * `verifier.yaml` names the expected file and `validate-suite` reports "no verifier" until the
 * file is put in place — because the requirement text is the expensive part to recreate.
 */

export interface SweSkillsBenchImportOptions {
  readonly out: string;
  /**
   * A folder of local copies of the skills' repositories, used instead of the remote URL when
   * one is found: for `https://github.com/<owner>/<name>`, a clone or bare repository
   * `<name>`, `<name>.git`, `<owner>/<name>` or `<owner>-<name>`, or a bundle `<name>.bundle`,
   * `<owner>-<name>.bundle` or `<owner>/<name>.bundle` (the first that exists).
   */
  readonly repoRoot?: string;
  /** Add the paper's four agent–model configurations and its protocol (`--study`). */
  readonly study?: boolean;
}

/** Where a repository may sit under `--repo-root`, in the order they are tried. */
export function repoRootCandidates(url: string): { path: string; kind: "directory" | "file" }[] {
  const trimmed = url.replace(/\/+$/, "").replace(/\.git$/, "");
  const parts = trimmed.split(/[/:]/).filter((part) => part !== "");
  const name = parts.at(-1) ?? "";
  const owner = parts.length >= 2 ? parts.at(-2) : undefined;
  const folders = [name, `${name}.git`];
  const bundles = [`${name}.bundle`];
  if (owner !== undefined) {
    folders.push(`${owner}/${name}`, `${owner}-${name}`, `${owner}/${name}.git`);
    bundles.push(`${owner}-${name}.bundle`, `${owner}/${name}.bundle`);
  }
  return [
    ...folders.map((path) => ({ path, kind: "directory" as const })),
    ...bundles.map((path) => ({ path, kind: "file" as const })),
  ];
}

const CONFIG_FILE = "config/benchmark_config.yaml";
/** Where v1 copies its tests; outside `/workspace/<repo>`, as the v1 README requires. */
const VERIFIER_MOUNT = "/workspace/tests";
const DEFAULT_AGENT_TIMEOUT_SECONDS = 1800;

interface TaskFile {
  readonly batch: string;
  readonly path: string;
}

type Entry = Record<string, unknown>;

function record(value: unknown): Entry {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Entry)
    : {};
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** `python-resilience` → `test_python_resilience.py`, as the v1 layout names test files. */
export function testFileName(skillId: string): string {
  return `test_${skillId.replace(/-/g, "_")}.py`;
}

/** Top-level module names a Python file imports (`import a.b`, `from a import b`, `from . import x`). */
export function pythonImports(source: string): string[] {
  const names = new Set<string>();
  for (const match of source.matchAll(
    /^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+([^\n#]+)|import[ \t]+([^\n#]+))/gm,
  )) {
    if (match[4] !== undefined) {
      for (const part of match[4].split(",")) {
        const name = /^\s*([A-Za-z_]\w*)/.exec(part)?.[1];
        if (name !== undefined) names.add(name);
      }
    } else if ((match[1] ?? "") !== "" && (match[2] ?? "") === "") {
      // `from . import helper`: each imported name is a module beside the file.
      for (const part of (match[3] ?? "").replace(/[()]/g, "").split(",")) {
        const name = /^\s*([A-Za-z_]\w*)/.exec(part)?.[1];
        if (name !== undefined) names.add(name);
      }
    } else {
      const name = /^([A-Za-z_]\w*)/.exec(match[2] ?? "")?.[1];
      if (name !== undefined) names.add(name);
    }
  }
  return [...names];
}

/**
 * The files beside a test file that it needs: same-folder modules and packages it imports
 * (followed through their own imports), and `conftest.py`, which pytest loads from the test's
 * folder. Paths are relative to `folder`, in the order found.
 */
export async function verifierHelpers(folder: string, testFile: string): Promise<string[]> {
  const helpers: string[] = [];
  const seen = new Set<string>([testFile]);
  const queue = [testFile];
  if ((await pathKind(join(folder, "conftest.py"))) === "file") {
    helpers.push("conftest.py");
    seen.add("conftest.py");
    queue.push("conftest.py");
  }
  while (queue.length > 0) {
    const current = queue.shift() as string;
    const path = join(folder, current);
    const source = (await unlessMissing(path, readFile(path, "utf8"))) ?? "";
    for (const name of pythonImports(source)) {
      for (const candidate of [`${name}.py`, name]) {
        if (seen.has(candidate)) continue;
        const kind = await pathKind(join(folder, candidate));
        const isPackage =
          kind === "directory" &&
          (await pathKind(join(folder, candidate, "__init__.py"))) === "file";
        if (kind === "file" || isPackage) {
          seen.add(candidate);
          helpers.push(candidate);
          if (kind === "file") queue.push(candidate);
          else queue.push(join(candidate, "__init__.py"));
          break;
        }
      }
    }
  }
  return helpers;
}

async function listTasks(
  input: string,
): Promise<{ tasks: Map<string, TaskFile[]>; problems: ImportProblem[] }> {
  const tasks = new Map<string, TaskFile[]>();
  const problems: ImportProblem[] = [];
  const root = join(input, "tasks");
  if ((await pathKind(root)) !== "directory") return { tasks, problems };
  const batches = (await readdir(root, { withFileTypes: true })).sort((left, right) =>
    naturalCompare(left.name, right.name),
  );
  for (const batch of batches) {
    if (!batch.isDirectory()) continue;
    if (!/^batch\d+$/.test(batch.name)) {
      problems.push({ path: `tasks/${batch.name}`, message: "not a batchN folder; ignored" });
      continue;
    }
    const files = (await readdir(join(root, batch.name), { withFileTypes: true })).sort(
      (left, right) => naturalCompare(left.name, right.name),
    );
    for (const file of files) {
      if (!file.isFile() || !file.name.endsWith(".md")) continue;
      const id = file.name.slice(0, -".md".length);
      const list = tasks.get(id) ?? [];
      list.push({ batch: batch.name, path: `tasks/${batch.name}/${file.name}` });
      tasks.set(id, list);
    }
  }
  return { tasks, problems };
}

interface ResolvedRepository {
  readonly spec: NonNullable<SkillFile["repository"]>;
  /** The copy found under `--repo-root`, when one was. */
  readonly local?: string;
}

async function resolveRepository(
  input: string,
  repo: Entry,
  repoRoot: string | undefined,
  lineOf: (field: "url" | "commit") => number | undefined,
  reasons: string[],
): Promise<ResolvedRepository | undefined> {
  const lineText = (field: "url" | "commit") => {
    const line = lineOf(field);
    return line === undefined ? "" : ` (line ${line})`;
  };
  const at = lineText("url");
  const url = text(repo.url);
  const commit = text(typeof repo.commit === "number" ? String(repo.commit) : repo.commit);
  if (url === undefined) reasons.push(`repo.url is ${repo.url === null ? "null" : "missing"}${at}`);
  if (commit === undefined) reasons.push(`repo.commit is missing${lineText("commit")}`);
  else if (!/^[0-9a-f]{7,40}$/.test(commit))
    reasons.push(`repo.commit "${commit}" is not a commit hash${lineText("commit")}`);
  if (url === undefined || commit === undefined) return undefined;

  const name = repositoryName(url);
  const base = { commit, name, mountPath: posix.join(WORKSPACE_ROOT, name) };
  if (url.startsWith("file:")) {
    let path: string | undefined;
    try {
      path = fileURLToPath(url);
    } catch {
      // Not a file-system error: `fileURLToPath` refuses a malformed URL, reported as such.
      reasons.push(`repo.url "${url}" is not a valid file URL${at}`);
      return undefined;
    }
    if ((await pathKind(path)) === "missing") {
      reasons.push(`repository ${path} (repo.url${at}) does not exist`);
      return undefined;
    }
    return { spec: { url, ...base } };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[\w.-]+@[\w.-]+:/.test(url)) {
    if (repoRoot !== undefined) {
      for (const candidate of repoRootCandidates(url)) {
        const local = resolve(repoRoot, candidate.path);
        if ((await pathKind(local)) !== candidate.kind) continue;
        return {
          spec: candidate.kind === "file" ? { bundle: local, ...base } : { path: local, ...base },
          local,
        };
      }
    }
    return { spec: { url, ...base } };
  }
  // A plain path: relative to the benchmark folder, as a config in that folder would mean it.
  const local = isAbsolute(url) ? url : resolve(input, url);
  const kind = await pathKind(local);
  if (kind === "missing") {
    reasons.push(`repository ${local} (repo.url${at}) does not exist`);
    return undefined;
  }
  return kind === "file"
    ? { spec: { bundle: local, ...base } }
    : { spec: { path: local, ...base } };
}

/** The L2 unit-test step of a v1 skill: its command and timeout. */
function unitTestStep(entry: Entry): { command?: string; timeout?: number } {
  const environment = record(entry.environment);
  const steps = Array.isArray(environment.evaluation)
    ? environment.evaluation
    : Array.isArray(entry.evaluation)
      ? entry.evaluation
      : [];
  for (const step of steps) {
    const params = record(record(step).params);
    if (record(step).method === "unit_test") {
      const command = text(params.test_command);
      const timeout = positiveNumber(params.timeout);
      return {
        ...definedFields({ command, timeout }),
      };
    }
  }
  return {};
}

/**
 * The paper's four agent–model configurations (SWE-Skills-Bench §4.1: Codex with GPT-5.4-mini
 * or Kimi-K2.6, Claude Code with Kimi-K2.6 or Haiku 4.5). Kimi is served by Moonshot's API:
 * its configurations name that endpoint and the variable holding its key, so one run reaches
 * both providers of one harness. Model ids are the providers' (checked against their documentation
 * in docs/swe-skills-bench.md); Haiku 4.5 is pinned to its dated snapshot so a later run reaches the
 * same model. Edit `suite.yaml` if they move.
 */
export const STUDY_CONFIGURATIONS: readonly Omit<Configuration, "limits">[] = [
  { id: "codex-gpt-5.4-mini", agent: "codex", model: "openai:gpt-5.4-mini" },
  {
    id: "codex-kimi-k2.6",
    agent: "codex",
    model: "openai:kimi-k2.6",
    endpoint: { baseUrl: "https://api.moonshot.ai/v1", apiKeyVariable: "MOONSHOT_API_KEY" },
  },
  {
    id: "claude-code-kimi-k2.6",
    agent: "claude-code",
    model: "anthropic:kimi-k2.6",
    endpoint: {
      baseUrl: "https://api.moonshot.ai/anthropic",
      apiKeyVariable: "MOONSHOT_API_KEY",
    },
  },
  {
    id: "claude-code-haiku-4.5",
    agent: "claude-code",
    model: "anthropic:claude-haiku-4-5-20251001",
  },
];

/**
 * The paper's protocol (protocols.md A.5–A.6): one run per arm, infrastructure losses re-run
 * (bounded here: a run that keeps failing is reported, never scored), timeouts scored zero,
 * α = 0.05 over ten requirements per skill.
 */
export const STUDY_PROTOCOL: SuiteProtocol = {
  source: "SWE-Skills-Bench (arXiv 2603.15401), protocol A of skillsmith's protocols",
  repeats: 1,
  maxAttempts: 5,
  alpha: 0.05,
  requirementsPerSkill: 10,
  timeouts: "score-zero",
};

type ParsedConfig = ReturnType<typeof parseYamlMergingDuplicates>;

/** What one import shares across its skills: the input, where it writes, what it found. */
interface ImportContext {
  readonly input: string;
  readonly options: SweSkillsBenchImportOptions;
  readonly parsed: ParsedConfig;
  readonly tasks: Map<string, TaskFile[]>;
  readonly hasTests: boolean;
  readonly staging: SuiteStaging;
  readonly problems: ImportProblem[];
  readonly copied: CopiedHelper[];
  readonly repositories: { local: number; remote: string[] };
}

/** The benchmark config, read; a folder that is not SWE-Skills-Bench is an `InputError`. */
async function readBenchmarkConfig(
  input: string,
  inputDirectory: string,
): Promise<{ parsed: ParsedConfig; skills: unknown[] }> {
  const configPath = join(input, CONFIG_FILE);
  if ((await pathKind(configPath)) !== "file") {
    throw new InputError(
      "bench.not-swe-skills-bench",
      `${inputDirectory} is not a SWE-Skills-Bench folder: ${CONFIG_FILE} is missing (expected ${CONFIG_FILE}, skills/<id>/SKILL.md, tasks/batchN/<id>.md, tests/batchN/test_<id>.py)`,
      { file: join(inputDirectory, CONFIG_FILE) },
    );
  }
  const parsed = parseYamlMergingDuplicates(await readFile(configPath, "utf8"));
  const skills = record(parsed.value).skills;
  if (parsed.problems.length > 0 || !Array.isArray(skills)) {
    const first = parsed.problems[0];
    throw new InputError(
      "bench.not-swe-skills-bench",
      first === undefined
        ? `expected a "skills:" list of skill entries`
        : `cannot read the benchmark config: ${first.message}`,
      {
        file: join(inputDirectory, CONFIG_FILE),
        ...(first?.line === undefined ? {} : { line: first.line }),
        ...(first === undefined ? { field: "skills" } : {}),
      },
    );
  }
  return { parsed, skills };
}

/** Repeated keys of the config: merged maps are a note, conflicting values a problem. */
function duplicateKeyFindings(parsed: ParsedConfig, notes: string[], problems: ImportProblem[]) {
  const merged = parsed.duplicates.filter((duplicate) => duplicate.resolution === "merged");
  if (merged.length > 0) {
    const keys = [...new Set(merged.map((duplicate) => duplicate.key))].join(", ");
    notes.push(
      `${CONFIG_FILE}: ${merged.length} entries repeat a key (${keys}), e.g. lines ${merged[0]?.firstLine} and ${merged[0]?.secondLine}; both maps were merged (resource limits and interaction limits are different things)`,
    );
  }
  for (const duplicate of parsed.duplicates.filter((item) => item.resolution === "conflict")) {
    problems.push({
      path: CONFIG_FILE,
      message: `line ${duplicate.secondLine}: key "${duplicate.key}" repeats line ${duplicate.firstLine} with a different value; the later one was kept (${duplicate.detail ?? ""})`,
    });
  }
}

/** Why a config entry cannot be imported (empty when it can), and its repository. */
async function skillReasons(
  context: ImportContext,
  id: string,
  entry: Entry,
  index: number,
): Promise<{ reasons: string[]; repository: ResolvedRepository | undefined }> {
  const reasons: string[] = [];
  const skillSource = join(context.input, "skills", id);
  if ((await pathKind(join(skillSource, "SKILL.md"))) !== "file") {
    reasons.push(`no skills/${id}/SKILL.md`);
  } else {
    const validation = await validateSkillFolder(skillSource);
    if (!validation.valid) {
      const first = validation.errors
        .slice(0, 3)
        .map((finding) => finding.message)
        .join("; ");
      reasons.push(`skills/${id} is not a valid Agent Skill (${first})`);
    }
  }
  if ((context.tasks.get(id) ?? []).length === 0)
    reasons.push(`no task files tasks/batch*/${id}.md`);
  const repository = await resolveRepository(
    context.input,
    record(entry.repo),
    context.options.repoRoot,
    (field) => context.parsed.lineOf(["skills", index, "repo", field]),
    reasons,
  );
  if (repository !== undefined && context.options.repoRoot !== undefined) {
    if (repository.local !== undefined) context.repositories.local += 1;
    else if (repository.spec.url !== undefined && !repository.spec.url.startsWith("file:")) {
      context.repositories.remote.push(id);
    }
  }
  return { reasons, repository };
}

/** Write one requirement (its text, verifier and helpers); false when its task file is unusable. */
async function importRequirement(
  context: ImportContext,
  id: string,
  task: TaskFile,
  step: { command?: string; timeout?: number },
): Promise<boolean> {
  const { input, staging } = context;
  const markdown = await readFile(join(input, task.path), "utf8");
  const requirement = parseRequirementMarkdown(task.batch, markdown);
  const errors = requirement.problems.filter((problem) => problem.severity === "error");
  if (errors.length > 0) {
    context.problems.push({
      path: task.path,
      message: `requirement not imported: ${errors.map((problem) => problem.message).join("; ")}`,
    });
    return false;
  }
  const folder = join(SKILLS_FOLDER, id, REQUIREMENTS_FOLDER, task.batch);
  await staging.writeText(join(folder, REQUIREMENT_FILE), markdown);
  const testFile = testFileName(id);
  const testSource = `tests/${task.batch}/${testFile}`;
  const verifierFiles = [testFile];
  if ((await pathKind(join(input, testSource))) === "file") {
    await staging.copy(join(input, testSource), join(folder, VERIFIER_FOLDER, testFile));
    const testsFolder = join(input, "tests", task.batch);
    for (const helper of await verifierHelpers(testsFolder, testFile)) {
      await staging.copy(join(testsFolder, helper), join(folder, VERIFIER_FOLDER, helper));
      verifierFiles.push(helper);
      context.copied.push({
        path: `tests/${task.batch}/${helper}`,
        into: `${folder}/${VERIFIER_FOLDER}/${helper}`,
        for: `${id}/${task.batch}`,
      });
    }
  } else {
    context.problems.push({
      path: testSource,
      message: `no verifier: ${context.hasTests ? "file missing" : "the input has no tests/ folder"}; requirement ${id}/${task.batch} imported without it (validate-suite reports it until ${folder}/${VERIFIER_FOLDER}/${testFile} exists)`,
    });
  }
  const verifier: VerifierFile = {
    command: `python -m pytest ${testFile} -v --tb=short --junitxml=junit.xml`,
    files: verifierFiles,
    mountPath: VERIFIER_MOUNT,
    ...(step.timeout === undefined ? {} : { timeoutSeconds: step.timeout }),
    junit: "junit.xml",
    source: {
      path: testSource,
      ...(step.command === undefined ? {} : { testCommand: step.command }),
    },
  };
  await staging.writeYaml(
    join(folder, VERIFIER_FILE),
    verifier,
    `Verifier of ${id} ${task.batch}, imported from SWE-Skills-Bench.\nThe file(s) under "files" live in the verifier/ folder beside this file.`,
  );
  return true;
}

/** The `skill.yaml` of an imported skill: repository, environment, limits, where it came from. */
function skillFileOf(
  id: string,
  entry: Entry,
  line: number | undefined,
  repository: ResolvedRepository,
): SkillFile {
  const environment = record(entry.environment);
  const limits = record(environment.limits);
  const setup = Array.isArray(environment.setup_commands)
    ? environment.setup_commands.filter((command): command is string => typeof command === "string")
    : [];
  const cpus = positiveNumber(limits.cpus);
  const memoryMb = memoryToMegabytes(limits.memory);
  const commandTimeoutSeconds = positiveNumber(limits.timeout_per_command);
  const totalTimeout = positiveNumber(limits.total_timeout_sec);
  const maxIterations = positiveNumber(limits.max_iterations);
  const image = text(environment.base_image);
  const optional = (key: string, value: unknown) => (value === undefined ? {} : { [key]: value });
  return {
    repository: { ...repository.spec, ...(setup.length > 0 ? { setup } : {}) },
    environment: {
      ...optional("image", image),
      limits: {
        ...optional("cpus", cpus),
        ...optional("memoryMb", memoryMb),
        ...optional("commandTimeoutSeconds", commandTimeoutSeconds),
      },
    },
    agentLimits: {
      ...optional("timeoutSeconds", totalTimeout),
      ...(maxIterations === undefined || !Number.isInteger(maxIterations) ? {} : { maxIterations }),
    },
    source: {
      benchmark: "SWE-Skills-Bench",
      id,
      ...optional("name", text(entry.name)),
      ...optional("description", text(entry.description)),
      ...optional("type", text(entry.type)),
      ...optional("url", text(record(entry.repo).url)),
      config: `${CONFIG_FILE}:${line}`,
    },
  };
}

/**
 * Import one config entry: its requirements, then its skill folder and `skill.yaml`. Returns
 * the requirements written and the agent time limit it asks for; 0 requirements when nothing
 * of it was written (its problems say why).
 */
async function importSkill(
  context: ImportContext,
  id: string,
  entry: Entry,
  index: number,
): Promise<{ requirements: number; agentTimeout: number }> {
  const line = context.parsed.lineOf(["skills", index]);
  const { reasons, repository } = await skillReasons(context, id, entry, index);
  if (reasons.length > 0 || repository === undefined) {
    context.problems.push({
      path: CONFIG_FILE,
      message: `line ${line}: skill "${id}" not imported: ${reasons.join("; ")}`,
    });
    return { requirements: 0, agentTimeout: 0 };
  }
  const step = unitTestStep(entry);
  let requirements = 0;
  for (const task of context.tasks.get(id) ?? []) {
    if (await importRequirement(context, id, task, step)) requirements++;
  }
  if (requirements === 0) {
    context.problems.push({
      path: CONFIG_FILE,
      message: `line ${line}: skill "${id}" not imported: none of its task files is usable`,
    });
    // Nothing of this skill was written: unusable requirements are skipped before writing.
    return { requirements: 0, agentTimeout: 0 };
  }
  await context.staging.copy(
    join(context.input, "skills", id),
    join(SKILLS_FOLDER, id, AGENT_SKILLS_FOLDER, id),
  );
  const skillFile = skillFileOf(id, entry, line, repository);
  await context.staging.writeYaml(
    join(SKILLS_FOLDER, id, SKILL_FILE),
    skillFile,
    `Skill ${id}, imported from SWE-Skills-Bench.`,
  );
  return { requirements, agentTimeout: skillFile.agentLimits?.timeoutSeconds ?? 0 };
}

/** The config entry's id when it is usable and not seen before; otherwise a problem and undefined. */
function entryId(
  entry: Entry,
  index: number,
  line: number | undefined,
  seen: Set<string>,
  problems: ImportProblem[],
): string | undefined {
  const id = text(entry.id);
  if (id === undefined || !idSchema.safeParse(id).success) {
    problems.push({
      path: CONFIG_FILE,
      message: `line ${line}: skill entry ${index + 1} has ${id === undefined ? "no id" : `an unusable id "${id}"`}; not imported`,
    });
    return undefined;
  }
  if (seen.has(id)) {
    problems.push({
      path: CONFIG_FILE,
      message: `line ${line}: skill "${id}" appears twice; the second entry is ignored`,
    });
    return undefined;
  }
  seen.add(id);
  return id;
}

/** Tasks and skill folders that no config entry claims. */
async function unclaimedProblems(
  input: string,
  tasks: Map<string, TaskFile[]>,
  configIds: Set<string>,
): Promise<ImportProblem[]> {
  const problems: ImportProblem[] = [];
  for (const [id, files] of tasks) {
    if (configIds.has(id)) continue;
    for (const file of files) {
      problems.push({
        path: file.path,
        message: `task has no skill: "${id}" is not in ${CONFIG_FILE}; not imported`,
      });
    }
  }
  if ((await pathKind(join(input, "skills"))) === "directory") {
    for (const folder of await readdir(join(input, "skills"), { withFileTypes: true })) {
      if (folder.isDirectory() && !configIds.has(folder.name)) {
        problems.push({
          path: `skills/${folder.name}`,
          message: `skill is not in ${CONFIG_FILE}; not imported`,
        });
      }
    }
  }
  return problems;
}

/** The notes of a finished import: where repositories came from, which helpers were copied. */
function closingNotes(context: ImportContext): string[] {
  const notes: string[] = [];
  if (context.options.repoRoot !== undefined) {
    const { local, remote } = context.repositories;
    notes.push(
      `--repo-root: ${local} skill${local === 1 ? "" : "s"} use a local copy, ${remote.length} the remote URL${remote.length === 0 ? "" : ` (${remote.join(", ")}); for https://host/<owner>/<name> it looks for <name>, <name>.git, <owner>/<name>, <owner>-<name> (folders) and <name>.bundle, <owner>-<name>.bundle, <owner>/<name>.bundle`}`,
    );
  }
  if (context.copied.length > 0) {
    const byFile = new Map<string, number>();
    for (const helper of context.copied)
      byFile.set(helper.path, (byFile.get(helper.path) ?? 0) + 1);
    notes.push(
      `copied helper files next to the verifiers that import them: ${[...byFile]
        .map(([path, count]) => `${path} (${count} verifier${count === 1 ? "" : "s"})`)
        .join(", ")}`,
    );
  }
  return notes;
}

/**
 * The suite file: one Claude Code configuration, or with `study` the paper's four
 * configurations and its protocol. Every configuration gets the longest agent limit the
 * config asks for (each skill's own limit still applies to its runs).
 */
function suiteFileOf(input: string, agentTimeout: number, study: boolean): SuiteFile {
  const limits = {
    timeoutSeconds: agentTimeout > 0 ? agentTimeout : DEFAULT_AGENT_TIMEOUT_SECONDS,
  };
  return {
    format: SUITE_FORMAT,
    name: basename(input),
    description: `Imported from ${input} by skillsmith bench import swe-skills-bench${study ? " --study" : ""}.`,
    configurations: study
      ? STUDY_CONFIGURATIONS.map((configuration) => ({ ...configuration, limits }))
      : [{ id: "claude-code", agent: "claude-code", limits }],
    ...(study ? { protocol: STUDY_PROTOCOL } : {}),
  };
}

export async function importSweSkillsBench(
  inputDirectory: string,
  options: SweSkillsBenchImportOptions,
): Promise<ImportResult> {
  const input = resolve(inputDirectory);
  const { parsed, skills: configuredSkills } = await readBenchmarkConfig(input, inputDirectory);
  const problems: ImportProblem[] = [];
  const notes: string[] = [];
  const copied: CopiedHelper[] = [];
  const { tasks, problems: taskProblems } = await listTasks(input);
  problems.push(...taskProblems);
  duplicateKeyFindings(parsed, notes, problems);

  const staging = await SuiteStaging.open(options.out);
  const context: ImportContext = {
    input,
    options,
    parsed,
    tasks,
    hasTests: (await pathKind(join(input, "tests"))) === "directory",
    staging,
    problems,
    copied,
    repositories: { local: 0, remote: [] },
  };
  let importedSkills = 0;
  let importedRequirements = 0;
  const configIds = new Set<string>();
  let agentTimeout = 0;
  try {
    for (const [index, rawEntry] of configuredSkills.entries()) {
      const entry = record(rawEntry);
      const line = parsed.lineOf(["skills", index]);
      const id = entryId(entry, index, line, configIds, problems);
      if (id === undefined) continue;
      const imported = await importSkill(context, id, entry, index);
      if (imported.requirements === 0) continue;
      agentTimeout = Math.max(agentTimeout, imported.agentTimeout);
      importedSkills++;
      importedRequirements += imported.requirements;
    }
    problems.push(...(await unclaimedProblems(input, tasks, configIds)));
    notes.push(...closingNotes(context));
    if (importedSkills === 0) {
      await staging.discard();
      return { skills: 0, requirements: 0, problems, notes, copied };
    }
    const study = options.study === true;
    await staging.writeYaml(
      SUITE_FILE,
      suiteFileOf(input, agentTimeout, study),
      study
        ? "Suite imported from SWE-Skills-Bench with the paper's four configurations and protocol (docs/swe-skills-bench.md)."
        : "Suite imported from SWE-Skills-Bench. Add configurations (agent x model) to compare, or import with --study for the paper's four.",
    );
    const out = await staging.commit();
    return {
      out,
      skills: importedSkills,
      requirements: importedRequirements,
      problems,
      notes,
      copied,
    };
  } catch (error) {
    await staging.discard();
    throw error;
  }
}
