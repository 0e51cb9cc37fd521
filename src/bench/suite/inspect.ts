/**
 * One skill folder of a suite checked part by part — skill.yaml, its repository, each
 * requirement's document, verifier and reference solution — every problem recorded with its
 * file, line and field. `load.ts` puts the skills together into a suite.
 *
 * One file although past 400 lines: `inspectSkill` and the inspectors of its parts share the
 * problem list and the suite-relative paths, and each part's checks are read in their order.
 */
import { stat } from "node:fs/promises";
import { isAbsolute, join, posix, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { definedFields } from "../../core/defined.js";
import { treeDigest } from "../../env/workspace/digest.js";
// From its module, not the skill barrel (which also exports the MCP server and its SDK).
import { validateSkillFolder } from "../../skill/validate.js";
import type { StoredCheckLabel } from "../check/stored-labels.js";
import type { CommitChecker } from "./commits.js";
import { pathKind, subfolders } from "./files.js";
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
  VERIFIER_FILE,
  VERIFIER_FOLDER,
  WORKSPACE_ROOT,
} from "./layout.js";
import { errorsSince, Problems, readText } from "./problems.js";
import { parseRequirementMarkdown } from "./requirement.js";
import {
  idSchema,
  type RepositorySpec,
  type SkillFile,
  skillFileSchema,
  verifierFileSchema,
} from "./schema.js";
import { describeMissingTool, missingVerifierTools } from "./tools.js";
import type {
  ReferenceSolution,
  SuiteProblem,
  SuiteRepository,
  SuiteRequirement,
  SuiteSkill,
  SuiteVerifier,
} from "./types.js";
import { checkYaml } from "./yaml.js";

/** Which part of a suite to use: `--skill` and `--requirement` of the commands. */
export interface SuiteSelection {
  /** Skill ids; every skill when absent or empty. */
  readonly skills?: readonly string[];
  /**
   * Requirement ids: `batch3` (that requirement of every selected skill) or `skill/batch3`;
   * every requirement when absent or empty.
   */
  readonly requirements?: readonly string[];
  /**
   * Loading for controls only (`bench check-tasks`: the oracle and the untouched run use no
   * skill), so a skill without Agent Skills folders is not an error.
   */
  readonly controlsOnly?: boolean;
}

export function selectedRequirement(
  selection: SuiteSelection,
  skill: string,
  requirement: string,
): boolean {
  const wanted = selection.requirements ?? [];
  if (wanted.length === 0) return true;
  return wanted.some((entry) => entry === requirement || entry === `${skill}/${requirement}`);
}

/** A repository's folder name from its URL or path: last segment without `.git` / `.bundle`. */
export function repositoryName(location: string): string {
  const trimmed = location.replace(/[\\/]+$/, "");
  const last = trimmed.split(/[\\/:]/).pop() ?? trimmed;
  return last.replace(/\.(git|bundle)$/, "") || "repository";
}

export function isInsideMount(parent: string, child: string): boolean {
  const path = posix.relative(posix.normalize(parent), posix.normalize(child));
  return path === "" || (!path.startsWith("..") && !posix.isAbsolute(path));
}

export interface InspectedSkill {
  /** Absent when the skill itself (not just some requirements) has errors. */
  readonly skill?: SuiteSkill;
  /** Requirements left out because of their errors, with those errors. */
  readonly excludedRequirements: Map<string, SuiteProblem[]>;
  /** Every problem that belongs to a requirement (not to the skill). */
  readonly requirementProblems: Set<SuiteProblem>;
  /** The requirement folders of the skill (selected or not). */
  readonly requirementIds: readonly string[];
}

export async function inspectSkill(
  root: string,
  id: string,
  problems: Problems,
  selection: SuiteSelection & { readonly checkLabels?: ReadonlyMap<string, StoredCheckLabel> },
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

  const where = { root, skillRelative, folder, fileRelative };
  const skillFolders = await inspectSkillFolders(where, skillFile, selection, problems);
  const variants = await inspectVariants(where, skillFile, problems);
  const distractors = await inspectDistractors(where, skillFile, problems);

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
  let someLeftOut = false;
  for (const requirementId of requirementIds) {
    if (!selectedRequirement(selection, id, requirementId)) {
      someLeftOut = true;
      continue;
    }
    const before = problems.list.length;
    const requirement = await inspectRequirement(
      root,
      join(requirementsRelative, requirementId),
      requirementId,
      repositoryMount,
      problems,
    );
    // Validation (the mode that checks commits) also names tools this machine lacks.
    if (requirement !== undefined && commits !== undefined) {
      const tools = await missingVerifierTools(requirement);
      const measured =
        tools.length === 0
          ? ""
          : await measuredLabel(requirement, selection.checkLabels?.get(`${id}/${requirementId}`));
      for (const tool of tools) {
        problems.warning(
          join(requirementsRelative, requirementId),
          `${describeMissingTool(tool)}; ${measured}`,
        );
      }
    }
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
    ...(distractors.length === 0 ? {} : { distractors }),
    ...definedFields({
      repository,
      environment,
      agentLimits: skillFile.agentLimits,
      source: skillFile.source,
    }),
    requirements,
    ...(someLeftOut ? { selectedRequirementsOnly: true as const } : {}),
  };
  return { skill, excludedRequirements, requirementProblems, requirementIds };
}

/**
 * Every requirement the suite gives `skill` that loads without errors, read again from its folder
 * when `skill` holds only a selection of them: what a load of the whole suite would give it.
 */
export async function everyRequirement(skill: SuiteSkill): Promise<readonly SuiteRequirement[]> {
  if (skill.selectedRequirementsOnly !== true) return skill.requirements;
  // `folder` is `<suite root>/skills/<id>`.
  const root = resolve(skill.folder, "..", "..");
  // Its environment needs no Agent Skills folder: do not ask for one.
  const inspected = await inspectSkill(
    root,
    skill.id,
    new Problems(root),
    { controlsOnly: true },
    undefined,
  );
  return inspected.skill?.requirements ?? skill.requirements;
}

/** Where a skill's files are: the suite root, the skill's folder (relative and absolute), its skill.yaml. */
interface SkillPlace {
  readonly root: string;
  readonly skillRelative: string;
  readonly folder: string;
  readonly fileRelative: string;
}

/**
 * The skill's Agent Skills folders, each validated with the skill package model (so the rules
 * live in one place); their findings become the suite's problems.
 */
async function inspectSkillFolders(
  place: SkillPlace,
  skillFile: SkillFile | undefined,
  selection: SuiteSelection,
  problems: Problems,
): Promise<string[]> {
  const { root, skillRelative, folder, fileRelative } = place;
  const skillPaths =
    skillFile?.skills ??
    (await subfolders(join(folder, AGENT_SKILLS_FOLDER))).map((name) =>
      join(AGENT_SKILLS_FOLDER, name),
    );
  if (skillPaths.length === 0 && selection.controlsOnly !== true) {
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
          ...definedFields({ line: finding.line, field: finding.field }),
        },
      );
    }
  }
  return skillFolders;
}

/** The skill's variants (`variants:` of skill.yaml): each an existing, valid Agent Skills folder. */
async function inspectVariants(
  place: SkillPlace,
  skillFile: SkillFile | undefined,
  problems: Problems,
): Promise<Record<string, string[]>> {
  const variants: Record<string, string[]> = {};
  for (const [name, paths] of Object.entries(skillFile?.variants ?? {})) {
    variants[name] = paths.map((path) => join(place.folder, path));
    for (const path of paths) {
      await inspectAgentSkillsFolder(place, path, `variant ${name}`, `variants.${name}`, problems);
    }
  }
  return variants;
}

/**
 * The skill's distractors (`distractors:` of skill.yaml): skills installed in every arm, the
 * unassisted one included, each an existing, valid Agent Skills folder.
 */
async function inspectDistractors(
  place: SkillPlace,
  skillFile: SkillFile | undefined,
  problems: Problems,
): Promise<string[]> {
  const paths = skillFile?.distractors ?? [];
  for (const path of paths) {
    await inspectAgentSkillsFolder(place, path, `distractor ${path}`, "distractors", problems);
  }
  return paths.map((path) => join(place.folder, path));
}

/** One Agent Skills folder skill.yaml names (relative to the skill folder): there and valid. */
async function inspectAgentSkillsFolder(
  place: SkillPlace,
  path: string,
  label: string,
  field: string,
  problems: Problems,
): Promise<void> {
  const { root, skillRelative, fileRelative } = place;
  const relativeFolder = join(skillRelative, path);
  if ((await pathKind(join(root, relativeFolder))) !== "directory") {
    problems.error(fileRelative, `${label}: missing Agent Skills folder ${path}`, { field });
  } else if (!(await validateSkillFolder(join(root, relativeFolder))).valid) {
    problems.error(relativeFolder, `${label}: not a valid Agent Skills folder`, { field });
  }
}

export async function resolveRepository(
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

export async function inspectRequirement(
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
      ...definedFields({ line: problem.line, field: problem.field }),
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

export async function inspectVerifier(
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
    ...definedFields({
      timeoutSeconds: spec.timeoutSeconds,
      junit: spec.junit,
      rewardFile: spec.rewardFile,
    }),
    // Harbor suites imported before `scoring` existed are scored by their reward too.
    ...(spec.rewardFile !== undefined &&
    (spec.scoring ?? (spec.source?.benchmark === "harbor" ? "reward" : undefined)) === "reward"
      ? { scoring: "reward" as const }
      : {}),
    ...definedFields({ user: spec.user, source: spec.source }),
  };
}

export async function inspectSolution(
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

/**
 * What `bench check` measured of the requirement here, when its stored row is for this very
 * verifier; otherwise a note that the count of tests needing the tool is read from the text.
 */
async function measuredLabel(
  requirement: SuiteRequirement,
  stored: StoredCheckLabel | undefined,
): Promise<string> {
  if (
    stored !== undefined &&
    stored.verifierDigest === (await treeDigest(requirement.verifier.folder))
  ) {
    const ratio =
      stored.untouchedPassRatio === null
        ? ""
        : `, ${Math.round(stored.untouchedPassRatio * 1000) / 10}% untouched`;
    return `measured by bench check (${stored.measuredAt}): ${stored.label}${ratio}`;
  }
  return "the test count is static (read from the verifier's text); bench check measures which checks fail for the tool";
}
