/**
 * The Harbor importer. One file of ~560 lines: it reads one task layout top to bottom
 * (instruction, task.toml, environment, tests, solution, the arms' skills) and each step feeds
 * the next; what task.toml says field by field is in harbor-config.ts.
 */
import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { definedFields } from "../../core/defined.js";
import { InputError } from "../../core/errors.js";
import { DEFAULT_BASE_IMAGE, externalImages } from "../../env/index.js";
import { validateSkillFolder } from "../../skill/index.js";
import { folderEntries, folderNames, naturalCompare } from "../suite/files.js";
import {
  AGENT_SKILLS_FOLDER,
  REQUIREMENT_FILE,
  REQUIREMENTS_FOLDER,
  SKILL_FILE,
  SKILLS_FOLDER,
  SOLUTION_SCRIPT_ENTRY,
  SOLUTION_SCRIPT_FOLDER,
  SUITE_FILE,
  VERIFIER_FILE,
  VERIFIER_FOLDER,
} from "../suite/layout.js";
import type { Configuration, SkillFile, SuiteFile, VerifierFile } from "../suite/schema.js";
import { SUITE_FORMAT } from "../suite/schema.js";
import {
  type ImportProblem,
  type ImportResult,
  memoryToMegabytes,
  pathKind,
  positiveNumber,
  SuiteStaging,
  toId,
} from "./common.js";
import { environmentPrefix, readHarborSettings, table } from "./harbor-config.js";
import { parseToml, TomlSyntaxError, type TomlTable } from "./toml.js";

/**
 * Importer of Harbor task folders (Harbor, Terminal-Bench 2, SkillsBench):
 *
 *   instruction.md        what the agent is asked        → requirement.md (free-form)
 *   task.toml             timeouts, resources, metadata  → skill.yaml (agentLimits, environment)
 *   environment/          Dockerfile + build context     → skills/<task>/environment/
 *   environment/skills/*  skills the task ships          → skills/<task>/agent-skills/*
 *   tests/                test.sh (+ test_outputs.py)    → verifier/ (placed at /tests)
 *   solution/solve.sh     reference solution             → solution-script/
 *
 * Each task becomes one suite skill with one requirement (both named after the task folder),
 * because each task has its own environment. Harbor runs `tests/test.sh` from the container's
 * working directory with the tests at `/tests`; it writes a reward to
 * `/logs/verifier/reward.txt`, and its pytest output (`-rA`) gives the per-check pass ratio.
 */

export interface HarborImportOptions {
  readonly out: string;
  /**
   * Agent Skills folders installed together in the with-skill arm of every task that ships no
   * skills of its own (a treatment of several skills).
   */
  readonly skills?: readonly string[];
  /** Further arms: name → Agent Skills folders installed together in that arm, for every task. */
  readonly variants?: Readonly<Record<string, readonly string[]>>;
  /**
   * Skills that should not help (distractors): added to the with-skill arm and every variant,
   * and run alone as the `distractors` arm, the fair baseline of a treatment with distractors.
   */
  readonly distractors?: readonly string[];
}

/** The arm that runs the distractor skills alone. */
export const DISTRACTOR_ARM = "distractors";

const TESTS_MOUNT = "/tests";
/** Skills of the arms other than with-skill (variants, distractors), outside agent-skills/. */
const VARIANT_SKILLS_FOLDER = "arm-skills";
const REWARD_FILE = "/logs/verifier/reward.txt";
const DEFAULT_AGENT_TIMEOUT_SECONDS = 1800;

function isTaskFolderKind(entries: readonly string[]): boolean {
  return entries.includes("task.toml") || entries.includes("instruction.md");
}

/** A task folder, or a folder of task folders (e.g. a dataset's `tasks/`). */
async function expandTaskFolders(
  paths: readonly string[],
  problems: ImportProblem[],
): Promise<string[]> {
  const tasks: string[] = [];
  for (const given of paths) {
    const path = resolve(given);
    if ((await pathKind(path)) !== "directory") {
      problems.push({ path: given, message: "not a folder; not imported" });
      continue;
    }
    const entries = await folderNames(path);
    if (isTaskFolderKind(entries)) {
      tasks.push(path);
      continue;
    }
    if (entries.includes("task.yaml")) {
      problems.push({
        path: given,
        message:
          "a Terminal-Bench 1 task (task.yaml); convert it to the Harbor format first (`harbor tasks migrate`)",
      });
      continue;
    }
    const children: string[] = [];
    for (const name of await folderNames(path)) {
      const child = join(path, name);
      if ((await pathKind(child)) === "directory" && isTaskFolderKind(await folderNames(child))) {
        children.push(child);
      }
    }
    if (children.length === 0) {
      problems.push({
        path: given,
        message:
          "not a Harbor task folder (no task.toml or instruction.md, here or one level down)",
      });
    }
    tasks.push(...children);
  }
  return tasks;
}

async function listFiles(root: string, prefix = ""): Promise<string[]> {
  const entries = await folderEntries(join(root, prefix));
  const files: string[] = [];
  for (const entry of entries.sort((left, right) => naturalCompare(left.name, right.name))) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) files.push(...(await listFiles(root, path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

/**
 * Lines of a Dockerfile that copy the task's skills into the image would expose them to the
 * without-skill arm too; they are commented out, since the suite installs skills per arm.
 */
export function withoutSkillCopies(dockerfile: string): { text: string; removed: string[] } {
  const removed: string[] = [];
  const text = dockerfile
    .split("\n")
    .map((line) => {
      if (/^\s*(COPY|ADD)\b.*(^|[\s/])skills\b/i.test(line)) {
        removed.push(line.trim());
        return `# skillsmith: skills are installed in the with-skill arm only, not baked into the image: ${line.trim()}`;
      }
      return line;
    })
    .join("\n");
  return { text, removed };
}

/** The last absolute `WORKDIR` of a Dockerfile: where the agent and `test.sh` run. */
export function dockerfileWorkdir(dockerfile: string): string | undefined {
  let workdir: string | undefined;
  for (const line of dockerfile.split("\n")) {
    const match = /^\s*WORKDIR\s+(\S+)/i.exec(line);
    if (match?.[1]?.startsWith("/")) workdir = match[1];
  }
  return workdir;
}

async function validSkill(path: string): Promise<string | undefined> {
  const result = await validateSkillFolder(path);
  if (result.valid) return undefined;
  return result.errors
    .slice(0, 3)
    .map((finding) => finding.message)
    .join("; ");
}

/** Skill folders given on the command line, validated once; a bad one stops the import. */
interface SharedSkills {
  readonly skills: readonly string[];
  readonly variants: Readonly<Record<string, readonly string[]>>;
  readonly distractors: readonly string[];
}

async function validatedFolders(folders: readonly string[], flag: string): Promise<string[]> {
  const resolved: string[] = [];
  for (const folder of folders) {
    const path = resolve(folder);
    const invalid = await validSkill(path);
    if (invalid !== undefined) {
      throw new InputError(
        "skill.skill-invalid",
        `${flag} ${folder} is not a valid Agent Skill: ${invalid}`,
        { file: folder },
      );
    }
    resolved.push(path);
  }
  const names = resolved.map((path) => basename(path));
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice !== undefined) {
    throw new InputError(
      "bench.skill-duplicate",
      `${flag}: two skill folders are both named "${twice}"; an arm installs each skill under its folder name`,
      { file: twice },
    );
  }
  return resolved;
}

async function sharedSkills(options: HarborImportOptions): Promise<SharedSkills> {
  const variants: Record<string, string[]> = {};
  for (const [name, folders] of Object.entries(options.variants ?? {})) {
    if (name === DISTRACTOR_ARM && (options.distractors ?? []).length > 0) {
      throw new InputError(
        "bench.variant-invalid",
        `--variant ${name}: the name is taken by the arm of the distractor skills alone`,
        { file: name },
      );
    }
    variants[name] = await validatedFolders(folders, `--variant ${name}=`);
  }
  return {
    skills: await validatedFolders(options.skills ?? [], "--skill"),
    variants,
    distractors: await validatedFolders(options.distractors ?? [], "--distractor"),
  };
}

/** Everything one task import adds to the suite, and what the suite file needs from it. */
interface ImportContext {
  readonly staging: SuiteStaging;
  readonly shared: SharedSkills;
  readonly usedIds: Set<string>;
  readonly problems: ImportProblem[];
  readonly notes: string[];
  /** `FROM` images of the imported Dockerfiles and `docker_image`s, for the next-step hint. */
  readonly images: Set<string>;
  /** Tasks imported without any skill (bench check-tasks runs them; bench run cannot). */
  readonly skillless: string[];
}

interface ImportedTask {
  readonly agentTimeoutSeconds?: number;
  readonly hasSolution: boolean;
}

export async function importHarbor(
  taskDirectories: readonly string[],
  options: HarborImportOptions,
): Promise<ImportResult> {
  const problems: ImportProblem[] = [];
  const notes: string[] = [];
  const tasks = await expandTaskFolders(taskDirectories, problems);
  if (tasks.length === 0) {
    throw new InputError(
      "bench.not-harbor",
      `no Harbor task folder among ${taskDirectories.join(", ")} (expected instruction.md, task.toml, environment/, tests/, solution/)`,
      { file: taskDirectories[0] ?? "" },
    );
  }
  const shared = await sharedSkills(options);
  const staging = await SuiteStaging.open(options.out);
  const context: ImportContext = {
    staging,
    shared,
    usedIds: new Set(),
    problems,
    notes,
    images: new Set(),
    skillless: [],
  };
  let imported = 0;
  let agentTimeout = 0;
  let anySolution = false;
  try {
    for (const task of tasks) {
      const result = await importTask(task, context);
      if (result === undefined) continue;
      imported++;
      agentTimeout = Math.max(agentTimeout, result.agentTimeoutSeconds ?? 0);
      anySolution ||= result.hasSolution;
    }
    if (imported === 0) {
      await staging.discard();
      return { skills: 0, requirements: 0, problems, notes };
    }
    const timeoutSeconds = agentTimeout > 0 ? agentTimeout : DEFAULT_AGENT_TIMEOUT_SECONDS;
    const configurations: Configuration[] = [
      { id: "claude-code", agent: "claude-code", limits: { timeoutSeconds } },
      ...(anySolution
        ? [{ id: "oracle", agent: "oracle" as const, limits: { timeoutSeconds } }]
        : []),
    ];
    const suite: SuiteFile = {
      format: SUITE_FORMAT,
      name: basename(resolve(options.out)),
      description: "Imported from Harbor task folders by skillsmith bench import harbor.",
      configurations,
    };
    await staging.writeYaml(
      SUITE_FILE,
      suite,
      "Suite imported from Harbor tasks. Add configurations (agent x model) to compare.",
    );
    const out = await staging.commit();
    return {
      out,
      skills: imported,
      requirements: imported,
      problems,
      notes,
      next: nextSteps(out, context, anySolution),
    };
  } catch (error) {
    await staging.discard();
    throw error;
  }
}

/**
 * Commands that work on this suite as imported: the task controls first (with the base-image
 * mapping every `FROM` needs when it is not local: no registry is used), then a run.
 */
function nextSteps(out: string, context: ImportContext, anySolution: boolean): string[] {
  const mapping = [...context.images]
    .filter((image) => image !== DEFAULT_BASE_IMAGE)
    .sort()
    .map((image) => ` --base-image ${image}=${DEFAULT_BASE_IMAGE}`)
    .join("");
  return [
    `next: skillsmith bench check-tasks ${out}${mapping}   (${anySolution ? "solve.sh must reach reward 1 and " : ""}the untouched working directory must score below 1; drop a --base-image whose image is present locally)`,
    context.skillless.length > 0
      ? `then: re-import with --skill <folder> (repeatable) for the ${context.skillless.length} task(s) without a skill (${context.skillless.slice(0, 3).join(", ")}${context.skillless.length > 3 ? ", …" : ""}); bench run compares arms of skills`
      : `then: skillsmith bench run ${out} --sandbox container${mapping}`,
  ];
}

/** Why a task folder cannot be imported at all (empty when it can), and its parsed task.toml. */
async function readTask(
  task: string,
  entries: readonly string[],
): Promise<{ reasons: string[]; config: TomlTable; image?: string; hasDockerfile: boolean }> {
  const reasons: string[] = [];
  if (!entries.includes("instruction.md")) reasons.push("no instruction.md");
  let config: TomlTable = {};
  if (!entries.includes("task.toml")) {
    reasons.push("no task.toml");
  } else {
    try {
      config = parseToml(await readFile(join(task, "task.toml"), "utf8"));
    } catch (error) {
      if (!(error instanceof TomlSyntaxError)) throw error;
      reasons.push(`task.toml ${error.message}`);
    }
  }
  const environmentConfig = table(config.environment);
  const hasDockerfile = (await pathKind(join(task, "environment", "Dockerfile"))) === "file";
  const image =
    typeof environmentConfig.docker_image === "string" && environmentConfig.docker_image !== ""
      ? environmentConfig.docker_image
      : undefined;
  if (!hasDockerfile && image === undefined) {
    reasons.push("no environment/Dockerfile and no environment.docker_image in task.toml");
  }
  return { reasons, config, hasDockerfile, ...(image === undefined ? {} : { image }) };
}

/**
 * The task's skills for the with-skill arm (its own, else the shared ones), each variant's, and
 * the distractors' arm; returns the skill.yaml fields that name them.
 */
async function installSkills(
  task: string,
  skillRoot: string,
  context: ImportContext,
): Promise<Pick<SkillFile, "skills" | "variants"> & { count: number }> {
  const { staging, shared } = context;
  const withArm: string[] = [];
  const shippedRoot = join(task, "environment", "skills");
  for (const name of await folderNames(shippedRoot)) {
    const folder = join(shippedRoot, name);
    if ((await pathKind(join(folder, "SKILL.md"))) !== "file") continue;
    const invalid = await validSkill(folder);
    if (invalid !== undefined) {
      context.problems.push({
        path: join(task, "environment", "skills", name),
        message: `skill not imported: ${invalid}`,
      });
      continue;
    }
    await staging.copy(folder, join(skillRoot, AGENT_SKILLS_FOLDER, name));
    withArm.push(`${AGENT_SKILLS_FOLDER}/${name}`);
  }
  if (withArm.length === 0) {
    for (const folder of shared.skills) {
      await staging.copy(folder, join(skillRoot, AGENT_SKILLS_FOLDER, basename(folder)));
      withArm.push(`${AGENT_SKILLS_FOLDER}/${basename(folder)}`);
    }
  }
  // Variant and distractor skills live outside agent-skills/, which is the with-skill arm.
  const copyArm = async (kind: string, folders: readonly string[]): Promise<string[]> => {
    const relative: string[] = [];
    for (const folder of folders) {
      const path = `${VARIANT_SKILLS_FOLDER}/${kind}/${basename(folder)}`;
      await staging.copy(folder, join(skillRoot, path));
      relative.push(path);
    }
    return relative;
  };
  const distractors = await copyArm(DISTRACTOR_ARM, shared.distractors);
  const variants: Record<string, string[]> = {};
  for (const [name, folders] of Object.entries(shared.variants)) {
    variants[name] = [...(await copyArm(name, folders)), ...distractors];
  }
  if (distractors.length > 0) variants[DISTRACTOR_ARM] = distractors;
  const count = withArm.length + Object.keys(variants).length;
  return {
    count,
    // Named explicitly only when distractors join the with arm: otherwise agent-skills/* is it.
    ...(distractors.length > 0 && withArm.length > 0
      ? { skills: [...withArm, ...distractors] }
      : {}),
    ...(Object.keys(variants).length > 0 ? { variants } : {}),
  };
}

/** One task folder into the suite; undefined when it could not be imported (see problems). */
async function importTask(task: string, context: ImportContext): Promise<ImportedTask | undefined> {
  const { staging, problems, notes } = context;
  const shown = task;
  const id = toId(basename(task));
  if (context.usedIds.has(id)) {
    problems.push({
      path: shown,
      message: `another task is already imported as "${id}"; not imported`,
    });
    return undefined;
  }
  const entries = await folderNames(task);
  const { reasons, config, image, hasDockerfile } = await readTask(task, entries);
  if (reasons.length > 0) {
    problems.push({ path: shown, message: `task not imported: ${reasons.join("; ")}` });
    return undefined;
  }
  context.usedIds.add(id);
  const settings = readHarborSettings(config);
  for (const line of settings.ignored) notes.push(`${shown}/task.toml: ${line}`);
  const skillRoot = join(SKILLS_FOLDER, id);
  const requirementRoot = join(skillRoot, REQUIREMENTS_FOLDER, id);

  const arms = await installSkills(task, skillRoot, context);
  if (image !== undefined) context.images.add(image);
  if (arms.count === 0) {
    context.skillless.push(id);
    problems.push({
      path: shown,
      message: `no skill: the task ships no valid environment/skills/*/SKILL.md and no --skill was given; imported (bench check-tasks runs it), but bench run needs a skill: re-import with --skill <folder>, or put one in ${skillRoot}/${AGENT_SKILLS_FOLDER}/`,
    });
  }

  // Environment: the build context without the skills folder; skill copies commented out.
  let workdir: string | undefined;
  if (hasDockerfile) {
    for (const name of await folderNames(join(task, "environment"))) {
      if (name === "skills" || name === "Dockerfile") continue;
      await staging.copy(join(task, "environment", name), join(skillRoot, "environment", name));
    }
    const original = await readFile(join(task, "environment", "Dockerfile"), "utf8");
    for (const from of externalImages(original)) context.images.add(from);
    const { text, removed } = withoutSkillCopies(original);
    await staging.writeText(join(skillRoot, "environment", "Dockerfile"), text);
    for (const line of removed) {
      notes.push(
        `${shown}/environment/Dockerfile: commented out "${line}" (skills are installed per arm)`,
      );
    }
    workdir = dockerfileWorkdir(original);
  }

  const instruction = await readFile(join(task, "instruction.md"), "utf8");
  await staging.writeText(join(requirementRoot, REQUIREMENT_FILE), instruction);
  await writeVerifier(task, requirementRoot, config, settings, workdir, context);
  const hasSolution = await copySolution(task, entries, requirementRoot, context);

  const agentTimeoutSeconds = positiveNumber(table(config.agent).timeout_sec);
  await staging.writeYaml(
    join(skillRoot, SKILL_FILE),
    skillFileOf(
      task,
      config,
      settings,
      { image, hasDockerfile, workdir, agentTimeoutSeconds },
      arms,
    ),
    `Harbor task ${basename(task)}.`,
  );
  return {
    hasSolution,
    ...(agentTimeoutSeconds === undefined ? {} : { agentTimeoutSeconds }),
  };
}

async function writeVerifier(
  task: string,
  requirementRoot: string,
  config: TomlTable,
  settings: ReturnType<typeof readHarborSettings>,
  workdir: string | undefined,
  context: ImportContext,
): Promise<void> {
  const testFiles = await listFiles(join(task, "tests"));
  if (!testFiles.includes("test.sh")) {
    context.problems.push({
      path: join(task, "tests", "test.sh"),
      message: `no verifier: tests/test.sh is missing; task imported without it (validate-suite reports it until ${requirementRoot}/${VERIFIER_FOLDER}/test.sh exists)`,
    });
  } else {
    await context.staging.copy(join(task, "tests"), join(requirementRoot, VERIFIER_FOLDER));
  }
  const verifierTimeout = positiveNumber(table(config.verifier).timeout_sec);
  const verifier: VerifierFile = {
    command: `${environmentPrefix(settings.verifierEnv)}bash ${TESTS_MOUNT}/test.sh`,
    files: testFiles.includes("test.sh") ? testFiles : ["test.sh"],
    mountPath: TESTS_MOUNT,
    ...definedFields({ cwd: workdir, timeoutSeconds: verifierTimeout }),
    rewardFile: REWARD_FILE,
    scoring: "reward",
    ...(settings.verifierUser === undefined ? {} : { user: settings.verifierUser }),
    source: { benchmark: "harbor", path: join(task, "tests") },
  };
  await context.staging.writeYaml(
    join(requirementRoot, VERIFIER_FILE),
    verifier,
    `Verifier of Harbor task ${basename(task)}: tests/ is placed at ${TESTS_MOUNT} and test.sh runs after the agent.`,
  );
}

async function copySolution(
  task: string,
  entries: readonly string[],
  requirementRoot: string,
  context: ImportContext,
): Promise<boolean> {
  if (!entries.includes("solution")) return false;
  if ((await pathKind(join(task, "solution", SOLUTION_SCRIPT_ENTRY))) !== "file") {
    context.problems.push({
      path: join(task, "solution"),
      message: `reference solution not imported: no ${SOLUTION_SCRIPT_ENTRY}`,
    });
    return false;
  }
  await context.staging.copy(join(task, "solution"), join(requirementRoot, SOLUTION_SCRIPT_FOLDER));
  return true;
}

function skillFileOf(
  task: string,
  config: TomlTable,
  settings: ReturnType<typeof readHarborSettings>,
  found: {
    image: string | undefined;
    hasDockerfile: boolean;
    workdir: string | undefined;
    agentTimeoutSeconds: number | undefined;
  },
  arms: Pick<SkillFile, "skills" | "variants">,
): SkillFile {
  const environmentConfig = table(config.environment);
  const { image, hasDockerfile, workdir, agentTimeoutSeconds } = found;
  const cpus = positiveNumber(environmentConfig.cpus);
  const memoryMb =
    positiveNumber(environmentConfig.memory_mb) ?? memoryToMegabytes(environmentConfig.memory);
  const allowInternet =
    typeof environmentConfig.allow_internet === "boolean"
      ? environmentConfig.allow_internet
      : undefined;
  const buildTimeoutSeconds = positiveNumber(environmentConfig.build_timeout_sec);
  const limits = {
    ...(cpus === undefined ? {} : { cpus }),
    ...(memoryMb === undefined ? {} : { memoryMb: Math.round(memoryMb) }),
  };
  const metadata = table(config.metadata);
  return {
    ...definedFields({ skills: arms.skills, variants: arms.variants }),
    environment: {
      ...(image === undefined ? {} : { image }),
      ...(hasDockerfile ? { dockerfile: "environment/Dockerfile" } : {}),
      ...definedFields({ workdir, allowInternet, buildTimeoutSeconds }),
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      ...(settings.agentUser === undefined ? {} : { agentUser: settings.agentUser }),
    },
    ...(agentTimeoutSeconds === undefined
      ? {}
      : { agentLimits: { timeoutSeconds: agentTimeoutSeconds } }),
    source: {
      benchmark: "harbor",
      task,
      ...definedFields({ name: settings.name, schemaVersion: settings.schemaVersion }),
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      ...(settings.ignored.length > 0 ? { ignoredFields: settings.ignored } : {}),
    },
  };
}
