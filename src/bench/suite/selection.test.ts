import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputError } from "../../core/errors.js";
import { CommitChecker } from "./commits.js";
import { everyRequirement } from "./inspect.js";
import {
  loadSuite,
  loadSuiteSelection,
  narrowedSkill,
  selectFromSuite,
  validateSuite,
} from "./load.js";
import type { SuiteSkill } from "./types.js";

let root: string;
let suite: string;
let repository: string;
let commit: string;

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  }).trim();
}

async function skill(id: string, setup: string | undefined, requirements: string[]) {
  const folder = join(suite, "skills", id);
  await write(
    join(folder, "skill.yaml"),
    `repository:\n  path: ${repository}\n  commit: ${commit}\n${setup === undefined ? "" : `  setup: ${setup}\n`}`,
  );
  await write(
    join(folder, "agent-skills", id, "SKILL.md"),
    `---\nname: ${id}\ndescription: A skill for tests. Use when testing suites.\n---\n\n# ${id}\n`,
  );
  for (const requirement of requirements) {
    const requirementFolder = join(folder, "requirements", requirement);
    await write(
      join(requirementFolder, "requirement.md"),
      "## Requirement\n\nDo it.\n\n## Acceptance Criteria\n\n- done\n",
    );
    await write(
      join(requirementFolder, "verifier.yaml"),
      "command: sh check.sh\nfiles: [check.sh]\n",
    );
    await write(join(requirementFolder, "verifier", "check.sh"), "true\n");
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-selection-"));
  repository = join(root, "repo");
  await write(join(repository, "README.md"), "x\n");
  git(repository, "init", "-q", "-b", "main");
  git(repository, "add", "-A");
  git(repository, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  commit = git(repository, "rev-parse", "HEAD");
  suite = join(root, "suite");
  await write(
    join(suite, "suite.yaml"),
    "format: skillsmith-suite/1\nname: s\nconfigurations:\n  - id: c\n    agent: none\n    limits: { timeoutSeconds: 10 }\n",
  );
  await skill("detected", undefined, ["r1", "r2"]);
  await skill("nothing", "none", ["r1"]);
  await skill("empty", "[]", ["r1"]);
  await skill("explicit", '["make deps"]', ["r1"]);
  await skill("spelled", "detect", ["r1"]);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("setup in skill.yaml", () => {
  it("maps none, an empty list, detect, absent and a list to what is prepared", async () => {
    const loaded = await loadSuite(suite);
    const choice = (id: string) =>
      loaded.skills.find((skill) => skill.id === id)?.repository?.setupChoice;
    expect(choice("detected")).toEqual({ kind: "detect" });
    expect(choice("spelled")).toEqual({ kind: "detect" });
    expect(choice("nothing")).toEqual({ kind: "none" });
    expect(choice("empty")).toEqual({ kind: "none" });
    expect(choice("explicit")).toEqual({ kind: "commands", commands: ["make deps"] });
  });
});

describe("selection", () => {
  it("keeps only the selected skills and requirements", async () => {
    const loaded = await loadSuite(suite, {
      skills: ["detected", "nothing"],
      requirements: ["r2"],
    });
    expect(loaded.skills.map((skill) => [skill.id, skill.requirements.map((r) => r.id)])).toEqual([
      ["detected", ["r2"]],
    ]);
    const scoped = await loadSuite(suite, { requirements: ["nothing/r1"] });
    expect(scoped.skills.map((skill) => skill.id)).toEqual(["nothing"]);
    expect(selectFromSuite(await loadSuite(suite), { requirements: ["r2"] }).skills).toHaveLength(
      1,
    );
  });

  it("keeps every requirement within reach of a selection, for the skill's environment", async () => {
    // "detected" has r1 and r2 (written above): a selection of r2 is marked as one, whether made
    // while loading or from a loaded suite, and everyRequirement reads r1 back; a skill left
    // whole is not marked and gives its own list.
    const ids = async (skill: SuiteSkill | undefined) =>
      skill === undefined
        ? []
        : (await everyRequirement(skill)).map((requirement) => requirement.id);
    const loading = await loadSuite(suite, { skills: ["detected"], requirements: ["r2"] });
    expect(loading.skills[0]?.selectedRequirementsOnly).toBe(true);
    expect(await ids(loading.skills[0])).toEqual(["r1", "r2"]);
    const whole = await loadSuite(suite, { skills: ["detected"] });
    const selected = selectFromSuite(whole, { requirements: ["detected/r2"] }).skills[0];
    expect(selected?.requirements.map((requirement) => requirement.id)).toEqual(["r2"]);
    expect(await ids(selected)).toEqual(["r1", "r2"]);
    expect(whole.skills[0]?.selectedRequirementsOnly).toBeUndefined();
    const kept = narrowedSkill(whole.skills[0] as SuiteSkill, () => true);
    expect(kept).toBe(whole.skills[0]);
  });

  it("names an id that selects nothing", async () => {
    const validation = await validateSuite(suite, { skills: ["missing"], requirements: ["r9"] });
    expect(validation.problems.map((problem) => [problem.field, problem.message])).toEqual([
      ["skill", expect.stringContaining('the suite has no skill "missing"')],
      ["requirement", expect.stringContaining('no selected skill has a requirement "r9"')],
    ]);
    await expect(
      loadSuiteSelection(suite, { skills: ["missing"], partial: true }),
    ).rejects.toBeInstanceOf(InputError);
    expect(() =>
      selectFromSuite(
        { root: suite, format: "", name: "", configurations: [], skills: [], warnings: [] },
        { skills: ["x"] },
      ),
    ).toThrow(/--skill x/);
  });
});

describe("the runnable part of a suite with errors", () => {
  it("leaves out a requirement with a missing verifier file and a skill with a bad skill.yaml", async () => {
    const broken = join(root, "broken");
    await rm(broken, { recursive: true, force: true });
    execFileSync("cp", ["-a", suite, broken]);
    await rm(join(broken, "skills", "detected", "requirements", "r2", "verifier", "check.sh"));
    await write(join(broken, "skills", "explicit", "skill.yaml"), "repository: [not, a, map]\n");
    const validation = await validateSuite(broken);
    expect(validation.valid).toBe(false);
    expect(validation.suite).toBeUndefined();
    expect(validation.excluded.map((part) => [part.skill, part.requirement])).toEqual([
      ["detected", "r2"],
      ["explicit", undefined],
    ]);
    const loaded = await loadSuiteSelection(broken, { partial: true });
    expect(loaded.suite.skills.map((skill) => skill.id)).toEqual([
      "detected",
      "empty",
      "nothing",
      "spelled",
    ]);
    expect(loaded.suite.skills[0]?.requirements.map((requirement) => requirement.id)).toEqual([
      "r1",
    ]);
    // Without `partial` the same suite does not load.
    await expect(loadSuite(broken)).rejects.toBeInstanceOf(InputError);

    // A left-out skill counts only the selected requirements: `explicit` has r1 only, so
    // selecting r2 leaves out detected/r2 alone, and selecting r1 leaves out explicit's r1.
    const onlyR2 = await validateSuite(broken, { requirements: ["r2"] });
    expect(onlyR2.excluded.map((part) => [part.skill, part.requirement])).toEqual([
      ["detected", "r2"],
    ]);
    const onlyR1 = await validateSuite(broken, { requirements: ["explicit/r1"] });
    expect(onlyR1.excluded.map((part) => [part.skill, part.requirements])).toEqual([
      ["explicit", ["r1"]],
    ]);
  });
});

describe("CommitChecker", () => {
  it("finds pinned commits in local repositories and bundles, and says when one is missing", async () => {
    const bundle = join(root, "repo.bundle");
    git(repository, "bundle", "create", bundle, "main");
    const checker = new CommitChecker();
    try {
      const base = {
        name: "repo",
        setup: [],
        setupChoice: { kind: "detect" as const },
        mountPath: "/workspace/repo",
      };
      expect(
        await checker.check({ ...base, source: { kind: "path", path: repository }, commit }),
      ).toEqual({ status: "present" });
      expect(
        await checker.check({ ...base, source: { kind: "bundle", path: bundle }, commit }),
      ).toEqual({ status: "present" });
      const missing = "0123456789abcdef0123456789abcdef01234567";
      expect(
        await checker.check({ ...base, source: { kind: "bundle", path: bundle }, commit: missing }),
      ).toEqual({
        status: "missing",
        // The message says what would fix it.
        message: `commit ${missing} does not exist in bundle ${bundle}: the pinned commit is unreachable — fix: pin a commit the repository has, or point at a copy (--repo-root, a fuller clone or bundle) that holds it`,
      });
      expect(
        (
          await checker.check({
            ...base,
            source: { kind: "url", url: "https://example.org/x.git" },
            commit,
          })
        ).status,
      ).toBe("unchecked");
    } finally {
      await checker.close();
    }
  });

  it("reports a repository that is not there once, not again as a commit it cannot find", async () => {
    const gone = join(root, "gone");
    await rm(gone, { recursive: true, force: true });
    execFileSync("cp", ["-a", suite, gone]);
    await write(
      join(gone, "skills", "nothing", "skill.yaml"),
      `repository:\n  bundle: ${join(root, "absent.bundle")}\n  commit: ${commit}\n`,
    );
    const validation = await validateSuite(gone, { skills: ["nothing"], checkCommits: true });
    expect(
      validation.problems
        .filter((problem) => problem.severity === "error")
        .map((problem) => [problem.field, problem.message]),
    ).toEqual([
      ["repository.bundle", `repository bundle ${join(root, "absent.bundle")} does not exist`],
    ]);
  });
});
