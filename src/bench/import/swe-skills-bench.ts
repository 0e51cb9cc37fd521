/**
 * The SWE-Skills-Bench importer. One file although past 400 lines: it follows one layout
 * (benchmark_config.yaml, skills/, tasks/, tests/) in the order it is read, and its helpers
 * (repository resolution, verifier helper files) serve only that layout.
 */
import { readdir, readFile } from "node:fs/promises";
import { basename, isAbsolute, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
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
  idSchema,
  type SkillFile,
  SUITE_FORMAT,
  type SuiteFile,
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
        ...(command === undefined ? {} : { command }),
        ...(timeout === undefined ? {} : { timeout }),
      };
    }
  }
  return {};
}

export async function importSweSkillsBench(
  inputDirectory: string,
  options: SweSkillsBenchImportOptions,
): Promise<ImportResult> {
  const input = resolve(inputDirectory);
  const configPath = join(input, CONFIG_FILE);
  if ((await pathKind(configPath)) !== "file") {
    throw new InputError(
      "not-swe-skills-bench",
      `${inputDirectory} is not a SWE-Skills-Bench folder: ${CONFIG_FILE} is missing (expected ${CONFIG_FILE}, skills/<id>/SKILL.md, tasks/batchN/<id>.md, tests/batchN/test_<id>.py)`,
      { file: join(inputDirectory, CONFIG_FILE) },
    );
  }
  const parsed = parseYamlMergingDuplicates(await readFile(configPath, "utf8"));
  const configuredSkills = record(parsed.value).skills;
  if (parsed.problems.length > 0 || !Array.isArray(configuredSkills)) {
    const first = parsed.problems[0];
    throw new InputError(
      "not-swe-skills-bench",
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

  const problems: ImportProblem[] = [];
  const notes: string[] = [];
  const copied: CopiedHelper[] = [];
  const repositories = { local: 0, remote: [] as string[] };
  const { tasks, problems: taskProblems } = await listTasks(input);
  problems.push(...taskProblems);
  const testsRoot = join(input, "tests");
  const hasTests = (await pathKind(testsRoot)) === "directory";

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

  const staging = await SuiteStaging.open(options.out);
  let importedSkills = 0;
  let importedRequirements = 0;
  const seenIds = new Set<string>();
  const configIds = new Set<string>();
  let agentTimeout = 0;
  try {
    for (const [index, rawEntry] of configuredSkills.entries()) {
      const entry = record(rawEntry);
      const line = parsed.lineOf(["skills", index]);
      const id = text(entry.id);
      if (id === undefined || !idSchema.safeParse(id).success) {
        problems.push({
          path: CONFIG_FILE,
          message: `line ${line}: skill entry ${index + 1} has ${id === undefined ? "no id" : `an unusable id "${id}"`}; not imported`,
        });
        continue;
      }
      if (seenIds.has(id)) {
        problems.push({
          path: CONFIG_FILE,
          message: `line ${line}: skill "${id}" appears twice; the second entry is ignored`,
        });
        continue;
      }
      seenIds.add(id);
      configIds.add(id);

      const reasons: string[] = [];
      const skillSource = join(input, "skills", id);
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
      const taskFiles = tasks.get(id) ?? [];
      if (taskFiles.length === 0) reasons.push(`no task files tasks/batch*/${id}.md`);
      const repository = await resolveRepository(
        input,
        record(entry.repo),
        options.repoRoot,
        (field) => parsed.lineOf(["skills", index, "repo", field]),
        reasons,
      );
      if (repository !== undefined && options.repoRoot !== undefined) {
        if (repository.local !== undefined) repositories.local += 1;
        else if (repository.spec.url !== undefined && !repository.spec.url.startsWith("file:")) {
          repositories.remote.push(id);
        }
      }
      if (reasons.length > 0 || repository === undefined) {
        problems.push({
          path: CONFIG_FILE,
          message: `line ${line}: skill "${id}" not imported: ${reasons.join("; ")}`,
        });
        continue;
      }

      const environment = record(entry.environment);
      const limits = record(environment.limits);
      const step = unitTestStep(entry);
      const skillRoot = join(SKILLS_FOLDER, id);
      let requirementCount = 0;
      for (const task of taskFiles) {
        const markdown = await readFile(join(input, task.path), "utf8");
        const requirement = parseRequirementMarkdown(task.batch, markdown);
        const errors = requirement.problems.filter((problem) => problem.severity === "error");
        if (errors.length > 0) {
          problems.push({
            path: task.path,
            message: `requirement not imported: ${errors.map((problem) => problem.message).join("; ")}`,
          });
          continue;
        }
        const folder = join(skillRoot, REQUIREMENTS_FOLDER, task.batch);
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
            copied.push({
              path: `tests/${task.batch}/${helper}`,
              into: `${folder}/${VERIFIER_FOLDER}/${helper}`,
              for: `${id}/${task.batch}`,
            });
          }
        } else {
          problems.push({
            path: testSource,
            message: `no verifier: ${hasTests ? "file missing" : "the input has no tests/ folder"}; requirement ${id}/${task.batch} imported without it (validate-suite reports it until ${folder}/${VERIFIER_FOLDER}/${testFile} exists)`,
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
        requirementCount++;
      }
      if (requirementCount === 0) {
        problems.push({
          path: CONFIG_FILE,
          message: `line ${line}: skill "${id}" not imported: none of its task files is usable`,
        });
        // Nothing of this skill was written: unusable requirements are skipped before writing.
        continue;
      }

      await staging.copy(skillSource, join(skillRoot, AGENT_SKILLS_FOLDER, id));
      const setup = Array.isArray(environment.setup_commands)
        ? environment.setup_commands.filter(
            (command): command is string => typeof command === "string",
          )
        : [];
      const cpus = positiveNumber(limits.cpus);
      const memoryMb = memoryToMegabytes(limits.memory);
      const commandTimeoutSeconds = positiveNumber(limits.timeout_per_command);
      const totalTimeout = positiveNumber(limits.total_timeout_sec);
      const maxIterations = positiveNumber(limits.max_iterations);
      agentTimeout = Math.max(agentTimeout, totalTimeout ?? 0);
      const image = text(environment.base_image);
      const skillFile: SkillFile = {
        repository: { ...repository.spec, ...(setup.length > 0 ? { setup } : {}) },
        environment: {
          ...(image === undefined ? {} : { image }),
          limits: {
            ...(cpus === undefined ? {} : { cpus }),
            ...(memoryMb === undefined ? {} : { memoryMb }),
            ...(commandTimeoutSeconds === undefined ? {} : { commandTimeoutSeconds }),
          },
        },
        agentLimits: {
          ...(totalTimeout === undefined ? {} : { timeoutSeconds: totalTimeout }),
          ...(maxIterations === undefined || !Number.isInteger(maxIterations)
            ? {}
            : { maxIterations }),
        },
        source: {
          benchmark: "SWE-Skills-Bench",
          id,
          ...(text(entry.name) === undefined ? {} : { name: text(entry.name) }),
          ...(text(entry.description) === undefined
            ? {}
            : { description: text(entry.description) }),
          ...(text(entry.type) === undefined ? {} : { type: text(entry.type) }),
          ...(text(record(entry.repo).url) === undefined
            ? {}
            : { url: text(record(entry.repo).url) }),
          config: `${CONFIG_FILE}:${line}`,
        },
      };
      await staging.writeYaml(
        join(skillRoot, SKILL_FILE),
        skillFile,
        `Skill ${id}, imported from SWE-Skills-Bench.`,
      );
      importedSkills++;
      importedRequirements += requirementCount;
    }

    // Tasks and skill folders that no config entry claims.
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

    if (options.repoRoot !== undefined) {
      const remote = repositories.remote;
      notes.push(
        `--repo-root: ${repositories.local} skill${repositories.local === 1 ? "" : "s"} use a local copy, ${remote.length} the remote URL${remote.length === 0 ? "" : ` (${remote.join(", ")}); for https://host/<owner>/<name> it looks for <name>, <name>.git, <owner>/<name>, <owner>-<name> (folders) and <name>.bundle, <owner>-<name>.bundle, <owner>/<name>.bundle`}`,
      );
    }
    if (copied.length > 0) {
      const byFile = new Map<string, number>();
      for (const helper of copied) byFile.set(helper.path, (byFile.get(helper.path) ?? 0) + 1);
      notes.push(
        `copied helper files next to the verifiers that import them: ${[...byFile]
          .map(([path, count]) => `${path} (${count} verifier${count === 1 ? "" : "s"})`)
          .join(", ")}`,
      );
    }
    if (importedSkills === 0) {
      await staging.discard();
      return { skills: 0, requirements: 0, problems, notes, copied };
    }
    const suite: SuiteFile = {
      format: SUITE_FORMAT,
      name: basename(input),
      description: `Imported from ${input} by skillsmith bench import swe-skills-bench.`,
      configurations: [
        {
          id: "claude-code",
          agent: "claude-code",
          limits: {
            timeoutSeconds: agentTimeout > 0 ? agentTimeout : DEFAULT_AGENT_TIMEOUT_SECONDS,
          },
        },
      ],
    };
    await staging.writeYaml(
      SUITE_FILE,
      suite,
      "Suite imported from SWE-Skills-Bench. Add configurations (agent x model) to compare.",
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
