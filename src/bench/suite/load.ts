import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, isAbsolute, join, posix, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { harnessNames, isHarnessName } from "../../agents/registry.js";
import { InputError } from "../../core/errors.js";
// From its module, not the skill barrel (which also exports the MCP server and its SDK).
import { validateSkillFolder } from "../../skill/validate.js";
import {
  AGENT_SKILLS_FOLDER,
  DEFAULT_VERIFIER_MOUNT,
  REQUIREMENT_FILE,
  REQUIREMENTS_FOLDER,
  SKILL_FILE,
  SKILLS_FOLDER,
  SOLUTION_FILES_FOLDER,
  SOLUTION_PATCH,
  SOLUTION_SCRIPT_ENTRY,
  SOLUTION_SCRIPT_FOLDER,
  SUITE_FILE,
  VERIFIER_FILE,
  VERIFIER_FOLDER,
  WORKSPACE_ROOT,
} from "./layout.js";
import { parseRequirementMarkdown } from "./requirement.js";
import {
  idSchema,
  type RepositorySpec,
  skillFileSchema,
  suiteFileSchema,
  verifierFileSchema,
} from "./schema.js";
import type {
  ReferenceSolution,
  Suite,
  SuiteProblem,
  SuiteRepository,
  SuiteRequirement,
  SuiteSkill,
  SuiteValidation,
  SuiteVerifier,
} from "./types.js";
import { checkYaml } from "./yaml.js";

/** Bytes we are willing to read from one YAML or Markdown file of a suite. */
const MAX_TEXT_BYTES = 4 * 1024 * 1024;

type Kind = "file" | "directory" | "missing" | "other";

async function kindOf(path: string): Promise<Kind> {
  try {
    const info = await stat(path);
    if (info.isFile()) return "file";
    if (info.isDirectory()) return "directory";
    return "other";
  } catch {
    return "missing";
  }
}

/** Collects problems with paths shown as the suite folder joined with the relative path. */
class Problems {
  readonly list: SuiteProblem[] = [];
  constructor(private readonly displayRoot: string) {}

  display(relativePath: string): string {
    return relativePath === "" ? this.displayRoot : join(this.displayRoot, relativePath);
  }

  error(relativePath: string, message: string, extra: { line?: number; field?: string } = {}) {
    this.add("error", relativePath, message, extra);
  }

  warning(relativePath: string, message: string, extra: { line?: number; field?: string } = {}) {
    this.add("warning", relativePath, message, extra);
  }

  private add(
    severity: SuiteProblem["severity"],
    relativePath: string,
    message: string,
    extra: { line?: number; field?: string },
  ) {
    this.list.push({
      path: this.display(relativePath),
      ...(extra.line === undefined ? {} : { line: extra.line }),
      ...(extra.field === undefined ? {} : { field: extra.field }),
      message,
      severity,
    });
  }

  get errorCount(): number {
    return this.list.filter((problem) => problem.severity === "error").length;
  }
}

async function readText(
  root: string,
  relativePath: string,
  problems: Problems,
  what: string,
): Promise<string | undefined> {
  const path = join(root, relativePath);
  const kind = await kindOf(path);
  if (kind === "missing") {
    problems.error(relativePath, `missing ${what}`);
    return undefined;
  }
  if (kind !== "file") {
    problems.error(relativePath, `expected ${what} to be a file`);
    return undefined;
  }
  const info = await stat(path);
  if (info.size > MAX_TEXT_BYTES) {
    problems.error(relativePath, `${what} is larger than ${MAX_TEXT_BYTES} bytes`);
    return undefined;
  }
  try {
    return (await readFile(path, "utf8")).replace(/^\uFEFF/, "");
  } catch (error) {
    problems.error(relativePath, `cannot read ${what}: ${(error as Error).message}`);
    return undefined;
  }
}

async function subfolders(path: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort(naturalCompare);
}

/**
 * `batch2` before `batch10`: runs of digits compare as numbers, everything else by code point
 * (not by locale, so the order is the same on every machine).
 */
export function naturalCompare(left: string, right: string): number {
  const leftParts = left.match(/\d+|\D+/g) ?? [];
  const rightParts = right.match(/\d+|\D+/g) ?? [];
  for (let index = 0; index < Math.min(leftParts.length, rightParts.length); index++) {
    const a = leftParts[index] as string;
    const b = rightParts[index] as string;
    if (a === b) continue;
    if (/^\d/.test(a) && /^\d/.test(b)) {
      const difference = Number(a) - Number(b);
      if (difference !== 0) return difference;
    }
    return a < b ? -1 : 1;
  }
  return leftParts.length - rightParts.length;
}

/** A repository's folder name from its URL or path: last segment without `.git` / `.bundle`. */
export function repositoryName(location: string): string {
  const trimmed = location.replace(/[\\/]+$/, "");
  const last = trimmed.split(/[\\/:]/).pop() ?? trimmed;
  return last.replace(/\.(git|bundle)$/, "") || "repository";
}

function isInsideMount(parent: string, child: string): boolean {
  const path = posix.relative(posix.normalize(parent), posix.normalize(child));
  return path === "" || (!path.startsWith("..") && !posix.isAbsolute(path));
}

/**
 * Check a suite folder completely and report every problem at once (never stopping at the
 * first). Never throws for anything about the folder; `loadSuite` is the throwing variant.
 */
export async function validateSuite(directory: string): Promise<SuiteValidation> {
  const root = resolve(directory);
  const problems = new Problems(directory);
  const rootKind = await kindOf(root);
  if (rootKind !== "directory") {
    problems.error(
      "",
      rootKind === "missing" ? "suite folder does not exist" : "expected a suite folder",
    );
    return { valid: false, problems: problems.list };
  }

  const suiteText = await readText(root, SUITE_FILE, problems, SUITE_FILE);
  let suiteFile: ReturnType<typeof suiteFileSchema.parse> | undefined;
  if (suiteText !== undefined) {
    const checked = checkYaml(suiteText, suiteFileSchema);
    if (checked.ok) suiteFile = checked.value;
    else
      for (const problem of checked.problems) problems.error(SUITE_FILE, problem.message, problem);
    // Checked on the raw data too, so it is reported alongside schema problems.
    const raw = checked.ok ? checked.value : checked.raw;
    const configurations = (raw as { configurations?: unknown } | undefined)?.configurations;
    const seen = new Set<string>();
    (Array.isArray(configurations) ? configurations : []).forEach((configuration, index) => {
      const agent = (configuration as { agent?: unknown } | null)?.agent;
      if (typeof agent === "string" && idSchema.safeParse(agent).success && !isHarnessName(agent)) {
        const path = ["configurations", index, "agent"];
        const line = checked.lineOf(path);
        problems.error(
          SUITE_FILE,
          `unknown agent harness "${agent}"; expected one of: ${harnessNames().join(", ")} (a program can add its own with registerHarness before loading the suite)`,
          { field: path.join("."), ...(line === undefined ? {} : { line }) },
        );
      }
      const id = (configuration as { id?: unknown } | null)?.id;
      if (typeof id !== "string") return;
      if (seen.has(id)) {
        const path = ["configurations", index, "id"];
        const line = checked.lineOf(path);
        problems.error(SUITE_FILE, `configuration id "${id}" is used twice`, {
          field: path.join("."),
          ...(line === undefined ? {} : { line }),
        });
      }
      seen.add(id);
    });
  }

  const skillsRoot = join(root, SKILLS_FOLDER);
  let skillIds: string[] = [];
  if ((await kindOf(skillsRoot)) !== "directory") {
    problems.error(SKILLS_FOLDER, "missing skills/ folder (one folder per skill)");
  } else if (suiteFile?.skills !== undefined) {
    skillIds = suiteFile.skills;
    const counts = new Map<string, number>();
    for (const id of skillIds) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const [id, count] of counts) {
      if (count > 1)
        problems.error(SUITE_FILE, `skill "${id}" is listed ${count} times`, { field: "skills" });
    }
    skillIds = [...counts.keys()];
  } else {
    skillIds = await subfolders(skillsRoot);
  }
  if (skillIds.length === 0 && (await kindOf(skillsRoot)) === "directory") {
    problems.error(SKILLS_FOLDER, "the suite has no skills");
  }

  const skills: SuiteSkill[] = [];
  for (const id of skillIds) {
    const skill = await inspectSkill(root, id, problems);
    if (skill !== undefined) skills.push(skill);
  }

  const valid = problems.errorCount === 0;
  if (!valid || suiteFile === undefined) return { valid: false, problems: problems.list };
  const suite: Suite = {
    root,
    format: suiteFile.format,
    name: suiteFile.name,
    ...(suiteFile.description === undefined ? {} : { description: suiteFile.description }),
    configurations: suiteFile.configurations,
    skills,
    warnings: problems.list.filter((problem) => problem.severity === "warning"),
  };
  return { valid: true, problems: problems.list, suite };
}

/** Load a suite, or throw an `InputError` listing every error (file, line, field, message). */
export async function loadSuite(directory: string): Promise<Suite> {
  const validation = await validateSuite(directory);
  if (validation.suite !== undefined) return validation.suite;
  const errors = validation.problems.filter((problem) => problem.severity === "error");
  throw new InputError(
    "suite-invalid",
    `the suite ${directory} has ${errors.length} problem${errors.length === 1 ? "" : "s"} and cannot run:\n${errors.map(formatSuiteProblem).join("\n")}`,
    { file: directory },
    { data: { problems: errors } },
  );
}

export function formatSuiteProblem(problem: SuiteProblem): string {
  const where = [
    problem.line === undefined ? problem.path : `${problem.path}:${problem.line}`,
    problem.field === undefined ? undefined : `field "${problem.field}"`,
  ]
    .filter((part) => part !== undefined)
    .join(" ");
  return `  ${problem.severity}: ${where}: ${problem.message}`;
}

async function inspectSkill(
  root: string,
  id: string,
  problems: Problems,
): Promise<SuiteSkill | undefined> {
  const skillRelative = join(SKILLS_FOLDER, id);
  const folder = join(root, skillRelative);
  if (!idSchema.safeParse(id).success) {
    problems.error(
      skillRelative,
      `skill folder name "${id}" is not a valid id (letters, digits, '.', '_', '-')`,
    );
  }
  if ((await kindOf(folder)) !== "directory") {
    problems.error(skillRelative, "missing skill folder");
    return undefined;
  }
  const errorsBefore = problems.errorCount;
  const fileRelative = join(skillRelative, SKILL_FILE);
  const text = await readText(root, fileRelative, problems, SKILL_FILE);
  const checked = text === undefined ? undefined : checkYaml(text, skillFileSchema);
  if (checked !== undefined && !checked.ok) {
    for (const problem of checked.problems) problems.error(fileRelative, problem.message, problem);
  }
  const skillFile = checked?.ok === true ? checked.value : undefined;

  // Agent Skills folders: validated with the skill package model, so the rules live in one place.
  const skillPaths =
    skillFile?.skills ??
    (await subfolders(join(folder, AGENT_SKILLS_FOLDER))).map((name) =>
      join(AGENT_SKILLS_FOLDER, name),
    );
  if (skillPaths.length === 0) {
    problems.error(
      skillFile?.skills === undefined ? join(skillRelative, AGENT_SKILLS_FOLDER) : fileRelative,
      `no skill: the with-skill and without-skill arms would be identical; add an Agent Skills folder under ${AGENT_SKILLS_FOLDER}/`,
      skillFile?.skills === undefined ? {} : { field: "skills" },
    );
  }
  const skillFolders: string[] = [];
  for (const skillPath of skillPaths) {
    const relativeSkill = join(skillRelative, skillPath);
    const absolute = join(root, relativeSkill);
    if ((await kindOf(absolute)) !== "directory") {
      problems.error(relativeSkill, "no skill: missing Agent Skills folder (with SKILL.md)", {
        ...(skillFile?.skills === undefined ? {} : { field: "skills" }),
      });
      continue;
    }
    skillFolders.push(absolute);
    const result = await validateSkillFolder(absolute);
    for (const finding of [...result.errors, ...result.warnings]) {
      const level = result.errors.includes(finding) ? "error" : "warning";
      const findingPath = relative(
        root,
        isAbsolute(finding.file) ? finding.file : resolve(finding.file),
      );
      problems[level](
        findingPath.startsWith("..") ? relativeSkill : findingPath,
        `${finding.message} [${finding.code}]`,
        {
          ...(finding.line === undefined ? {} : { line: finding.line }),
          ...(finding.field === undefined ? {} : { field: finding.field }),
        },
      );
    }
  }

  const repository =
    skillFile?.repository === undefined
      ? undefined
      : await resolveRepository(skillFile.repository, folder, fileRelative, problems);
  let environment: SuiteSkill["environment"];
  if (skillFile?.environment !== undefined) {
    const { dockerfile, ...rest } = skillFile.environment;
    if (dockerfile !== undefined && (await kindOf(join(folder, dockerfile))) !== "file") {
      problems.error(fileRelative, `Dockerfile ${dockerfile} does not exist in ${skillRelative}`, {
        field: "environment.dockerfile",
      });
    }
    environment = {
      ...rest,
      ...(dockerfile === undefined ? {} : { dockerfile: join(folder, dockerfile) }),
    };
  }

  const requirementsRelative = join(skillRelative, REQUIREMENTS_FOLDER);
  const requirementIds = await subfolders(join(root, requirementsRelative));
  if (requirementIds.length === 0) {
    problems.error(
      requirementsRelative,
      "the skill has no requirements (one folder per requirement)",
    );
  }
  const repositoryMount = repository?.mountPath;
  const requirements: SuiteRequirement[] = [];
  for (const requirementId of requirementIds) {
    const requirement = await inspectRequirement(
      root,
      join(requirementsRelative, requirementId),
      requirementId,
      repositoryMount,
      problems,
    );
    if (requirement !== undefined) requirements.push(requirement);
  }

  if (problems.errorCount > errorsBefore || skillFile === undefined) return undefined;
  return {
    id,
    folder,
    skillFolders,
    ...(repository === undefined ? {} : { repository }),
    ...(environment === undefined ? {} : { environment }),
    ...(skillFile.agentLimits === undefined ? {} : { agentLimits: skillFile.agentLimits }),
    ...(skillFile.source === undefined ? {} : { source: skillFile.source }),
    requirements,
  };
}

async function resolveRepository(
  spec: RepositorySpec,
  skillFolder: string,
  fileRelative: string,
  problems: Problems,
): Promise<SuiteRepository | undefined> {
  let source: SuiteRepository["source"] | undefined;
  let location = "";
  if (spec.url !== undefined) {
    location = spec.url;
    if (spec.url.startsWith("file:")) {
      let path: string | undefined;
      try {
        path = fileURLToPath(spec.url);
      } catch {
        problems.error(fileRelative, `"${spec.url}" is not a valid file URL`, {
          field: "repository.url",
        });
      }
      if (path !== undefined && (await kindOf(path)) === "missing") {
        problems.error(fileRelative, `repository ${path} (from the file URL) does not exist`, {
          field: "repository.url",
        });
      }
      source = { kind: "url", url: spec.url };
    } else if (/^(https?|ssh|git):\/\/|^[\w.-]+@[\w.-]+:/.test(spec.url)) {
      source = { kind: "url", url: spec.url };
    } else {
      problems.error(
        fileRelative,
        `"${spec.url}" is not a git URL (https://, ssh://, git://, git@host: or file://); use "path" for a local folder`,
        { field: "repository.url" },
      );
    }
  } else if (spec.path !== undefined || spec.bundle !== undefined) {
    const field = spec.path !== undefined ? "path" : "bundle";
    const given = (spec.path ?? spec.bundle) as string;
    location = given;
    const absolute = resolve(skillFolder, given);
    const kind = await kindOf(absolute);
    const expected = field === "path" ? "directory" : "file";
    if (kind !== expected) {
      problems.error(
        fileRelative,
        kind === "missing"
          ? `repository ${field} ${absolute} does not exist`
          : `repository ${field} ${absolute} is not a ${expected === "directory" ? "folder" : "file"}`,
        { field: `repository.${field}` },
      );
    }
    source =
      field === "path" ? { kind: "path", path: absolute } : { kind: "bundle", path: absolute };
  }
  if (source === undefined) return undefined;
  const name = spec.name ?? repositoryName(location);
  return {
    source,
    commit: spec.commit,
    name,
    setup: spec.setup ?? [],
    mountPath: spec.mountPath ?? posix.join(WORKSPACE_ROOT, name),
  };
}

async function inspectRequirement(
  root: string,
  requirementRelative: string,
  id: string,
  repositoryMount: string | undefined,
  problems: Problems,
): Promise<SuiteRequirement | undefined> {
  const errorsBefore = problems.errorCount;
  const folder = join(root, requirementRelative);
  if (!idSchema.safeParse(id).success) {
    problems.error(requirementRelative, `requirement folder name "${id}" is not a valid id`);
  }

  const markdownRelative = join(requirementRelative, REQUIREMENT_FILE);
  const markdown = await readText(root, markdownRelative, problems, REQUIREMENT_FILE);
  const parsed = markdown === undefined ? undefined : parseRequirementMarkdown(id, markdown);
  for (const problem of parsed?.problems ?? []) {
    problems[problem.severity](markdownRelative, problem.message, {
      ...(problem.line === undefined ? {} : { line: problem.line }),
      ...(problem.field === undefined ? {} : { field: problem.field }),
    });
  }

  const verifier = await inspectVerifier(root, requirementRelative, repositoryMount, problems);
  const solution = await inspectSolution(root, requirementRelative, problems);

  if (problems.errorCount > errorsBefore || parsed === undefined || verifier === undefined) {
    return undefined;
  }
  return {
    ...parsed.requirement,
    folder,
    verifier,
    ...(solution === undefined ? {} : { solution }),
  };
}

async function inspectVerifier(
  root: string,
  requirementRelative: string,
  repositoryMount: string | undefined,
  problems: Problems,
): Promise<SuiteVerifier | undefined> {
  const fileRelative = join(requirementRelative, VERIFIER_FILE);
  const text = await readText(root, fileRelative, problems, `${VERIFIER_FILE} (no verifier)`);
  if (text === undefined) return undefined;
  const checked = checkYaml(text, verifierFileSchema);
  if (!checked.ok) {
    for (const problem of checked.problems) problems.error(fileRelative, problem.message, problem);
    return undefined;
  }
  const spec = checked.value;
  const folderRelative = join(requirementRelative, VERIFIER_FOLDER);
  const folder = join(root, folderRelative);
  let complete = true;
  for (const file of spec.files) {
    if ((await kindOf(join(folder, file))) === "missing") {
      complete = false;
      problems.error(
        join(folderRelative, file),
        `no verifier: file "${file}" named in ${VERIFIER_FILE} does not exist${spec.source?.path === undefined ? "" : ` (expected a copy of ${String(spec.source.path)})`}`,
        { field: "files" },
      );
    }
  }
  const mountPath = spec.mountPath ?? DEFAULT_VERIFIER_MOUNT;
  if (
    repositoryMount !== undefined &&
    (isInsideMount(repositoryMount, mountPath) || isInsideMount(mountPath, repositoryMount))
  ) {
    complete = false;
    problems.error(
      fileRelative,
      `verifier mount path ${mountPath} overlaps the repository at ${repositoryMount}; verifiers live outside the repository so the agent never sees them`,
      { field: "mountPath" },
    );
  }
  if (!complete) return undefined;
  return {
    command: spec.command,
    folder,
    files: spec.files,
    mountPath,
    cwd: spec.cwd ?? mountPath,
    ...(spec.timeoutSeconds === undefined ? {} : { timeoutSeconds: spec.timeoutSeconds }),
    ...(spec.junit === undefined ? {} : { junit: spec.junit }),
    ...(spec.rewardFile === undefined ? {} : { rewardFile: spec.rewardFile }),
    // Harbor suites imported before `scoring` existed are scored by their reward too.
    ...(spec.rewardFile !== undefined &&
    (spec.scoring ?? (spec.source?.benchmark === "harbor" ? "reward" : undefined)) === "reward"
      ? { scoring: "reward" as const }
      : {}),
    ...(spec.source === undefined ? {} : { source: spec.source }),
  };
}

async function inspectSolution(
  root: string,
  requirementRelative: string,
  problems: Problems,
): Promise<ReferenceSolution | undefined> {
  const candidates: ReferenceSolution[] = [];
  const patch = join(root, requirementRelative, SOLUTION_PATCH);
  const files = join(root, requirementRelative, SOLUTION_FILES_FOLDER);
  const script = join(root, requirementRelative, SOLUTION_SCRIPT_FOLDER);
  const patchKind = await kindOf(patch);
  if (patchKind === "file") {
    const info = await stat(patch);
    if (info.size === 0)
      problems.error(join(requirementRelative, SOLUTION_PATCH), "reference patch is empty");
    candidates.push({ kind: "patch", path: patch });
  } else if (patchKind !== "missing") {
    problems.error(join(requirementRelative, SOLUTION_PATCH), "expected a patch file");
  }
  if ((await kindOf(files)) === "directory") candidates.push({ kind: "files", path: files });
  if ((await kindOf(script)) === "directory") {
    if ((await kindOf(join(script, SOLUTION_SCRIPT_ENTRY))) !== "file") {
      problems.error(
        join(requirementRelative, SOLUTION_SCRIPT_FOLDER),
        `a solution script folder needs ${SOLUTION_SCRIPT_ENTRY}`,
      );
    }
    candidates.push({ kind: "script", path: script, entry: SOLUTION_SCRIPT_ENTRY });
  }
  if (candidates.length > 1) {
    problems.error(
      requirementRelative,
      `more than one reference solution (${candidates.map((candidate) => candidate.kind).join(", ")}); keep one of ${SOLUTION_PATCH}, ${SOLUTION_FILES_FOLDER}/, ${SOLUTION_SCRIPT_FOLDER}/`,
    );
  }
  return candidates[0];
}

/** The suite folder's own name, for messages. */
export function suiteDisplayName(directory: string): string {
  return basename(resolve(directory));
}
