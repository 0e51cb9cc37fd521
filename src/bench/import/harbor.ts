/**
 * The Harbor importer. One file although at 400 lines: it reads one task layout top to bottom
 * (instruction, task.toml, environment, tests, solution) and each step feeds the next.
 */
import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { InputError } from "../../core/errors.js";
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
  /** An Agent Skills folder used for every task that ships no skills of its own. */
  readonly skill?: string;
}

const TESTS_MOUNT = "/tests";
const REWARD_FILE = "/logs/verifier/reward.txt";
const DEFAULT_AGENT_TIMEOUT_SECONDS = 1800;

type Table = Record<string, unknown>;

function table(value: unknown): Table {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Table)
    : {};
}

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

export async function importHarbor(
  taskDirectories: readonly string[],
  options: HarborImportOptions,
): Promise<ImportResult> {
  const problems: ImportProblem[] = [];
  const notes: string[] = [];
  const tasks = await expandTaskFolders(taskDirectories, problems);
  if (tasks.length === 0) {
    throw new InputError(
      "not-harbor",
      `no Harbor task folder among ${taskDirectories.join(", ")} (expected instruction.md, task.toml, environment/, tests/, solution/)`,
      { file: taskDirectories[0] ?? "" },
    );
  }
  let sharedSkill: string | undefined;
  if (options.skill !== undefined) {
    sharedSkill = resolve(options.skill);
    const invalid = await validSkill(sharedSkill);
    if (invalid !== undefined) {
      throw new InputError(
        "skill-invalid",
        `--skill ${options.skill} is not a valid Agent Skill: ${invalid}`,
        {
          file: options.skill,
        },
      );
    }
  }

  const staging = await SuiteStaging.open(options.out);
  const usedIds = new Set<string>();
  let importedSkills = 0;
  let importedRequirements = 0;
  let agentTimeout = 0;
  let anySolution = false;
  try {
    for (const task of tasks) {
      const shown = task;
      const id = toId(basename(task));
      if (usedIds.has(id)) {
        problems.push({
          path: shown,
          message: `another task is already imported as "${id}"; not imported`,
        });
        continue;
      }
      const entries = await folderNames(task);
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
      const dockerfilePath = join(task, "environment", "Dockerfile");
      const hasDockerfile = (await pathKind(dockerfilePath)) === "file";
      const image =
        typeof environmentConfig.docker_image === "string" && environmentConfig.docker_image !== ""
          ? environmentConfig.docker_image
          : undefined;
      if (!hasDockerfile && image === undefined) {
        reasons.push("no environment/Dockerfile and no environment.docker_image in task.toml");
      }
      if (reasons.length > 0) {
        problems.push({ path: shown, message: `task not imported: ${reasons.join("; ")}` });
        continue;
      }
      usedIds.add(id);
      const skillRoot = join(SKILLS_FOLDER, id);
      const requirementRoot = join(skillRoot, REQUIREMENTS_FOLDER, id);

      // Skills the task ships, installed only in the with-skill arm.
      const skillNames: string[] = [];
      const shippedRoot = join(task, "environment", "skills");
      for (const name of await folderNames(shippedRoot)) {
        const folder = join(shippedRoot, name);
        if ((await pathKind(join(folder, "SKILL.md"))) !== "file") continue;
        const invalid = await validSkill(folder);
        if (invalid !== undefined) {
          problems.push({
            path: join(shown, "environment", "skills", name),
            message: `skill not imported: ${invalid}`,
          });
          continue;
        }
        await staging.copy(folder, join(skillRoot, AGENT_SKILLS_FOLDER, name));
        skillNames.push(name);
      }
      if (skillNames.length === 0 && sharedSkill !== undefined) {
        await staging.copy(
          sharedSkill,
          join(skillRoot, AGENT_SKILLS_FOLDER, basename(sharedSkill)),
        );
        skillNames.push(basename(sharedSkill));
      }
      if (skillNames.length === 0) {
        problems.push({
          path: shown,
          message: `no skill: the task ships no valid environment/skills/*/SKILL.md and no --skill was given; imported, but validate-suite reports it until ${skillRoot}/${AGENT_SKILLS_FOLDER}/ holds a skill`,
        });
      }

      // Environment: the build context without the skills folder; skill copies commented out.
      let workdir: string | undefined;
      if (hasDockerfile) {
        for (const name of await folderNames(join(task, "environment"))) {
          if (name === "skills" || name === "Dockerfile") continue;
          await staging.copy(join(task, "environment", name), join(skillRoot, "environment", name));
        }
        const original = await readFile(dockerfilePath, "utf8");
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

      const verifierConfig = table(config.verifier);
      const testFiles = await listFiles(join(task, "tests"));
      if (!testFiles.includes("test.sh")) {
        problems.push({
          path: join(shown, "tests", "test.sh"),
          message: `no verifier: tests/test.sh is missing; task imported without it (validate-suite reports it until ${requirementRoot}/${VERIFIER_FOLDER}/test.sh exists)`,
        });
      } else {
        await staging.copy(join(task, "tests"), join(requirementRoot, VERIFIER_FOLDER));
      }
      const verifierTimeout = positiveNumber(verifierConfig.timeout_sec);
      const verifier: VerifierFile = {
        command: `bash ${TESTS_MOUNT}/test.sh`,
        files: testFiles.includes("test.sh") ? testFiles : ["test.sh"],
        mountPath: TESTS_MOUNT,
        ...(workdir === undefined ? {} : { cwd: workdir }),
        ...(verifierTimeout === undefined ? {} : { timeoutSeconds: verifierTimeout }),
        rewardFile: REWARD_FILE,
        scoring: "reward",
        source: { benchmark: "harbor", path: join(task, "tests") },
      };
      await staging.writeYaml(
        join(requirementRoot, VERIFIER_FILE),
        verifier,
        `Verifier of Harbor task ${basename(task)}: tests/ is placed at ${TESTS_MOUNT} and test.sh runs after the agent.`,
      );

      if (entries.includes("solution")) {
        if ((await pathKind(join(task, "solution", SOLUTION_SCRIPT_ENTRY))) === "file") {
          await staging.copy(join(task, "solution"), join(requirementRoot, SOLUTION_SCRIPT_FOLDER));
          anySolution = true;
        } else {
          problems.push({
            path: join(shown, "solution"),
            message: `reference solution not imported: no ${SOLUTION_SCRIPT_ENTRY}`,
          });
        }
      }

      const agentConfig = table(config.agent);
      const agentTimeoutSeconds = positiveNumber(agentConfig.timeout_sec);
      agentTimeout = Math.max(agentTimeout, agentTimeoutSeconds ?? 0);
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
      const skillFile: SkillFile = {
        environment: {
          ...(image === undefined ? {} : { image }),
          ...(hasDockerfile ? { dockerfile: "environment/Dockerfile" } : {}),
          ...(workdir === undefined ? {} : { workdir }),
          ...(allowInternet === undefined ? {} : { allowInternet }),
          ...(buildTimeoutSeconds === undefined ? {} : { buildTimeoutSeconds }),
          ...(Object.keys(limits).length > 0 ? { limits } : {}),
        },
        ...(agentTimeoutSeconds === undefined
          ? {}
          : { agentLimits: { timeoutSeconds: agentTimeoutSeconds } }),
        source: {
          benchmark: "harbor",
          task,
          ...(Object.keys(table(config.metadata)).length > 0
            ? { metadata: table(config.metadata) }
            : {}),
        },
      };
      await staging.writeYaml(
        join(skillRoot, SKILL_FILE),
        skillFile,
        `Harbor task ${basename(task)}.`,
      );
      importedSkills++;
      importedRequirements++;
    }

    if (importedSkills === 0) {
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
    return { out, skills: importedSkills, requirements: importedRequirements, problems, notes };
  } catch (error) {
    await staging.discard();
    throw error;
  }
}
