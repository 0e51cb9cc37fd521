import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { importHarbor, loadSuite, validateSuite } from "../src/bench/index.js";
import { runInProcess, writeTree } from "./support/cli.js";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-bench-harbor-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const skillMarkdown = (name: string) =>
  `---\nname: ${name}\ndescription: Explains how to write files in a container; use for file tasks.\n---\n# ${name}\n\nUse printf.\n`;

const taskToml = [
  'version = "1.0"',
  "",
  "[metadata]",
  'author_name = "Test Author"',
  'difficulty = "easy"',
  'tags = ["files"]',
  "",
  "[verifier]",
  "timeout_sec = 90.0",
  "",
  "[agent]",
  "timeout_sec = 300.0",
  "",
  "[environment]",
  "build_timeout_sec = 600.0",
  "cpus = 2",
  'memory = "4G"',
  "allow_internet = false",
  "",
].join("\n");

const dockerfile = [
  "FROM debian:bookworm-slim",
  "WORKDIR /app",
  "COPY skills /root/.claude/skills",
  "COPY data.txt /app/data.txt",
  "",
].join("\n");

/** A SkillsBench-style task: ships a skill in environment/skills and bakes it into the image. */
async function makeTask(root: string): Promise<void> {
  await writeTree(root, {
    "instruction.md": "Create `/app/hello.txt` containing `Hello, world!`.\n",
    "task.toml": taskToml,
    "environment/Dockerfile": dockerfile,
    "environment/data.txt": "data\n",
    "environment/skills/file-writing/SKILL.md": skillMarkdown("file-writing"),
    "environment/skills/file-writing/scripts/write.sh": 'printf \'%s\' "$1" > "$2"\n',
    "tests/test.sh":
      "#!/bin/bash\npytest /tests/test_outputs.py -rA && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n",
    "tests/test_outputs.py":
      "def test_hello():\n    assert open('/app/hello.txt').read().strip() == 'Hello, world!'\n",
    "solution/solve.sh": "#!/bin/bash\necho 'Hello, world!' > /app/hello.txt\n",
  });
}

const bench = (argv: string[]) => runInProcess(["bench", ...argv], { cwd: scratch, env: {} });

describe("bench import harbor", () => {
  it("maps a task folder to a skill, a requirement, a verifier and a reference solution", async () => {
    const task = join(scratch, "tasks", "hello-file");
    await makeTask(task);
    const out = join(scratch, "harbor-suite");
    const result = await bench(["import", "harbor", task, "--out", out, "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ skills: 1, requirements: 1, problems: [] });
    // The Dockerfile baked the skill into the image: both arms would see it. Reported as a note.
    expect(result.stderr).toMatch(/commented out "COPY skills \/root\/\.claude\/skills"/);

    const validation = await validateSuite(out);
    expect(validation.problems).toEqual([]);
    const suite = await loadSuite(out);
    expect(suite.configurations).toEqual([
      { id: "claude-code", agent: "claude-code", limits: { timeoutSeconds: 300 } },
      { id: "oracle", agent: "oracle", limits: { timeoutSeconds: 300 } },
    ]);
    const skill = suite.skills[0];
    expect(skill?.id).toBe("hello-file");
    expect(skill?.skillFolders).toEqual([
      join(out, "skills", "hello-file", "agent-skills", "file-writing"),
    ]);
    expect(
      existsSync(
        join(out, "skills", "hello-file", "agent-skills", "file-writing", "scripts", "write.sh"),
      ),
    ).toBe(true);
    expect(skill?.environment).toEqual({
      dockerfile: join(out, "skills", "hello-file", "environment", "Dockerfile"),
      workdir: "/app",
      allowInternet: false,
      // task.toml's build_timeout_sec = 600.0
      buildTimeoutSeconds: 600,
      limits: { cpus: 2, memoryMb: 4096 },
    });
    expect(skill?.agentLimits).toEqual({ timeoutSeconds: 300 });
    expect(skill?.repository).toBeUndefined();

    const rewritten = await readFile(
      join(out, "skills", "hello-file", "environment", "Dockerfile"),
      "utf8",
    );
    expect(rewritten).toContain("# skillsmith: skills are installed in the with-skill arm only");
    expect(rewritten).toContain("COPY data.txt /app/data.txt\n");
    expect(rewritten.split("\n").filter((line) => /^\s*COPY skills/.test(line))).toEqual([]);
    expect(existsSync(join(out, "skills", "hello-file", "environment", "skills"))).toBe(false);
    expect(existsSync(join(out, "skills", "hello-file", "environment", "data.txt"))).toBe(true);

    const requirement = skill?.requirements[0];
    expect(requirement?.id).toBe("hello-file");
    expect(requirement?.form).toBe("free");
    expect(requirement?.raw).toBe("Create `/app/hello.txt` containing `Hello, world!`.\n");
    expect(requirement?.verifier).toMatchObject({
      command: "bash /tests/test.sh",
      files: ["test.sh", "test_outputs.py"],
      mountPath: "/tests",
      cwd: "/app",
      timeoutSeconds: 90,
      rewardFile: "/logs/verifier/reward.txt",
      // Harbor's contract: the reward is the outcome, a missing one is flagged.
      scoring: "reward",
    });
    expect(requirement?.solution).toEqual({
      kind: "script",
      path: join(out, "skills", "hello-file", "requirements", "hello-file", "solution-script"),
      entry: "solve.sh",
    });
    const skillFile = parseYaml(
      await readFile(join(out, "skills", "hello-file", "skill.yaml"), "utf8"),
    );
    expect(skillFile.source.metadata).toEqual({
      author_name: "Test Author",
      difficulty: "easy",
      tags: ["files"],
    });
  });

  it("imports a folder of tasks, reports unsound ones and flags tasks without skill or tests", async () => {
    const tasks = join(scratch, "dataset");
    await makeTask(join(tasks, "good"));
    // No skill, no tests, no solution script: imported with problems.
    await writeTree(join(tasks, "bare"), {
      "instruction.md": "Do something.\n",
      "task.toml": '[environment]\ndocker_image = "python:3.12"\n',
      "solution/answer.md": "42\n",
    });
    // Broken task.toml: not imported.
    await writeTree(join(tasks, "broken"), {
      "instruction.md": "x\n",
      "task.toml": "[agent]\ntimeout_sec = = 3\n",
      "environment/Dockerfile": "FROM scratch\n",
    });
    // No environment at all: not imported.
    await writeTree(join(tasks, "no-env"), { "instruction.md": "x\n", "task.toml": "" });

    const out = join(scratch, "dataset-suite");
    const result = await importHarbor([tasks], { out });
    expect(result.skills).toBe(2);
    expect(result.requirements).toBe(2);
    const messages = result.problems.map(
      (problem) => `${problem.path.slice(tasks.length + 1)} ${problem.message}`,
    );
    expect(messages).toHaveLength(5);
    expect(messages.find((message) => message.startsWith("bare no skill:"))).toBeDefined();
    expect(
      messages.find((message) => message.startsWith("bare/tests/test.sh no verifier:")),
    ).toBeDefined();
    expect(
      messages.find((message) =>
        message.startsWith("bare/solution reference solution not imported"),
      ),
    ).toBeDefined();
    expect(
      messages.find((message) =>
        message.startsWith("broken task not imported: task.toml line 2: "),
      ),
    ).toBeDefined();
    expect(messages).toContain(
      "no-env task not imported: no environment/Dockerfile and no environment.docker_image in task.toml",
    );

    const validation = await validateSuite(out);
    const errors = validation.problems.filter((problem) => problem.severity === "error");
    expect(errors.map((problem) => problem.message.split(":")[0])).toEqual([
      "no skill",
      "no verifier",
    ]);
  });

  it("uses --skill for tasks that ship none", async () => {
    const task = join(scratch, "plain-task");
    await writeTree(task, {
      "instruction.md": "Write hello.\n",
      "task.toml": '[environment]\ndocker_image = "python:3.12"\n',
      "tests/test.sh": "exit 0\n",
    });
    const skill = join(scratch, "my-skill");
    await writeTree(skill, { "SKILL.md": skillMarkdown("my-skill") });
    const out = join(scratch, "plain-suite");
    const result = await bench([
      "import",
      "harbor",
      task,
      "--out",
      out,
      "--skill",
      skill,
      "--json",
    ]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ skills: 1, requirements: 1, problems: [] });
    const suite = await loadSuite(out);
    expect(suite.skills[0]?.skillFolders).toEqual([
      join(out, "skills", "plain-task", "agent-skills", "my-skill"),
    ]);
    expect(suite.skills[0]?.environment).toEqual({ image: "python:3.12" });
    expect(suite.configurations.map((configuration) => configuration.id)).toEqual(["claude-code"]);
  });

  it("keeps every --skill in one arm, and runs variants and distractors as arms of their own", async () => {
    const task = join(scratch, "treatment-task");
    await writeTree(task, {
      "instruction.md": "Write hello.\n",
      "task.toml": '[environment]\ndocker_image = "python:3.13-slim"\n',
      "tests/test.sh": "exit 0\n",
    });
    const folder = (name: string) => join(scratch, "treatment-skills", name);
    for (const name of ["alpha", "beta", "gamma", "noise"]) {
      await writeTree(folder(name), { "SKILL.md": skillMarkdown(name) });
    }
    const out = join(scratch, "treatment-suite");
    const result = await bench([
      "import",
      "harbor",
      task,
      "--out",
      out,
      "--skill",
      folder("alpha"),
      "--skill",
      folder("beta"),
      "--variant",
      `gamma-only=${folder("gamma")}`,
      "--distractor",
      folder("noise"),
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const skill = (await loadSuite(out)).skills[0];
    const root = join(out, "skills", "treatment-task");
    expect(skill?.skillFolders).toEqual([
      join(root, "agent-skills", "alpha"),
      join(root, "agent-skills", "beta"),
      join(root, "arm-skills", "distractors", "noise"),
    ]);
    expect(skill?.variants).toEqual({
      "gamma-only": [
        join(root, "arm-skills", "gamma-only", "gamma"),
        join(root, "arm-skills", "distractors", "noise"),
      ],
      distractors: [join(root, "arm-skills", "distractors", "noise")],
    });
    // The hint names a command that works for this suite: the controls, with the FROM mapping.
    expect(result.stdout).toContain(
      `next: skillsmith bench check-tasks ${out} --base-image python:3.13-slim=localhost/skillsmith-base:bookworm`,
    );
  });

  it("a malformed --variant and two skills of one name are refused, naming the value", async () => {
    const task = join(scratch, "treatment-task");
    const bad = await bench([
      "import",
      "harbor",
      task,
      "--out",
      join(scratch, "bad-1"),
      "--variant",
      "nofolders",
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--variant nofolders: expected name=folder/);
    const fixed = await bench([
      "import",
      "harbor",
      task,
      "--out",
      join(scratch, "bad-2"),
      "--variant",
      `with=${scratch}`,
    ]);
    expect(fixed.code).toBe(2);
    expect(fixed.stderr).toMatch(/name the fixed arms/);
    const twice = join(scratch, "twice");
    for (const side of ["a", "b"]) {
      await writeTree(join(twice, side, "same"), { "SKILL.md": skillMarkdown("same") });
    }
    const duplicate = await bench([
      "import",
      "harbor",
      task,
      "--out",
      join(scratch, "bad-3"),
      "--skill",
      join(twice, "a", "same"),
      "--skill",
      join(twice, "b", "same"),
    ]);
    expect(duplicate.code).toBe(2);
    expect(duplicate.stderr).toMatch(/two skill folders are both named "same"/);
    expect(existsSync(join(scratch, "bad-3"))).toBe(false);
  });

  it("honours [agent]/[verifier] user, [task] name and schema_version, and notes every ignored field", async () => {
    const task = join(scratch, "users-task");
    await writeTree(task, {
      "instruction.md": "Write hello.\n",
      "task.toml": [
        'schema_version = "1.1"',
        "[task]",
        'name = "acme/users-task"',
        "[agent]",
        'user = "app"',
        "[verifier]",
        'user = "root"',
        "[verifier.env]",
        'MODE = "strict"',
        "[environment]",
        'docker_image = "python:3.13-slim"',
        "storage_mb = 10240",
        "",
      ].join("\n"),
      "tests/test.sh": "exit 0\n",
    });
    const out = join(scratch, "users-suite");
    const result = await importHarbor([task], { out });
    expect(result.notes).toEqual([
      `${task}/task.toml: [environment] storage_mb = 10240: no disk limit is applied here`,
    ]);
    const skillYaml = parseYaml(
      await readFile(join(out, "skills", "users-task", "skill.yaml"), "utf8"),
    ) as Record<string, Record<string, unknown>>;
    expect(skillYaml.environment?.agentUser).toBe("app");
    expect(skillYaml.source).toMatchObject({
      name: "acme/users-task",
      schemaVersion: "1.1",
      ignoredFields: ["[environment] storage_mb = 10240: no disk limit is applied here"],
    });
    const verifierYaml = parseYaml(
      await readFile(
        join(out, "skills", "users-task", "requirements", "users-task", "verifier.yaml"),
        "utf8",
      ),
    ) as Record<string, unknown>;
    expect(verifierYaml.user).toBe("root");
    expect(verifierYaml.command).toBe("MODE='strict' bash /tests/test.sh");
    // The task ships no skill: the controls still load it, and the hint says what a run needs.
    const suite = await loadSuite(out, { controlsOnly: true });
    expect(suite.skills[0]?.requirements[0]?.verifier.user).toBe("root");
    expect(result.next?.[1]).toMatch(/re-import with --skill <folder>.*users-task/);
  });

  it("a real third-party task (skills-benchmarks lc-basic): every field it sets that Harbor does not define is named", async () => {
    const fixture = join(import.meta.dirname, "fixtures", "skills-benchmarks-lc-basic");
    const out = join(scratch, "lc-basic-suite");
    const result = await importHarbor([fixture], { out });
    expect(result.skills).toBe(1);
    expect(result.problems.map((problem) => problem.message.split(":")[0])).toEqual([
      "no skill",
      "no verifier",
    ]);
    const notes = result.notes.map((note) => note.slice(`${fixture}/task.toml: `.length));
    // By hand from the fixture's task.toml, in its order: [template] and [validation] are
    // sections Harbor does not define, and [environment] has three keys it does not define.
    expect(notes.map((note) => note.split(" = ")[0])).toEqual([
      "template",
      "[environment] description",
      "[environment] dockerfile",
      "[environment] timeout_sec",
      "validation",
    ]);
    expect(notes.every((note) => note.endsWith(": not a field Harbor defines"))).toBe(true);
    // Its image is FROM the local base: no --base-image mapping is suggested.
    expect(result.next?.[0]).toBe(
      `next: skillsmith bench check-tasks ${out}   (the untouched working directory must score below 1; drop a --base-image whose image is present locally)`,
    );
  });

  it("bench check-tasks on a suite whose only task has no test.sh: a per-task result, not a refused suite", async () => {
    const fixture = join(import.meta.dirname, "fixtures", "skills-benchmarks-lc-basic");
    const out = join(scratch, "lc-basic-check-tasks");
    await importHarbor([fixture], { out });
    // Nothing can run, so no container engine is needed: the result is known from the folder.
    const result = await runInProcess(["bench", "check-tasks", out, "--json"], {
      cwd: scratch,
      env: { SKILLSMITH_CACHE_DIR: join(scratch, "cache-lc-basic") },
    });
    expect(result.code, result.stderr).toBe(1);
    const checks = JSON.parse(result.stdout) as {
      skill: string;
      status: string;
      ok: boolean;
      fault?: string;
      problems: string[];
    }[];
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({
      skill: "skills-benchmarks-lc-basic",
      status: "broken",
      ok: false,
      fault: "verifier",
    });
    expect(checks[0]?.problems.join(" ")).toMatch(/test\.sh.*does not exist/);
    expect(result.stderr).toMatch(
      /\[1\/1 \d+s\] FAIL skills-benchmarks-lc-basic\/\S+: not run \[fault: verifier\]/,
    );
    expect(result.stderr).toMatch(/1 of 1 task requirement\(s\) cannot be scored/);
    expect(result.stderr).not.toMatch(/nothing in it can run/);
  });

  it("exits 2 when no argument is a Harbor task folder", async () => {
    const empty = join(scratch, "empty-folder");
    await mkdir(empty, { recursive: true });
    const result = await bench(["import", "harbor", empty, "--out", join(scratch, "none")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no Harbor task folder among/);
    expect(existsSync(join(scratch, "none"))).toBe(false);
  });

  it("names the Terminal-Bench 1 layout instead of importing it", async () => {
    const old = join(scratch, "tb1-task");
    await writeTree(old, { "task.yaml": "instruction: do it\n", "run-tests.sh": "exit 0\n" });
    const good = join(scratch, "tb1-mixed", "good");
    await makeTask(good);
    const result = await importHarbor([old, good], { out: join(scratch, "tb1-suite") });
    expect(result.skills).toBe(1);
    expect(result.problems).toEqual([
      {
        path: old,
        message:
          "a Terminal-Bench 1 task (task.yaml); convert it to the Harbor format first (`harbor tasks migrate`)",
      },
    ]);
    expect(existsSync(join(scratch, "none"))).toBe(false);
  });
});
