/**
 * bubblewrap-specific behaviour: refusing clearly when bwrap is missing or unusable, the prlimit
 * fallback, cgroup clean-up, the CPU quota, hidden paths and extra mounts.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { InputError } from "../src/core/errors.js";
import { BubblewrapSandbox, findOnPath } from "../src/env/sandbox/bubblewrap.js";
import { detectCgroupLayout } from "../src/env/sandbox/cgroup.js";
import { SandboxUnavailableError } from "../src/env/sandbox/errors.js";
import { createSandbox } from "../src/env/sandbox/factory.js";
import type { SandboxExecRequest } from "../src/env/sandbox/types.js";

const hasBwrap = findOnPath("bwrap") !== null;
const layout = detectCgroupLayout();
const MiB = 1024 * 1024;

let root: string;
let workspace: string;

beforeAll(() => {
  root = join(tmpdir(), `skillsmith-bwrap-test-${randomBytes(4).toString("hex")}`);
  workspace = join(root, "repo");
  mkdirSync(workspace, { recursive: true });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function request(
  overrides: Partial<SandboxExecRequest> & Pick<SandboxExecRequest, "command">,
): SandboxExecRequest {
  return {
    workspace,
    workspaceMountPath: "/workspace/repo",
    network: "none",
    limits: { timeoutMs: 20_000 },
    ...overrides,
  };
}

describe("when bubblewrap is not available", () => {
  it("refuses with install instructions and the --unsafe-no-sandbox escape hatch", async () => {
    const emptyPath = join(tmpdir(), `skillsmith-empty-path-${randomBytes(4).toString("hex")}`);
    const failure = await createSandbox({ kind: "local", searchPath: emptyPath }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SandboxUnavailableError);
    const error = failure as SandboxUnavailableError;
    expect(error.code).toBe("env.sandbox-bwrap-missing");
    expect(error.message).toContain("apt-get install bubblewrap");
    expect(error.message).toContain("--unsafe-no-sandbox");
  });

  it("reports a bwrap that cannot create a sandbox, with its own words", async () => {
    const fake = join(root, "fake-bwrap");
    writeFileSync(
      fake,
      "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
      {
        mode: 0o755,
      },
    );
    const failure = await createSandbox({ kind: "local", bwrapPath: fake }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SandboxUnavailableError);
    expect((failure as SandboxUnavailableError).code).toBe("env.sandbox-bwrap-unusable");
    expect((failure as Error).message).toContain("No permissions to create new namespace");
  });

  it("gives the unsafe pass-through only when asked for by name", async () => {
    const sandbox = await createSandbox({ kind: "unsafe" });
    expect(sandbox.kind).toBe("unsafe");
  });
});

describe(`bubblewrap details${hasBwrap ? "" : " (skipped: bwrap not installed)"}`, () => {
  it.skipIf(!hasBwrap)(
    "createSandbox({kind: 'local'}) probes and returns the bubblewrap backend",
    async () => {
      const sandbox = await createSandbox({ kind: "local" });
      expect(sandbox.kind).toBe("local");
    },
  );

  it("probes with the system folders exec binds, never a recursive bind of the host root", async () => {
    // A recursive bind of `/` copies every mount below it; one vanishing meanwhile (a container's
    // overlay on a busy machine) failed the probe in a loaded full run and made bubblewrap look
    // unusable. A bwrap that records its arguments shows what the probe asks for.
    const folder = join(tmpdir(), `skillsmith-probe-args-${randomBytes(4).toString("hex")}`);
    mkdirSync(folder);
    try {
      const recorded = join(folder, "arguments");
      const fake = join(folder, "bwrap");
      writeFileSync(fake, `#!/bin/sh\nprintf '%s\\n' "$@" > ${recorded}\n`, { mode: 0o755 });
      await new BubblewrapSandbox({ bwrapPath: fake }).probe();
      const args = readFileSync(recorded, "utf8").trim().split("\n");
      const binds = args.flatMap((arg, index) => (arg === "--ro-bind" ? [args[index + 1]] : []));
      expect(binds).not.toContain("/");
      expect(binds).toContain("/usr");
      expect(args.slice(-1)).toEqual(["true"]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it.skipIf(!hasBwrap || layout === null)("removes its cgroups after each run", async () => {
    const ours = () => {
      const folders: string[] = [];
      for (const controller of ["memory", "pids", "cpu", ""]) {
        const base = join("/sys/fs/cgroup", controller);
        if (!existsSync(base)) continue;
        for (const name of readdirSync(base))
          if (name.startsWith(`skillsmith-${process.pid}-`)) folders.push(name);
      }
      return folders;
    };
    const sandbox = new BubblewrapSandbox();
    const result = await sandbox.exec(
      request({
        command: ["sh", "-c", "cat /proc/self/cgroup"],
        limits: { timeoutMs: 20_000, memoryBytes: 128 * MiB, maxProcesses: 16, cpus: 1 },
      }),
    );
    // While running, the workload sat in a group of ours...
    expect(result.stdout).toContain(`skillsmith-${process.pid}-`);
    // ...which is gone now.
    expect(ours()).toEqual([]);
  });

  it.skipIf(!hasBwrap || layout === null || layout.version !== 1 || layout.pids === undefined)(
    "sweeps empty groups left behind by a skillsmith process that died",
    async () => {
      if (layout === null || layout.version !== 1 || layout.pids === undefined) return;
      // A pid that certainly belongs to no live process: one that has just exited.
      const dead = spawnSync("true").pid;
      const stale = join(layout.pids, `skillsmith-${dead}-deadbeef`);
      mkdirSync(stale);
      try {
        // The sweep runs once per process, so use a fresh module instance.
        vi.resetModules();
        const fresh = await import("../src/env/sandbox/bubblewrap.js");
        const result = await new fresh.BubblewrapSandbox().exec(
          request({ command: ["true"], limits: { timeoutMs: 20_000, maxProcesses: 8 } }),
        );
        expect(result.exitCode).toBe(0);
        expect(existsSync(stale)).toBe(false);
      } finally {
        rmSync(stale, { recursive: true, force: true });
      }
    },
  );

  it.skipIf(!hasBwrap)(
    "falls back to prlimit without cgroups: a memory hog gets MemoryError",
    async () => {
      const sandbox = new BubblewrapSandbox({ cgroupLayout: null });
      expect(sandbox.limitEnforcement().mechanism).toBe("prlimit");
      // RLIMIT_NPROC does not bind root and counts all of a user's processes: not claimed for root.
      expect(sandbox.limitEnforcement().processes).toBe(process.getuid?.() !== 0);
      // And it says so in words, for the manifest and the run's warnings.
      const notes = sandbox.limitEnforcement().notes.join("\n");
      expect(notes).toContain("per process, not per tree");
      expect(notes).toContain("cpu: NOT enforced");
      if (process.getuid?.() === 0) expect(notes).toContain("processes: NOT enforced");
      expect(sandbox.limitEnforcement().detectsHits).toBe(false);
      const result = await sandbox.exec(
        request({
          command: ["python3", "-c", "x = bytearray(2 * 1024**3)\nprint('allocated')"],
          limits: { timeoutMs: 20_000, memoryBytes: 256 * MiB },
        }),
      );
      expect(result.stdout).not.toContain("allocated");
      expect(result.stderr).toContain("MemoryError");
      expect(result.exitCode).toBe(1);
      // The same cap must not stop Node itself from starting (V8 reserves gigabytes of address
      // space up front): agents such as Claude Code and Codex run under it.
      const node = await sandbox.exec(
        request({
          command: [process.execPath, "-e", "console.log('node started')"],
          limits: { timeoutMs: 20_000, memoryBytes: 256 * MiB },
        }),
      );
      expect(node.stdout).toContain("node started");
      expect(node.exitCode).toBe(0);
    },
  );

  it.skipIf(!hasBwrap || process.getuid?.() !== 0)(
    "hides chosen paths inside the visible system folders, and honours read-only extra mounts",
    async () => {
      // A suite or cache folder placed under /usr/local would be visible with the system folders;
      // hidden paths cover it (a folder with an empty tmpfs, a file with /dev/null).
      const secret = `/usr/local/share/skillsmith-hidden-${randomBytes(4).toString("hex")}`;
      mkdirSync(secret, { recursive: true });
      writeFileSync(join(secret, "token"), "s3cr3t");
      writeFileSync(`${secret}.txt`, "s3cr3t");
      try {
        const visible = await new BubblewrapSandbox().exec(
          request({ command: ["sh", "-c", `cat ${secret}/token ${secret}.txt`] }),
        );
        // The control: without hiding, the system folder shows them.
        expect(visible.stdout).toBe("s3cr3ts3cr3t");
        const hidden = await new BubblewrapSandbox({ hiddenPaths: [secret, `${secret}.txt`] }).exec(
          request({
            command: ["sh", "-c", `ls -A ${secret} | wc -l; cat ${secret}.txt; echo end`],
          }),
        );
        expect(hidden.stdout).toBe("0\nend\n");
      } finally {
        rmSync(secret, { recursive: true, force: true });
        rmSync(`${secret}.txt`, { force: true });
      }
      const shared = join(root, "shared");
      const output = join(root, "output");
      mkdirSync(shared, { recursive: true });
      mkdirSync(output, { recursive: true });
      writeFileSync(join(shared, "input.txt"), "from the host\n");
      const sandbox = new BubblewrapSandbox();
      const result = await sandbox.exec(
        request({
          extraMounts: [
            { hostPath: shared, sandboxPath: "/mnt/shared", readOnly: true },
            { hostPath: output, sandboxPath: "/data/output", readOnly: false },
          ],
          command: [
            "sh",
            "-c",
            `cat /mnt/shared/input.txt
touch /mnt/shared/new 2>/dev/null && echo shared-writable || echo shared-readonly
echo out > /data/output/result.txt && echo output-writable`,
          ],
        }),
      );
      expect(result.stdout).toBe("from the host\nshared-readonly\noutput-writable\n");
      expect(readFileSync(join(output, "result.txt"), "utf8")).toBe("out\n");
      expect(existsSync(join(shared, "new"))).toBe(false);
    },
  );

  it.skipIf(!hasBwrap)(
    "refuses a mount point that would need a folder inside the read-only /usr",
    async () => {
      const sandbox = new BubblewrapSandbox();
      await expect(
        sandbox.exec(
          request({ workspaceMountPath: "/usr/skillsmith-nonexistent/repo", command: ["true"] }),
        ),
      ).rejects.toBeInstanceOf(InputError);
    },
  );

  it.skipIf(!hasBwrap)("an abort signal stops the run like a timeout", async () => {
    const sandbox = new BubblewrapSandbox();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    const result = await sandbox.exec(
      request({ command: ["sleep", "300"], signal: controller.signal }),
    );
    // Far below the sleep's 300 s, with room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(60_000);
    expect(result.exitCode).not.toBe(0);
    expect(result.timedOut).toBe(false);
  });
});
