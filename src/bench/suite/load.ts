import { readFile, stat } from "node:fs/promises";
import { basename, isAbsolute, join, posix, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { harnessNames, isHarnessName } from "../../agents/registry.js";
import { InputError, UsageError } from "../../core/errors.js";
// From its module, not the skill barrel (which also exports the MCP server and its SDK).
import { validateSkillFolder } from "../../skill/validate.js";
import { CommitChecker } from "./commits.js";
import { folderEntries, naturalCompare, pathKind } from "./files.js";
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
  ExcludedPart,
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

// Other modules import the name order from here, where it was first defined.
export { naturalCompare };

/** Bytes we are willing to read from one YAML or Markdown file of a suite. */
const MAX_TEXT_BYTES = 4 * 1024 * 1024;

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
  const kind = await pathKind(path);
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
  return (await folderEntries(path))
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort(naturalCompare);
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

/** Which part of a suite to use: `--skill` and `--requirement` of the commands. */
export interface SuiteSelection {
  /** Skill ids; every skill when absent or empty. */
  readonly skills?: readonly string[];
  /**
   * Requirement ids: `batch3` (that requirement of every selected skill) or `skill/batch3`;
   * every requirement when absent or empty.
   */
  readonly requirements?: readonly string[];
}

export interface ValidateSuiteOptions extends SuiteSelection {
  /**
   * Also check that each selected skill's pinned commit exists in its repository (local
   * repositories and bundles; remote ones are reported as not checked).
   */
  readonly checkCommits?: boolean;
}

function selectedRequirement(
  selection: SuiteSelection,
  skill: string,
  requirement: string,
): boolean {
  const wanted = selection.requirements ?? [];
  if (wanted.length === 0) return true;
  return wanted.some((entry) => entry === requirement || entry === `${skill}/${requirement}`);
}

/**
 * Check a suite folder completely and report every problem at once (never stopping at the
 * first). Never throws for anything about the folder; `loadSuite` is the throwing variant.
 * With a selection only the selected skills and requirements are checked (and an id that
 * selects nothing is an error). Besides `suite` (present only without any error), the result
 * has `runnable`: the suite without the skills and requirements that have errors, so one bad
 * part never blocks the others.
 */
export async function validateSuite(
  directory: string,
  options: ValidateSuiteOptions = {},
): Promise<SuiteValidation> {
  const root = resolve(directory);
  const problems = new Problems(directory);
  const rootKind = await pathKind(root);
  if (rootKind !== "directory") {
    problems.error(
      "",
      rootKind === "missing" ? "suite folder does not exist" : "expected a suite folder",
    );
    return { valid: false, problems: problems.list, excluded: [] };
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
  if ((await pathKind(skillsRoot)) !== "directory") {
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
  if (skillIds.length === 0 && (await pathKind(skillsRoot)) === "directory") {
    problems.error(SKILLS_FOLDER, "the suite has no skills");
  }
  const suiteErrors = problems.errorCount;
  const wantedSkills = options.skills ?? [];
  if (wantedSkills.length > 0) {
    const unknown = wantedSkills.filter((id) => !skillIds.includes(id));
    for (const id of unknown) {
      problems.error(
        SKILLS_FOLDER,
        `--skill ${id}: the suite has no skill "${id}" (it has: ${skillIds.join(", ") || "none"})`,
        { field: "skill" },
      );
    }
    skillIds = skillIds.filter((id) => wantedSkills.includes(id));
  }

  const skills: SuiteSkill[] = [];
  const excluded: ExcludedPart[] = [];
  const commits = options.checkCommits === true ? new CommitChecker() : undefined;
  const requirementsSeen = new Set<string>();
  try {
    for (const id of skillIds) {
      const before = problems.list.length;
      const inspected = await inspectSkill(root, id, problems, options, commits);
      for (const requirement of inspected.requirementIds) {
        requirementsSeen.add(requirement);
        requirementsSeen.add(`${id}/${requirement}`);
      }
      if (inspected.skill !== undefined) skills.push(inspected.skill);
      const skillProblems = errorsSince(problems, before).filter(
        (problem) => !inspected.requirementProblems.has(problem),
      );
      if (inspected.skill === undefined) {
        // Only what the selection asks for is left out (and later reported as broken).
        const selected = inspected.requirementIds.filter((requirement) =>
          selectedRequirement(options, id, requirement),
        );
        if (selected.length > 0 || (options.requirements ?? []).length === 0) {
          excluded.push({
            skill: id,
            requirements: selected,
            problems: errorsSince(problems, before),
          });
        }
      } else {
        for (const [requirement, requirementProblems] of inspected.excludedRequirements) {
          excluded.push({ skill: id, requirement, problems: requirementProblems });
        }
        if (skillProblems.length > 0) excluded.push({ skill: id, problems: skillProblems });
      }
    }
  } finally {
    await commits?.close();
  }
  for (const wanted of options.requirements ?? []) {
    if (!requirementsSeen.has(wanted)) {
      problems.error(
        SKILLS_FOLDER,
        `--requirement ${wanted}: no selected skill has a requirement "${wanted}" (use an id such as batch1, or skill/batch1)`,
        { field: "requirement" },
      );
    }
  }

  const valid = problems.errorCount === 0;
  if (suiteFile === undefined || suiteErrors > 0) {
    return { valid: false, problems: problems.list, excluded };
  }
  const suite: Suite = {
    root,
    format: suiteFile.format,
    name: suiteFile.name,
    ...(suiteFile.description === undefined ? {} : { description: suiteFile.description }),
    configurations: suiteFile.configurations,
    skills: skills.filter((skill) => skill.requirements.length > 0),
    warnings: problems.list.filter((problem) => problem.severity === "warning"),
  };
  return {
    valid,
    problems: problems.list,
    ...(valid ? { suite } : {}),
    ...(suite.skills.length > 0 ? { runnable: suite } : {}),
    excluded,
  };
}

/**
 * The selected part of a loaded suite; an id that selects nothing is a `UsageError` naming
 * what the suite has.
 */
export function selectFromSuite(suite: Suite, selection: SuiteSelection): Suite {
  const skills = selection.skills ?? [];
  const requirements = selection.requirements ?? [];
  if (skills.length === 0 && requirements.length === 0) return suite;
  const unknownSkills = skills.filter((id) => !suite.skills.some((skill) => skill.id === id));
  if (unknownSkills.length > 0) {
    throw new UsageError(
      "unknown-skill",
      `--skill ${unknownSkills.join(", ")}: not in the suite (it has: ${suite.skills.map((skill) => skill.id).join(", ")})`,
    );
  }
  const chosen = suite.skills
    .filter((skill) => skills.length === 0 || skills.includes(skill.id))
    .map((skill) => ({
      ...skill,
      requirements: skill.requirements.filter((requirement) =>
        selectedRequirement(selection, skill.id, requirement.id),
      ),
    }));
  const unknownRequirements = requirements.filter(
    (wanted) =>
      !chosen.some((skill) =>
        skill.requirements.some(
          (requirement) => wanted === requirement.id || wanted === `${skill.id}/${requirement.id}`,
        ),
      ),
  );
  if (unknownRequirements.length > 0) {
    throw new UsageError(
      "unknown-requirement",
      `--requirement ${unknownRequirements.join(", ")}: no selected skill has it (use an id such as batch1, or skill/batch1)`,
    );
  }
  return { ...suite, skills: chosen.filter((skill) => skill.requirements.length > 0) };
}

function errorsSince(problems: Problems, index: number): SuiteProblem[] {
  return problems.list.slice(index).filter((problem) => problem.severity === "error");
}

export interface LoadSuiteOptions extends SuiteSelection {
  /**
   * Return the runnable part of a suite with errors instead of throwing (the excluded parts are
   * in the result's `excluded`); it still throws when nothing can run.
   */
  readonly partial?: boolean;
  readonly checkCommits?: boolean;
}

/** A suite loaded for running: the suite and the parts left out because of errors. */
export interface LoadedSuite {
  readonly suite: Suite;
  readonly excluded: readonly ExcludedPart[];
  readonly problems: readonly SuiteProblem[];
}

/**
 * Load the selected part of a suite. With `partial`, skills and requirements with errors are
 * left out and listed (the rest runs); without it any error throws.
 */
export async function loadSuiteSelection(
  directory: string,
  options: LoadSuiteOptions = {},
): Promise<LoadedSuite> {
  const validation = await validateSuite(directory, options);
  const selectionErrors = validation.problems.filter(
    (problem) =>
      problem.severity === "error" &&
      (problem.field === "skill" || problem.field === "requirement"),
  );
  if (validation.suite !== undefined) {
    return { suite: validation.suite, excluded: [], problems: validation.problems };
  }
  if (
    options.partial === true &&
    validation.runnable !== undefined &&
    selectionErrors.length === 0
  ) {
    return {
      suite: validation.runnable,
      excluded: validation.excluded,
      problems: validation.problems,
    };
  }
  const errors = validation.problems.filter((problem) => problem.severity === "error");
  throw new InputError(
    "suite-invalid",
    `the suite ${directory} has ${errors.length} problem${errors.length === 1 ? "" : "s"} and ${options.partial === true ? "nothing in it can" : "it cannot"} run:\n${errors.map(formatSuiteProblem).join("\n")}`,
    { file: directory },
    { data: { problems: errors } },
  );
}

/** Load a suite, or throw an `InputError` listing every error (file, line, field, message). */
export async function loadSuite(directory: string, selection: SuiteSelection = {}): Promise<Suite> {
  const validation = await validateSuite(directory, selection);
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

interface InspectedSkill {
  /** Absent when the skill itself (not just some requirements) has errors. */
  readonly skill?: SuiteSkill;
  /** Requirements left out because of their errors, with those errors. */
  readonly excludedRequirements: Map<string, SuiteProblem[]>;
  /** Every problem that belongs to a requirement (not to the skill). */
  readonly requirementProblems: Set<SuiteProblem>;
  /** The requirement folders of the skill (selected or not). */
  readonly requirementIds: readonly string[];
}

async function inspectSkill(
  root: string,
  id: string,
  problems: Problems,
  selection: SuiteSelection,
  commits: CommitChecker | undefined,
): Promise<InspectedSkill> {
  const excludedRequirements = new Map<string, SuiteProblem[]>();
  const requirementProblems = new Set<SuiteProblem>();
  const nothing = (requirementIds: readonly string[] = []): InspectedSkill => ({
    excludedRequirements,
    requirementProblems,
    requirementIds,
  });
  const skillRelative = join(SKILLS_FOLDER, id);
  const folder = join(root, skillRelative);
  if (!idSchema.safeParse(id).success) {
    problems.error(
      skillRelative,
      `skill folder name "${id}" is not a valid id (letters, digits, '.', '_', '-')`,
    );
  }
  if ((await pathKind(folder)) !== "directory") {
    problems.error(skillRelative, "missing skill folder");
    return nothing();
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
    if ((await pathKind(absolute)) !== "directory") {
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

  const variants: Record<string, string[]> = {};
  for (const [name, paths] of Object.entries(skillFile?.variants ?? {})) {
    variants[name] = paths.map((path) => join(folder, path));
    for (const path of paths) {
      const relativeVariant = join(skillRelative, path);
      if ((await pathKind(join(root, relativeVariant))) !== "directory") {
        problems.error(fileRelative, `variant ${name}: missing Agent Skills folder ${path}`, {
          field: `variants.${name}`,
        });
      } else if (!(await validateSkillFolder(join(root, relativeVariant))).valid) {
        problems.error(relativeVariant, `variant ${name}: not a valid Agent Skills folder`, {
          field: `variants.${name}`,
        });
      }
    }
  }

  const errorsBeforeRepository = problems.errorCount;
  const repository =
    skillFile?.repository === undefined
      ? undefined
      : await resolveRepository(skillFile.repository, folder, fileRelative, problems);
  // A repository that is not there has no commits to look for: one error says so, not two.
  const repositoryFound = problems.errorCount === errorsBeforeRepository;
  if (
    repository !== undefined &&
    repositoryFound &&
    commits !== undefined &&
    checked?.ok === true
  ) {
    const check = await commits.check(repository);
    const line = checked.lineOf(["repository", "commit"]);
    const where = { field: "repository.commit", ...(line === undefined ? {} : { line }) };
    if (check.status === "missing") problems.error(fileRelative, check.message, where);
    else if (check.status === "unchecked") problems.warning(fileRelative, check.message, where);
  }
  let environment: SuiteSkill["environment"];
  if (skillFile?.environment !== undefined) {
    const { dockerfile, ...rest } = skillFile.environment;
    if (dockerfile !== undefined && (await pathKind(join(folder, dockerfile))) !== "file") {
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
  const skillErrors = problems.errorCount;
  for (const requirementId of requirementIds) {
    if (!selectedRequirement(selection, id, requirementId)) continue;
    const before = problems.list.length;
    const requirement = await inspectRequirement(
      root,
      join(requirementsRelative, requirementId),
      requirementId,
      repositoryMount,
      problems,
    );
    for (const problem of problems.list.slice(before)) requirementProblems.add(problem);
    if (requirement !== undefined) requirements.push(requirement);
    else excludedRequirements.set(requirementId, errorsSince(problems, before));
  }

  if (skillErrors > errorsBefore || skillFile === undefined) return nothing(requirementIds);
  const skill: SuiteSkill = {
    id,
    folder,
    skillFolders,
    ...(Object.keys(variants).length === 0 ? {} : { variants }),
    ...(repository === undefined ? {} : { repository }),
    ...(environment === undefined ? {} : { environment }),
    ...(skillFile.agentLimits === undefined ? {} : { agentLimits: skillFile.agentLimits }),
    ...(skillFile.source === undefined ? {} : { source: skillFile.source }),
    requirements,
  };
  return { skill, excludedRequirements, requirementProblems, requirementIds };
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
        // Not a file-system error: `fileURLToPath` refuses a malformed URL, reported as such.
        problems.error(fileRelative, `"${spec.url}" is not a valid file URL`, {
          field: "repository.url",
        });
      }
      if (path !== undefined && (await pathKind(path)) === "missing") {
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
    const kind = await pathKind(absolute);
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
    setup: Array.isArray(spec.setup) ? spec.setup : [],
    setupChoice:
      spec.setup === undefined || spec.setup === "detect"
        ? { kind: "detect" }
        : spec.setup === "none" || spec.setup.length === 0
          ? { kind: "none" }
          : { kind: "commands", commands: spec.setup },
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
    if ((await pathKind(join(folder, file))) === "missing") {
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
  const patchKind = await pathKind(patch);
  if (patchKind === "file") {
    const info = await stat(patch);
    if (info.size === 0)
      problems.error(join(requirementRelative, SOLUTION_PATCH), "reference patch is empty");
    candidates.push({ kind: "patch", path: patch });
  } else if (patchKind !== "missing") {
    problems.error(join(requirementRelative, SOLUTION_PATCH), "expected a patch file");
  }
  if ((await pathKind(files)) === "directory") candidates.push({ kind: "files", path: files });
  if ((await pathKind(script)) === "directory") {
    if ((await pathKind(join(script, SOLUTION_SCRIPT_ENTRY))) !== "file") {
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
