import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InfrastructureError, InputError } from "../src/core/errors.js";
import { BubblewrapSandbox, findOnPath } from "../src/env/sandbox/bubblewrap.js";
import type { ContainerSandbox } from "../src/env/sandbox/container.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import { treeDigest } from "../src/env/workspace/digest.js";
import {
  detectMethod,
  materialiseWorkspace,
  sweepStaleWorkspaces,
  type Workspace,
} from "../src/env/workspace/materialise.js";
import { prepareBase } from "../src/env/workspace/prepare.js";
import { childScript } from "./support/cli.js";
import { gitSync as git } from "./support/git.js";
import { availableContainerSandbox } from "./support/sandboxes.js";

const isRoot = process.getuid?.() === 0;
const hasBwrap = findOnPath("bwrap") !== null;
/** The container sandbox, when an engine answers and the skillsmith base image exists. */
const container: ContainerSandbox | undefined = await availableContainerSandbox();

let scratch: string;
let repository: string;
let firstCommit: string;
let secondCommit: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-env-workspace-"));
  repository = join(scratch, "demo-repo");
  await mkdir(join(repository, "src"), { recursive: true });
  git(repository, "init", "-q", "-b", "main");
  await writeFile(join(repository, "src", "app.py"), "VERSION = 1\n");
  await writeFile(join(repository, "run.sh"), "#!/bin/sh\necho run\n", { mode: 0o755 });
  await mkdir(join(repository, ".claude", "skills", "planted"), { recursive: true });
  await writeFile(join(repository, ".claude", "skills", "planted", "SKILL.md"), "planted\n");
  await mkdir(join(repository, "pkg", ".agents", "skills", "nested"), { recursive: true });
  await writeFile(join(repository, "pkg", ".agents", "skills", "nested", "SKILL.md"), "nested\n");
  git(repository, "add", "-A");
  git(repository, "commit", "-q", "-m", "first");
  firstCommit = git(repository, "rev-parse", "HEAD");
  await writeFile(join(repository, "src", "app.py"), "VERSION = 2  # the solution\n");
  git(repository, "commit", "-q", "-am", "second");
  secondCommit = git(repository, "rev-parse", "HEAD");
  // Tags (light and annotated) and a second branch pointing at later history: all must be
  // deleted with the other refs, or the later commit stays reachable in the base.
  git(repository, "tag", "v2", secondCommit);
  git(repository, "tag", "-a", "-m", "release 2", "release-2", secondCommit);
  git(repository, "branch", "later", secondCommit);
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function freshCache(): Promise<string> {
  return mkdtemp(join(scratch, "cache-"));
}

describe("prepare once, materialise many", () => {
  it("prepares the base once for concurrent callers and materialises 20 identical, independent workspaces", async () => {
    const cacheDir = await freshCache();
    const counter = join(scratch, "setup-count.txt");
    const setup = {
      kind: "commands" as const,
      commands: [`echo ran >> '${counter}'; echo installed > installed.txt`],
    };
    const sandbox = new UnsafeSandbox();
    const bases = await Promise.all(
      [0, 1, 2].map(() =>
        prepareBase({ source: repository, commit: firstCommit, setup, sandbox, cacheDir }),
      ),
    );
    const [base] = bases;
    if (base === undefined) throw new Error("no base");
    expect(new Set(bases.map((each) => each.root)).size).toBe(1);
    expect(bases.filter((each) => !each.reused)).toHaveLength(1);
    const workspaces: Workspace[] = [];
    try {
      for (let run = 0; run < 20; run += 1) workspaces.push(await materialiseWorkspace(base));
      // Setup ran exactly once although three callers asked and twenty workspaces exist.
      expect((await readFile(counter, "utf8")).trim().split("\n")).toEqual(["ran"]);
      const digests = await Promise.all(workspaces.map((workspace) => treeDigest(workspace.path)));
      expect(new Set(digests).size).toBe(1);
      expect(digests[0]).toBe(await treeDigest(base.tree));
      expect(new Set(workspaces.map((workspace) => workspace.path)).size).toBe(20);

      const [edited, other] = workspaces;
      if (edited === undefined || other === undefined) throw new Error("missing workspaces");
      expect(await readFile(join(edited.path, "installed.txt"), "utf8")).toBe("installed\n");
      expect(await readFile(join(edited.path, "src", "app.py"), "utf8")).toBe("VERSION = 1\n");
      // An in-place edit (same inode), a new file and a commit in one workspace.
      await writeFile(join(edited.path, "src", "app.py"), "VERSION = 99\n");
      await writeFile(join(edited.path, "new.txt"), "new\n");
      git(edited.path, "add", "-A");
      git(edited.path, "commit", "-q", "-m", "agent work");
      expect(git(edited.path, "rev-parse", "HEAD")).not.toBe(firstCommit);

      expect(await treeDigest(base.tree)).toBe(digests[0]);
      expect(await treeDigest(other.path)).toBe(digests[0]);
      expect(await readFile(join(base.tree, "src", "app.py"), "utf8")).toBe("VERSION = 1\n");
      // The repository committed skill folders: HEAD is the pinned commit rewritten without them.
      const head = base.skillHistory?.head;
      expect(head).toMatch(/^[0-9a-f]{40}$/);
      expect(git(other.path, "rev-parse", "HEAD")).toBe(head);
      expect(git(base.tree, "rev-parse", "HEAD")).toBe(head);
    } finally {
      for (const workspace of workspaces) await workspace.dispose();
    }
    for (const workspace of workspaces) expect(existsSync(workspace.path)).toBe(false);
    expect(await readdir(join(cacheDir, "workspaces"))).toEqual([]);

    // The same recipe and sandbox kind find the published base without running setup again.
    const again = await prepareBase({
      source: repository,
      commit: firstCommit,
      setup,
      sandbox,
      cacheDir,
    });
    expect(again.reused).toBe(true);
    expect((await readFile(counter, "utf8")).trim().split("\n")).toEqual(["ran"]);
  });

  it("checks out exactly the pinned commit and hides later history", async () => {
    const cacheDir = await freshCache();
    const base = await prepareBase({
      source: repository,
      commit: firstCommit.slice(0, 9),
      cacheDir,
    });
    expect(base.commit).toBe(firstCommit);
    const workspace = await materialiseWorkspace(base);
    try {
      // The planted skill folders were tracked; they left the history, so nothing shows them.
      expect(base.skillHistory?.commitsWithSkills).toBe(1);
      expect(git(workspace.path, "rev-parse", "HEAD")).toBe(base.skillHistory?.head);
      expect(git(workspace.path, "status", "--porcelain")).toBe("");
      // Same author, date and message as the pinned commit; only the skill files are gone.
      const described = (commit: string, cwd: string) =>
        git(cwd, "log", "-1", "--format=%an %ae %at %s", commit);
      expect(described("HEAD", workspace.path)).toBe(described(firstCommit, repository));
      expect(git(workspace.path, "ls-tree", "-r", "--name-only", "HEAD").split("\n")).toEqual(
        git(repository, "ls-tree", "-r", "--name-only", firstCommit)
          .split("\n")
          .filter((path) => !path.includes("/skills/")),
      );
      const missing = spawnSync("git", ["cat-file", "-e", `${secondCommit}^{commit}`], {
        cwd: workspace.path,
      });
      expect(missing.status).not.toBe(0);
      expect(git(workspace.path, "for-each-ref")).toBe("");
      // Patches apply in a workspace, as replay needs.
      await writeFile(
        join(workspace.path, "..", "fix.patch"),
        `${git(repository, "diff", firstCommit, secondCommit)}\n`,
      );
      git(workspace.path, "apply", join(workspace.path, "..", "fix.patch"));
      expect(await readFile(join(workspace.path, "src", "app.py"), "utf8")).toBe(
        "VERSION = 2  # the solution\n",
      );
    } finally {
      await workspace.dispose();
    }
  });

  it("removes planted agent-skill folders from every workspace", async () => {
    const cacheDir = await freshCache();
    const base = await prepareBase({
      source: repository,
      commit: firstCommit,
      cacheDir,
      sandbox: new UnsafeSandbox(),
      // Setup that drops a skill in (as a dependency shipping one might) is cleaned too.
      setup: {
        kind: "commands",
        commands: ["mkdir -p lib/.claude/skills/dep && echo x > lib/.claude/skills/dep/SKILL.md"],
      },
    });
    expect([...base.removedSkillFolders].sort()).toEqual([
      ".claude/skills",
      "lib/.claude/skills",
      "pkg/.agents/skills",
    ]);
    const workspace = await materialiseWorkspace(base);
    try {
      expect(existsSync(join(workspace.path, ".claude", "skills"))).toBe(false);
      expect(existsSync(join(workspace.path, "pkg", ".agents", "skills"))).toBe(false);
      expect(existsSync(join(workspace.path, "lib", ".claude", "skills"))).toBe(false);
      expect(existsSync(join(workspace.path, "src", "app.py"))).toBe(true);
    } finally {
      await workspace.dispose();
    }
  });

  it("reads bundles and file:// URLs, pinning the same commit to the same tree", async () => {
    const bundle = join(scratch, "demo.bundle");
    git(repository, "bundle", "create", bundle, "--all");
    const cacheDir = await freshCache();
    const fromBundle = await prepareBase({ source: bundle, commit: firstCommit, cacheDir });
    const fromUrl = await prepareBase({
      source: `file://${repository}`,
      commit: firstCommit,
      cacheDir,
    });
    const fromPath = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
    expect(fromBundle.repositoryName).toBe("demo");
    expect(fromUrl.repositoryName).toBe("demo-repo");
    expect(fromBundle.workspaceMountPath).toBe("/workspace/demo");
    expect(new Set([fromBundle.root, fromUrl.root, fromPath.root]).size).toBe(3);
    // The rewrite without the committed skill folders is deterministic: one HEAD for all three.
    expect(
      new Set([fromBundle, fromUrl, fromPath].map((base) => base.skillHistory?.head)).size,
    ).toBe(1);
    for (const base of [fromBundle, fromUrl, fromPath]) {
      expect(base.commit).toBe(firstCommit);
      expect(git(base.tree, "rev-parse", "HEAD")).toBe(base.skillHistory?.head);
      expect(await readFile(join(base.tree, "src", "app.py"), "utf8")).toBe("VERSION = 1\n");
    }
    // Same commit, same files. `.git` is left out: its index records each checkout's inodes.
    const withoutGit = { exclude: (path: string) => path === ".git" };
    expect(await treeDigest(fromBundle.tree, withoutGit)).toBe(
      await treeDigest(fromUrl.tree, withoutGit),
    );
  });

  it("fails clearly for an unknown commit, naming repository and commit", async () => {
    const cacheDir = await freshCache();
    const unknown = "0123456789abcdef0123456789abcdef01234567";
    const failure = await prepareBase({ source: repository, commit: unknown, cacheDir }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(InputError);
    expect((failure as InputError).code).toBe("env.unknown-commit");
    expect((failure as InputError).message).toContain(unknown);
    expect((failure as InputError).message).toContain(resolve(repository));
    const short = await prepareBase({ source: repository, commit: "deadbee", cacheDir }).catch(
      (error: unknown) => error,
    );
    expect((short as InputError).code).toBe("env.unknown-commit");
    // Nothing half-made is left to look like a base.
    expect(await readdir(join(cacheDir, "bases"))).toEqual([]);
  });

  it("tells an unreachable server (retryable) from a repository that does not exist", async () => {
    const cacheDir = await freshCache();
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const unreachable = await prepareBase({
      source: "http://127.0.0.1:1/nothing.git",
      commit: firstCommit,
      cacheDir,
    }).catch((error: unknown) => error);
    expect(unreachable).toBeInstanceOf(InfrastructureError);
    expect((unreachable as InfrastructureError).retryable).toBe(true);
    const missing = await prepareBase({
      source: `file://${join(scratch, "no-such-repository")}`,
      commit: firstCommit,
      cacheDir,
    }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(InputError);
    expect((missing as InputError).code).toBe("env.clone-failed");
  });

  it("publishes nothing when setup fails, and prepares afresh on the next attempt", async () => {
    const cacheDir = await freshCache();
    const failing = prepareBase({
      source: repository,
      commit: firstCommit,
      cacheDir,
      sandbox: new UnsafeSandbox(),
      setup: { kind: "commands", commands: ["echo partial > partial.txt; exit 3"] },
    });
    await expect(failing).rejects.toBeInstanceOf(InfrastructureError);
    expect(await readdir(join(cacheDir, "bases"))).toEqual([]);
  });

  it("takes over a lock left by a dead process and ignores a crashed preparation's leftovers", async () => {
    const cacheDir = await freshCache();
    const probe = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
    // Simulate a crash: no published base, a half-written temporary folder and a stale lock.
    await rm(probe.root, { recursive: true });
    const dead = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
    const deadPid = Number(dead.stdout.trim());
    const basesDir = join(cacheDir, "bases");
    await mkdir(join(basesDir, `.tmp-${probe.key}-crashed`, "tree"), { recursive: true });
    await writeFile(
      join(basesDir, `${probe.key}.lock`),
      JSON.stringify({ pid: deadPid, host: (await import("node:os")).hostname(), since: "x" }),
    );
    const base = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
    expect(base.reused).toBe(false);
    expect(await readdir(basesDir)).toEqual([probe.key]);
  });

  it("lets only one of two processes prepare the same base", async () => {
    const cacheDir = await freshCache();
    const counter = join(scratch, "two-process-count.txt");
    const script = join(scratch, `prepare-once${childScript.extension}`);
    const prepareModule = childScript.module("env/workspace/prepare.ts");
    const unsafeModule = childScript.module("env/sandbox/unsafe.ts");
    await writeFile(
      script,
      [
        `import { prepareBase } from ${JSON.stringify(prepareModule)};`,
        `import { UnsafeSandbox } from ${JSON.stringify(unsafeModule)};`,
        "const base = await prepareBase({",
        `  source: ${JSON.stringify(repository)}, commit: ${JSON.stringify(firstCommit)},`,
        `  cacheDir: ${JSON.stringify(cacheDir)}, sandbox: new UnsafeSandbox(),`,
        `  setup: { kind: "commands", commands: [${JSON.stringify(`echo ran >> '${counter}'; sleep 1`)}] },`,
        "});",
        "process.stdout.write(base.reused ? 'reused' : 'prepared');",
      ].join("\n"),
    );
    const runOne = () =>
      new Promise<string>((done, fail) => {
        const child = spawn(process.execPath, childScript.nodeArguments(script), {
          cwd: resolve(import.meta.dirname, ".."),
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        let errors = "";
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString();
        });
        child.stderr.on("data", (chunk: Buffer) => {
          errors += chunk.toString();
        });
        child.on("close", (code) =>
          code === 0 ? done(output) : fail(new Error(`exit ${code}: ${errors}`)),
        );
      });
    const outcomes = await Promise.all([runOne(), runOne()]);
    expect(outcomes.sort()).toEqual(["prepared", "reused"]);
    expect((await readFile(counter, "utf8")).trim().split("\n")).toEqual(["ran"]);
  });

  it("keeps a workspace on request", async () => {
    const cacheDir = await freshCache();
    const base = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
    const workspace = await materialiseWorkspace(base, { keep: true });
    await writeFile(join(workspace.path, "agent-output.txt"), "kept\n");
    const { keptAt } = await workspace.dispose();
    if (keptAt === undefined) throw new Error("nothing kept");
    expect(await readFile(join(keptAt, "agent-output.txt"), "utf8")).toBe("kept\n");
    expect(await readFile(join(keptAt, "src", "app.py"), "utf8")).toBe("VERSION = 1\n");
    await rm(join(keptAt, ".."), { recursive: true, force: true });
  });
});

describe("setup in real sandboxes", () => {
  it.skipIf(!hasBwrap)(
    "runs setup in bubblewrap at the fixed mount path, with network",
    async () => {
      const cacheDir = await freshCache();
      const base = await prepareBase({
        source: repository,
        commit: firstCommit,
        cacheDir,
        sandbox: new BubblewrapSandbox(),
        setup: {
          kind: "commands",
          commands: ['pwd > where.txt; echo "$SKILLSMITH_WORKSPACE" >> where.txt'],
        },
      });
      expect(await readFile(join(base.tree, "where.txt"), "utf8")).toBe(
        "/workspace/demo-repo\n/workspace/demo-repo\n",
      );
    },
  );

  it.skipIf(container === undefined)(
    "bakes setup into a container image once and records it on the base (needs a container engine with the skillsmith base image)",
    { timeout: 300_000 },
    async () => {
      if (container === undefined) throw new Error("unreachable");
      const cacheDir = await freshCache();
      const marker = `prepared-${Date.now()}`;
      const base = await prepareBase({
        source: repository,
        commit: firstCommit,
        cacheDir,
        sandbox: container,
        setup: {
          kind: "commands",
          commands: [
            `mkdir -p /opt/skillsmith-test && echo ${marker} > /opt/skillsmith-test/marker`,
          ],
        },
      });
      const image = base.environment?.image;
      expect(image).toBeDefined();
      const workspace = await materialiseWorkspace(base);
      try {
        const result = await container.exec({
          command: ["sh", "-c", "cat /opt/skillsmith-test/marker; cat src/app.py; pwd"],
          workspace: workspace.path,
          workspaceMountPath: workspace.mountPath,
          network: "none",
          limits: { timeoutMs: 60_000 },
          ...(image === undefined ? {} : { image }),
        });
        expect(result.stdout).toBe(`${marker}\nVERSION = 1\n/workspace/demo-repo\n`);
      } finally {
        await workspace.dispose();
        if (image !== undefined)
          await container.docker
            .getImage(image)
            .remove()
            .catch(() => undefined);
      }
    },
  );
});

describe("materialisation methods", () => {
  const methods = [
    { method: "copy" as const, tool: "cp" },
    { method: "overlay" as const, tool: "root (mount)" },
  ];
  for (const { method, tool } of methods) {
    it.skipIf(method === "overlay" && !isRoot)(
      `${method}: same digest as the base, edits stay in the workspace (needs ${tool})`,
      async () => {
        const cacheDir = await freshCache();
        const base = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
        const one = await materialiseWorkspace(base, { method });
        const two = await materialiseWorkspace(base, { method });
        try {
          expect(one.method).toBe(method);
          expect(await treeDigest(one.path)).toBe(base.digest);
          await writeFile(join(one.path, "src", "app.py"), "edited in place\n");
          await rm(join(one.path, "run.sh"));
          expect(await treeDigest(two.path)).toBe(base.digest);
          expect(await treeDigest(base.tree)).toBe(base.digest);
        } finally {
          await one.dispose();
          await two.dispose();
        }
      },
    );
  }

  it("picks overlay when it may mount, otherwise reflink or copy", async () => {
    const cacheDir = await freshCache();
    const base = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
    const method = await detectMethod(join(cacheDir, "workspaces-probe"), base.tree);
    if (isRoot) expect(method).toBe("overlay");
    else expect(["reflink", "copy"]).toContain(method);
  });
});

/** Whether this process may mount overlayfs here (root or CAP_SYS_ADMIN, overlayfs present). */
async function overlayPermitted(): Promise<boolean> {
  const probe = await mkdtemp(join(tmpdir(), "skillsmith-overlay-probe-"));
  try {
    return (await detectMethod(join(probe, "workspaces"), probe)) === "overlay";
  } finally {
    await rm(probe, { recursive: true, force: true });
  }
}
const canMountOverlay = await overlayPermitted();

/** Mount points of this mount namespace, read independently of the module under test. */
async function mounted(): Promise<Set<string>> {
  const text = await readFile("/proc/self/mountinfo", "utf8");
  return new Set(text.split("\n").map((line) => line.split(" ")[4] ?? ""));
}

/**
 * A separate Node process that materialises an overlay workspace of the cache's base, prints its
 * path and holds it until killed — a `bench run` in miniature.
 */
async function workspaceHolder(
  cacheDir: string,
): Promise<{ path: string; child: ReturnType<typeof spawn>; exited: Promise<unknown> }> {
  const module = (name: string) => JSON.stringify(childScript.module(`env/workspace/${name}`));
  const script = join(
    scratch,
    `hold-workspace-${Date.now()}-${Math.random()}${childScript.extension}`,
  );
  await writeFile(
    script,
    `import { materialiseWorkspace } from ${module("materialise.ts")};
import { prepareBase } from ${module("prepare.ts")};
const base = await prepareBase({ source: ${JSON.stringify(repository)}, commit: ${JSON.stringify(firstCommit)}, cacheDir: ${JSON.stringify(cacheDir)} });
const workspace = await materialiseWorkspace(base, { method: "overlay" });
process.stdout.write(workspace.path + "\\n");
setInterval(() => {}, 60_000);
`,
  );
  // Plain node, or `node --import tsx`, runs the script in this very process (the tsx CLI would
  // fork a child, and a SIGKILL of the CLI would leave the workspace's real owner alive).
  const child = spawn(process.execPath, childScript.nodeArguments(script), {
    cwd: resolve(import.meta.dirname, ".."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((done) => child.once("exit", done));
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const path = await new Promise<string>((done, fail) => {
    let stdout = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("\n")) done(stdout.trim());
    });
    child.once("exit", (code) => fail(new Error(`holder exited with ${code}: ${stderr}`)));
  });
  return { path, child, exited };
}

/** The processes `pid` started (its threads' `children` lists). */
function childrenOf(pid: number): number[] {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, "utf8")
      .split(" ")
      .filter((field) => field.trim() !== "")
      .map(Number),
  );
}

/** Whether nothing is mounted at `path` any more within `ms`. */
async function unmountedWithin(path: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await mounted()).has(path)) return true;
    await new Promise((done) => setTimeout(done, 50));
  }
  return false;
}

describe("stale overlay workspaces", () => {
  it.skipIf(!canMountOverlay)(
    "sweeps the workspace of a SIGKILLed process on the next materialise, never a live process's (needs permission to mount overlayfs: root or CAP_SYS_ADMIN)",
    async () => {
      const cacheDir = await freshCache();
      const base = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
      const killed = await workspaceHolder(cacheDir);
      const alive = await workspaceHolder(cacheDir);
      let fresh: Workspace | undefined;
      try {
        const before = await mounted();
        expect(before.has(killed.path)).toBe(true);
        expect(before.has(alive.path)).toBe(true);

        // Its overlay's keeper (overlay-keeper.ts) unmounts when its owner dies, even of SIGKILL;
        // the holder folder stays for the sweep.
        killed.child.kill("SIGKILL");
        await killed.exited;
        expect(await unmountedWithin(killed.path, 10_000)).toBe(true);
        expect(existsSync(dirname(killed.path))).toBe(true);

        fresh = await materialiseWorkspace(base, { method: "overlay" });
        const after = await mounted();
        expect(after.has(killed.path)).toBe(false);
        expect(existsSync(dirname(killed.path))).toBe(false);
        // The live process's workspace is untouched and still usable.
        expect(after.has(alive.path)).toBe(true);
        expect(await readFile(join(alive.path, "src", "app.py"), "utf8")).toBe("VERSION = 1\n");
        expect(after.has(fresh.path)).toBe(true);
        expect(await treeDigest(fresh.path)).toBe(base.digest);

        // Once its owner is gone too, a base preparation (here a reuse) sweeps it; its keeper
        // killed first, the overlay outlives its process: this is what the sweep's unmount is for.
        for (const keeper of childrenOf(alive.child.pid ?? 0)) process.kill(keeper, "SIGKILL");
        alive.child.kill("SIGKILL");
        await alive.exited;
        expect((await mounted()).has(alive.path)).toBe(true);
        expect(await readFile(join(alive.path, "src", "app.py"), "utf8")).toBe("VERSION = 1\n");
        await prepareBase({ source: repository, commit: firstCommit, cacheDir });
        expect((await mounted()).has(alive.path)).toBe(false);
        expect(existsSync(dirname(alive.path))).toBe(false);
        // Our own workspace stays: this process is alive.
        expect((await mounted()).has(fresh.path)).toBe(true);
      } finally {
        killed.child.kill("SIGKILL");
        alive.child.kill("SIGKILL");
        await Promise.all([killed.exited, alive.exited]);
        await fresh?.dispose();
        await sweepStaleWorkspaces(join(cacheDir, "workspaces"));
      }
    },
  );

  it.skipIf(!canMountOverlay)(
    "a workspace whose mount keeper was killed is still unmounted and removed by dispose (needs permission to mount overlayfs)",
    async () => {
      const cacheDir = await freshCache();
      const base = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
      const workspace = await materialiseWorkspace(base, { method: "overlay" });
      const keepers = childrenOf(process.pid).filter((pid) =>
        readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(workspace.path),
      );
      expect(keepers).toHaveLength(1);
      for (const keeper of keepers) process.kill(keeper, "SIGKILL");
      expect((await mounted()).has(workspace.path)).toBe(true);
      await workspace.dispose();
      expect((await mounted()).has(workspace.path)).toBe(false);
      expect(existsSync(dirname(workspace.path))).toBe(false);
    },
  );

  it("leaves kept workspaces and folders without an owner record alone", async () => {
    const cacheDir = await freshCache();
    const base = await prepareBase({ source: repository, commit: firstCommit, cacheDir });
    const root = join(cacheDir, "workspaces");
    const kept = await materialiseWorkspace(base, { method: "copy", keep: true });
    const { keptAt } = await kept.dispose();
    const foreign = join(root, "not-ours");
    await mkdir(foreign, { recursive: true });
    // A record naming a process that has exited: swept even without any mount.
    const orphan = join(root, "orphan");
    await mkdir(join(orphan, "demo-repo"), { recursive: true });
    const dead = spawnSync("true").pid;
    await writeFile(
      join(orphan, ".skillsmith-owner.json"),
      JSON.stringify({ pid: dead, host: hostname(), since: new Date().toISOString() }),
    );
    const report = await sweepStaleWorkspaces(root);
    expect(report).toEqual({ removed: [orphan], failed: [] });
    expect(keptAt === undefined ? false : existsSync(keptAt)).toBe(true);
    expect(existsSync(foreign)).toBe(true);
  });
});

describe("treeDigest", () => {
  it("matches a digest computed by hand and changes with content, mode and names", async () => {
    const root = await mkdtemp(join(scratch, "digest-"));
    await mkdir(join(root, "b"));
    await writeFile(join(root, "a.txt"), "hello");
    await writeFile(join(root, "b", "c.sh"), "x", { mode: 0o755 });
    const { chmod, stat } = await import("node:fs/promises");
    await chmod(join(root, "a.txt"), 0o644);
    await chmod(join(root, "b"), 0o755);
    await chmod(root, 0o700);
    // The documented format, written out independently of the implementation.
    const expected = createHash("sha256")
      .update("root 700\0")
      .update("file 644 a.txt 5\0")
      .update("hello")
      .update("dir 755 b\0")
      .update("file 755 b/c.sh 1\0")
      .update("x")
      .digest("hex");
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    expect(await treeDigest(root)).toBe(expected);

    await chmod(join(root, "b", "c.sh"), 0o644);
    const modeChanged = await treeDigest(root);
    expect(modeChanged).not.toBe(expected);
    await chmod(join(root, "b", "c.sh"), 0o755);
    expect(await treeDigest(root)).toBe(expected);
    await writeFile(join(root, "a.txt"), "hellp");
    expect(await treeDigest(root)).not.toBe(expected);
    await writeFile(join(root, "a.txt"), "hello");
    expect(await treeDigest(root)).toBe(expected);
    const withoutB = createHash("sha256")
      .update("root 700\0")
      .update("file 644 a.txt 5\0")
      .update("hello")
      .digest("hex");
    expect(await treeDigest(root, { exclude: (path) => path === "b" })).toBe(withoutB);
    const { rename } = await import("node:fs/promises");
    await rename(join(root, "a.txt"), join(root, "a2.txt"));
    expect(await treeDigest(root)).not.toBe(expected);
  });
});
