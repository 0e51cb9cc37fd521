/**
 * Environments prepared offline from what the machine already has (Debian's python3-* packages
 * stand in for a corporate mirror or a pre-built image), in the real bubblewrap sandbox: a
 * virtual environment from /usr/bin/python3 that sees the system's site-packages, the project
 * made importable the way an editable install would, and every agent and verifier run given the
 * environment read-only with its interpreter first on PATH. Skipped without bubblewrap or
 * Debian's python3.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { environmentRecord, skillEnvironments } from "../src/bench/run/environments.js";
import type { SuiteSkill } from "../src/bench/suite/types.js";
import { runProcess } from "../src/core/process.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { treeDigest } from "../src/env/workspace/digest.js";
import { type PreparedBase, prepareBase, SetupFailedError } from "../src/env/workspace/prepare.js";
import { git } from "./support/git.js";
import { runOffline } from "./support/offline-run.js";
import { availableContainerSandbox, present, usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot } from "./support/suites.js";

const sandbox = await usableBubblewrap();
const container = await availableContainerSandbox();
const python = "/usr/bin/python3";
const hasPython = existsSync(python);
// The editable-install route needs setuptools (python3-setuptools) in Debian's interpreter.
const hasSetuptools =
  hasPython && (await runProcess(python, ["-c", "import setuptools"])).exitCode === 0;

let root: string;
let cacheDir: string;

async function repository(name: string, files: Record<string, string>): Promise<string> {
  const folder = join(root, "repos", name);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(folder, path, ".."), { recursive: true });
    await writeFile(join(folder, path), content);
  }
  await git(folder, "init", "-q", "-b", "main");
  await git(folder, "add", "-A");
  await git(folder, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  return folder;
}

/** Run `command` in a fresh workspace of `base`, in its prepared environment. */
function inWorkspace(
  base: PreparedBase,
  command: string,
  edit?: (workspace: string) => Promise<void>,
) {
  return runOffline(sandbox as SandboxV1, base, command, edit === undefined ? {} : { edit });
}

let srcLayout: PreparedBase | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-offline-"));
  cacheDir = join(root, "cache");
});

afterAll(async () => {
  await removeRunRoot(root);
});

describe.skipIf(sandbox === undefined || !hasPython)("offline environments in bubblewrap", () => {
  it("makes a src layout importable through a path entry when its build backend is absent", async () => {
    const folder = await repository("tiny", {
      // A backend no machine has: the editable install must fail and the path entry take over.
      "pyproject.toml":
        "[build-system]\nrequires = ['nothing-here']\nbuild-backend = 'skillsmith_absent_backend.api'\n\n[project]\nname = 'tinypkg'\nversion = '0.1'\n",
      "src/tinypkg/__init__.py": "VALUE = 1\n",
      "requirements.txt": "skillsmith-no-such-package==1.0\n",
    });
    const lines: string[] = [];
    srcLayout = await prepareBase({
      source: folder,
      commit: "HEAD",
      setup: { kind: "detect" },
      sandbox: present(sandbox, "bubblewrap"),
      cacheDir,
      setupNetwork: "off",
      onLog: (line) => lines.push(line),
    });
    const report = srcLayout.setupReport;
    expect(report?.network).toBe("offline");
    const outcomes = report?.steps.map((step) => [step.command.split(" ")[0], step.outcome]);
    // toolchain check, venv, editable install that fell back to the path entry, and the
    // requirements file that could not be satisfied offline: recorded, not fatal.
    expect(outcomes).toEqual([
      ["command", "ok"],
      ["/usr/bin/python3", "ok"],
      ["python", "fell-back"],
      ["python", "skipped"],
    ]);
    expect(report?.steps[3]?.outputTail).toMatch(/No matching distribution|could not find/i);
    expect(report?.interpreter).toMatch(/^\/usr\/bin\/python3 Python 3\./);
    // The chosen commands were printed as they ran.
    expect(lines.some((line) => line.includes("$ /usr/bin/python3 -m venv"))).toBe(true);
    // The environment lives beside the tree, not in it: agents' diffs never include it.
    expect(await readdir(srcLayout.tree)).not.toContain("skillsmith-env");
    expect(existsSync(join(srcLayout.root, "env", "pyvenv.cfg"))).toBe(true);
    expect(existsSync(join(srcLayout.root, "setup.log"))).toBe(true);

    const probe = await inWorkspace(
      srcLayout,
      "command -v python; python -c 'import sys, tinypkg, pytest; print(sys.executable); print(tinypkg.__file__, tinypkg.VALUE)'",
      // An agent's edit of the working tree is what the verifier imports.
      (workspace) => writeFile(join(workspace, "src", "tinypkg", "__init__.py"), "VALUE = 2\n"),
    );
    expect(probe.stderr).toBe("");
    expect(probe.stdout.split("\n")).toEqual([
      "/skillsmith-env/bin/python",
      "/skillsmith-env/bin/python",
      "/workspace/tiny/src/tinypkg/__init__.py 2",
      "",
    ]);
  }, 120_000);

  it("never lets a run change the prepared environment (it is mounted read-only)", async () => {
    if (srcLayout === undefined) throw new Error("the previous test prepares the base");
    const environment = join(srcLayout.root, "env");
    const before = await treeDigest(environment);
    // What a hostile agent would try: plant a .pth, a module, or pip install into the env.
    const attack = await inWorkspace(
      srcLayout,
      "site=$(python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])'); " +
        "echo 'import os' > \"$site/evil.pth\"; s1=$?; " +
        "echo 'x = 1' > /skillsmith-env/bin/sitecustomize.py; s2=$?; [ $s1 -ne 0 ] && [ $s2 -ne 0 ] && echo blocked",
    );
    expect(attack.stdout.trim()).toBe("blocked");
    expect(attack.stderr).toMatch(/Read-only file system/);
    expect(await treeDigest(environment)).toBe(before);
  });

  it.skipIf(!hasSetuptools)(
    "installs a setuptools project in editable mode without isolation (metadata included)",
    async () => {
      const folder = await repository("flat", {
        "setup.py":
          "from setuptools import setup\nsetup(name='flatpkg', version='1.2.3', py_modules=['flatpkg'])\n",
        "flatpkg.py": "def answer():\n    return 42\n",
      });
      const base = await prepareBase({
        source: folder,
        commit: "HEAD",
        setup: { kind: "detect" },
        sandbox: present(sandbox, "bubblewrap"),
        cacheDir,
        setupNetwork: "off",
      });
      const editable = base.setupReport?.steps.find((step) => step.command.includes("pip install"));
      expect(editable?.outcome).toBe("ok");
      const probe = await inWorkspace(
        base,
        "python -c 'import importlib.metadata as m, flatpkg; print(m.version(\"flatpkg\"), flatpkg.answer())'",
      );
      // Package metadata exists only because an (editable) install happened.
      expect(probe.stdout.trim()).toBe("1.2.3 42");
    },
    180_000,
  );

  it("records a failed setup once per skill, with its log, and prepares nothing for setup: none", async () => {
    const folder = await repository("failing", { "README.md": "x\n" });
    const { stdout: commit } = await runProcess("git", ["rev-parse", "HEAD"], { cwd: folder });
    const skill = (repository: NonNullable<SuiteSkill["repository"]>): SuiteSkill => ({
      id: "failing",
      folder,
      skillFolders: [],
      repository,
      requirements: [],
    });
    const repositoryOf = (
      setupChoice: NonNullable<SuiteSkill["repository"]>["setupChoice"],
    ): NonNullable<SuiteSkill["repository"]> => ({
      source: { kind: "path", path: folder },
      commit: commit.trim(),
      name: "failing",
      setup: [],
      setupChoice,
      mountPath: "/workspace/failing",
    });
    const lines: string[] = [];
    const environmentFor = skillEnvironments({
      sandbox: sandbox as SandboxV1,
      cacheDir,
      setupNetwork: "off",
      onLog: (line) => lines.push(line),
    });
    const failing = skill(
      repositoryOf({ kind: "commands", commands: ["echo 'cannot build' >&2; exit 3"] }),
    );
    const first = await environmentFor(failing);
    expect(first.ok).toBe(false);
    if (first.ok) return;
    expect(first.kind).toBe("environment-failure");
    expect(first.log).toContain("cannot build");
    expect(first.log).toContain("→ failed (exit 3");
    const ranBefore = lines.filter((line) => line.includes("exit 3")).length;
    // Every later caller (every run of both arms) gets the same failure without a new attempt.
    expect(await environmentFor(failing)).toBe(first);
    expect(lines.filter((line) => line.includes("exit 3")).length).toBe(ranBefore);

    const none = await prepareBase({
      source: folder,
      commit: commit.trim(),
      setup: { kind: "none" },
      sandbox: present(sandbox, "bubblewrap"),
      cacheDir,
    });
    expect(none.setup).toBeUndefined();
    expect(none.runtime).toBeUndefined();
    expect(existsSync(join(none.root, "env"))).toBe(false);

    await expect(
      prepareBase({
        source: folder,
        commit: commit.trim(),
        setup: { kind: "commands", commands: ["exit 4"] },
        sandbox: present(sandbox, "bubblewrap"),
        cacheDir,
      }),
    ).rejects.toBeInstanceOf(SetupFailedError);
  }, 120_000);
});

describe.skipIf(container === undefined)(
  "offline environments in the container sandbox (needs Podman/Docker and the skillsmith base image)",
  () => {
    it("builds the environment into an image layer and runs with it first on PATH", async () => {
      const folder = await repository("boxed", {
        "pyproject.toml":
          "[build-system]\nbuild-backend = 'skillsmith_absent_backend.api'\n\n[project]\nname = 'boxedpkg'\nversion = '0.1'\n",
        "src/boxedpkg/__init__.py": "NAME = 'boxed'\n",
      });
      const box = container as SandboxV1;
      const lines: string[] = [];
      const base = await prepareBase({
        source: folder,
        commit: "HEAD",
        setup: { kind: "detect" },
        sandbox: box,
        cacheDir,
        setupNetwork: "off",
        onLog: (line) => lines.push(line),
      });
      expect(base.environment?.image).toMatch(/^localhost\/skillsmith-env:/);
      expect(base.setupReport?.target).toBe("image");
      // The commands baked into the image are printed and recorded, with the image as outcome.
      expect(lines).toContainEqual(
        expect.stringMatching(/^ {2}\$ \/usr\/bin\/python3 -m venv .*\(image layer\)$/),
      );
      expect(lines).toContain(
        `  image ${base.environment?.image} on ${base.environment?.baseImage}`,
      );
      const record = environmentRecord({
        ok: true,
        skill: "boxed",
        base,
        sandbox: box,
        durationMs: 0,
      });
      expect(record.image).toBe(base.environment?.image);
      expect(record.steps?.map((step) => step.command)).toContainEqual(
        expect.stringMatching(/^\/usr\/bin\/python3 -m venv --system-site-packages/),
      );
      expect(new Set(record.steps?.map((step) => step.outcome))).toEqual(
        new Set([`in image ${base.environment?.image}`]),
      );
      // Inside the image: nothing to mount, only PATH and variables.
      expect(base.runtime?.mount).toBeUndefined();
      const result = await runOffline(
        box,
        base,
        "python -c 'import sys, boxedpkg; print(sys.executable, boxedpkg.__file__)'",
        base.environment === undefined ? {} : { image: base.environment.image },
      );
      expect(result.stdout.trim()).toBe(
        "/skillsmith-env/bin/python /workspace/boxed/src/boxedpkg/__init__.py",
      );
    }, 300_000);
  },
);
