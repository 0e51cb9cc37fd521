import { basename, join, resolve } from "node:path";
import { harnessNames, isHarnessName } from "../../agents/registry.js";
import { InputError, UsageError } from "../../core/errors.js";
import type { StoredCheckLabel } from "../check/stored-labels.js";
import { CommitChecker } from "./commits.js";
import { naturalCompare, pathKind, subfolders } from "./files.js";
import {
  inspectSkill,
  repositoryName,
  type SuiteSelection,
  selectedRequirement,
} from "./inspect.js";
import { SKILLS_FOLDER, SUITE_FILE } from "./layout.js";
import { errorsSince, Problems, readText } from "./problems.js";
import { idSchema, suiteFileSchema } from "./schema.js";
import type {
  ExcludedPart,
  Suite,
  SuiteProblem,
  SuiteRequirement,
  SuiteSkill,
  SuiteValidation,
} from "./types.js";
import { checkYaml } from "./yaml.js";

// Other modules import these from here, where they were first defined.
export { naturalCompare, repositoryName, type SuiteSelection };

export interface ValidateSuiteOptions extends SuiteSelection {
  /**
   * Also check that each selected skill's pinned commit exists in its repository (local
   * repositories and bundles; remote ones are reported as not checked).
   */
  readonly checkCommits?: boolean;
  /**
   * Give `runnable` even when every part has errors (a sound `suite.yaml` with nothing runnable):
   * task controls report each excluded task as its own result instead of refusing the suite.
   */
  readonly keepEmpty?: boolean;
  /**
   * What the last `bench check` stored per `skill/requirement` (`readCheckLabels`): a row whose
   * verifier starts a missing tool then gives the measured label beside the static count.
   */
  readonly checkLabels?: ReadonlyMap<string, StoredCheckLabel>;
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
    checkConfigurations(checked.ok ? checked.value : checked.raw, checked.lineOf, problems);
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
    ...(suiteFile.protocol === undefined ? {} : { protocol: suiteFile.protocol }),
    skills: skills.filter((skill) => skill.requirements.length > 0),
    warnings: problems.list.filter((problem) => problem.severity === "warning"),
  };
  return {
    valid,
    problems: problems.list,
    ...(valid ? { suite } : {}),
    ...(suite.skills.length > 0 || options.keepEmpty === true ? { runnable: suite } : {}),
    excluded,
  };
}

/** Harness names that are not registered, and configuration ids used twice. */
function checkConfigurations(
  raw: unknown,
  lineOf: (path: (string | number)[]) => number | undefined,
  problems: Problems,
): void {
  const configurations = (raw as { configurations?: unknown } | undefined)?.configurations;
  const seen = new Set<string>();
  (Array.isArray(configurations) ? configurations : []).forEach((configuration, index) => {
    const agent = (configuration as { agent?: unknown } | null)?.agent;
    if (typeof agent === "string" && idSchema.safeParse(agent).success && !isHarnessName(agent)) {
      const path = ["configurations", index, "agent"];
      const line = lineOf(path);
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
      const line = lineOf(path);
      problems.error(SUITE_FILE, `configuration id "${id}" is used twice`, {
        field: path.join("."),
        ...(line === undefined ? {} : { line }),
      });
    }
    seen.add(id);
  });
}

/**
 * `skill` with only the requirements `keep` accepts; marked as a selection when that leaves some
 * out, so its environment is still prepared for all of them (`everyRequirement`).
 */
export function narrowedSkill(
  skill: SuiteSkill,
  keep: (requirement: SuiteRequirement) => boolean,
): SuiteSkill {
  const requirements = skill.requirements.filter(keep);
  return requirements.length === skill.requirements.length
    ? skill
    : { ...skill, requirements, selectedRequirementsOnly: true };
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
      "bench.unknown-skill",
      `--skill ${unknownSkills.join(", ")}: not in the suite (it has: ${suite.skills.map((skill) => skill.id).join(", ")})`,
    );
  }
  const chosen = suite.skills
    .filter((skill) => skills.length === 0 || skills.includes(skill.id))
    .map((skill) =>
      narrowedSkill(skill, (requirement) =>
        selectedRequirement(selection, skill.id, requirement.id),
      ),
    );
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
      "bench.unknown-requirement",
      `--requirement ${unknownRequirements.join(", ")}: no selected skill has it (use an id such as batch1, or skill/batch1)`,
    );
  }
  return { ...suite, skills: chosen.filter((skill) => skill.requirements.length > 0) };
}

export interface LoadSuiteOptions extends ValidateSuiteOptions {
  /**
   * Return the runnable part of a suite with errors instead of throwing (the excluded parts are
   * in the result's `excluded`); it still throws when nothing can run, unless `keepEmpty`.
   */
  readonly partial?: boolean;
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
    "bench.suite-invalid",
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
    "bench.suite-invalid",
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

/** The suite folder's own name, for messages. */
export function suiteDisplayName(directory: string): string {
  return basename(resolve(directory));
}
