/**
 * The same workloads through both real sandboxes (bubblewrap and containers over the Docker
 * Engine API), with expectations written by hand: a pytest file and a node:test file at the fixed
 * `/workspace/<repo>` path, network isolation, read-only host, private /tmp, and the memory,
 * process and wall-clock limits actually taking effect.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BubblewrapSandbox, findOnPath } from "../src/env/sandbox/bubblewrap.js";
import { ContainerSandbox, connectDocker, SANDBOX_LABEL } from "../src/env/sandbox/container.js";
import type { SandboxExecRequest, SandboxV1 } from "../src/env/sandbox/types.js";

const hasBwrap = findOnPath("bwrap") !== null;
const cpuTreeV1 = existsSync("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
const engine = await connectDocker({ timeoutMs: 2_000 }).catch(() => undefined);

const MiB = 1024 * 1024;
const repoName = "calc";
const mountPath = `/workspace/${repoName}`;
let root: string;
let workspace: string;
let server: Server;
let serverPort: number;
let otherServer: Server;
let otherPort: number;

const PYTEST_FILE = `
import os
from calc import add

def test_add():
    assert add(2, 3) == 5

def test_fixed_path():
    with open("${mountPath}/data.txt") as handle:
        assert handle.read().strip() == "forty-two"
    assert os.getcwd() == "${mountPath}"

def test_deliberately_failing():
    assert add(2, 2) == 5
`;

const NODE_TEST_FILE = `
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

test("adds", () => assert.equal(2 + 3, 5));
test("reads the fixed path", () =>
  assert.equal(readFileSync("${mountPath}/data.txt", "utf8").trim(), "forty-two"));
test("fails on purpose", () => assert.equal(2 + 2, 5));
`;

function listen(body: string): Promise<Server> {
  const created = createServer((_request, response) => response.end(body));
  return new Promise((resolve) => created.listen(0, "127.0.0.1", () => resolve(created)));
}

beforeAll(async () => {
  root = join(tmpdir(), `skillsmith-sandbox-test-${randomBytes(4).toString("hex")}`);
  workspace = join(root, repoName);
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "calc.py"), "def add(a, b):\n    return a + b\n");
  writeFileSync(join(workspace, "data.txt"), "forty-two\n");
  writeFileSync(join(workspace, "test_calc.py"), PYTEST_FILE);
  writeFileSync(join(workspace, "calc.test.mjs"), NODE_TEST_FILE);
  server = await listen("hello from the host");
  serverPort = (server.address() as AddressInfo).port;
  otherServer = await listen("not for the sandbox");
  otherPort = (otherServer.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => otherServer.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

function request(
  overrides: Partial<SandboxExecRequest> & Pick<SandboxExecRequest, "command">,
): SandboxExecRequest {
  return {
    workspace,
    workspaceMountPath: mountPath,
    network: "none",
    limits: { timeoutMs: 30_000 },
    ...overrides,
  };
}

/** Host processes whose command line contains the marker (the sandbox's are visible from here). */
function hostProcessesWith(marker: string): string[] {
  const listing = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
  return listing.split("\n").filter((line) => line.includes(marker) && !line.includes("ps -eo"));
}

const pythonConnect = (port: number) =>
  [
    "python3",
    "-c",
    `import socket, sys
try:
    socket.create_connection(("127.0.0.1", ${port}), timeout=3).close()
    print("connected")
except OSError as error:
    print("refused", type(error).__name__)
    sys.exit(7)`,
  ] as const;

const backends: { name: string; available: boolean; missing: string; make: () => SandboxV1 }[] = [
  {
    name: "bubblewrap",
    available: hasBwrap,
    missing: "bwrap not installed",
    make: () => new BubblewrapSandbox(),
  },
  {
    name: "container",
    available: engine !== undefined,
    missing: "no Docker/Podman API socket",
    make: () => {
      if (engine === undefined) throw new Error("no Docker/Podman API socket");
      return new ContainerSandbox({ docker: engine.docker });
    },
  },
];

for (const backend of backends) {
  describe(`${backend.name} sandbox${backend.available ? "" : ` (skipped: ${backend.missing})`}`, () => {
    const sandbox = () => backend.make();

    it.skipIf(!backend.available)(
      "runs a pytest file at /workspace/<repo>: 2 passed, 1 failed",
      async () => {
        const result = await sandbox().exec(
          request({
            command: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calc.py"],
          }),
        );
        expect(result.exitCode).toBe(1);
        expect(result.stdout).toMatch(/\b1 failed, 2 passed\b/);
        expect(result.stdout).toContain("test_deliberately_failing");
        expect(result.timedOut).toBe(false);
      },
    );

    it.skipIf(!backend.available)("runs a node:test file: pass 2, fail 1", async () => {
      const result = await sandbox().exec(
        request({ command: ["node", "--test", "--test-reporter=tap", "calc.test.mjs"] }),
      );
      expect(result.exitCode).toBe(1);
      expect(result.stdout).toMatch(/^# pass 2$/m);
      expect(result.stdout).toMatch(/^# fail 1$/m);
      expect(result.stdout).toMatch(/^not ok \d+ - fails on purpose$/m);
    });

    it.skipIf(!backend.available)(
      "writes in the workspace reach the host; stdin and exit codes pass through",
      async () => {
        const result = await sandbox().exec(
          request({
            command: ["sh", "-c", "cat > written.txt; echo to-stderr >&2; exit 3"],
            input: "typed in\n",
          }),
        );
        expect(result.exitCode).toBe(3);
        expect(result.stderr).toBe("to-stderr\n");
        expect(readFileSync(join(workspace, "written.txt"), "utf8")).toBe("typed in\n");
        rmSync(join(workspace, "written.txt"));
      },
    );

    it.skipIf(!backend.available)(
      "network none: the host's 127.0.0.1 server is unreachable inside",
      async () => {
        const fromHost = await fetch(`http://127.0.0.1:${serverPort}/`).then((response) =>
          response.text(),
        );
        expect(fromHost).toBe("hello from the host");
        const result = await sandbox().exec(request({ command: pythonConnect(serverPort) }));
        expect(result.stdout).toMatch(/^refused /);
        expect(result.exitCode).toBe(7);
      },
    );

    it.skipIf(!backend.available)(
      "network loopback: only the listed host port is reachable",
      async () => {
        const result = await sandbox().exec(
          request({
            network: "loopback",
            loopbackPorts: [serverPort],
            command: [
              "python3",
              "-c",
              `import urllib.request, socket
print(urllib.request.urlopen("http://127.0.0.1:${serverPort}/", timeout=5).read().decode())
try:
    socket.create_connection(("127.0.0.1", ${otherPort}), timeout=3).close()
    print("other reachable")
except OSError:
    print("other refused")`,
            ],
          }),
        );
        expect(result.stderr).toBe("");
        expect(result.stdout).toBe("hello from the host\nother refused\n");
        expect(result.exitCode).toBe(0);
      },
    );

    it.skipIf(!backend.available)(
      "the host stays untouched: /usr writes never land on the host, /tmp is private",
      async () => {
        const marker = `skillsmith-probe-${randomBytes(4).toString("hex")}`;
        const hostTmpFile = join("/tmp", marker);
        writeFileSync(hostTmpFile, "host only");
        try {
          const result = await sandbox().exec(
            request({
              command: [
                "sh",
                "-c",
                `touch /usr/local/${marker} 2>/dev/null && echo usr-writable || echo usr-readonly
test -e /tmp/${marker} && echo host-tmp-visible || echo host-tmp-hidden
echo inside > /tmp/${marker}-inside && echo tmp-writable`,
              ],
            }),
          );
          expect(existsSync(`/usr/local/${marker}`)).toBe(false);
          expect(existsSync(`/tmp/${marker}-inside`)).toBe(false);
          expect(result.stdout).toContain("host-tmp-hidden\ntmp-writable\n");
          // bubblewrap shows the host's /usr read-only; a container has its own root file system.
          expect(result.stdout.split("\n")[0]).toBe(
            backend.name === "bubblewrap" ? "usr-readonly" : "usr-writable",
          );
        } finally {
          rmSync(hostTmpFile, { force: true });
          rmSync(`/usr/local/${marker}`, { force: true });
        }
      },
    );

    it.skipIf(!backend.available)("a memory hog is killed at a 256 MiB limit", async () => {
      const result = await sandbox().exec(
        request({
          command: ["python3", "-c", "x = bytearray(2 * 1024**3)\nprint('allocated')"],
          limits: { timeoutMs: 30_000, memoryBytes: 256 * MiB },
        }),
      );
      expect(result.stdout).not.toContain("allocated");
      expect(result.timedOut).toBe(false);
      // Both backends read the group's own OOM counter (Podman over cgroup v1 does not report
      // OOMKilled itself), so the hit is known and named.
      expect(result.oomKilled).toBe(true);
      expect(result.limitHit?.limit).toBe("memory");
      expect(result.limitHit?.detail).toContain("256 MiB");
    });

    // Needs a cpu controller (cgroup v1's cpu tree on this machine kind); a v2 host skips it.
    it.skipIf(!backend.available || !cpuTreeV1)(
      "a CPU quota of 0.2 cores throttles a busy loop",
      async () => {
        // The sandbox shows no /sys, so the quota is measured by its effect: a loop spinning for
        // 1.5 s of wall time gets at most about 0.2 × 1.5 = 0.3 s of CPU; unthrottled on an idle
        // core it would get close to 1.5 s. Half the wall time separates the two.
        const result = await sandbox().exec(
          request({
            command: [
              "python3",
              "-c",
              "import time\nstart = time.time()\nwhile time.time() - start < 1.5: pass\nprint(time.process_time())",
            ],
            limits: { timeoutMs: 20_000, cpus: 0.2 },
          }),
        );
        expect(result.stderr).toBe("");
        const cpuSeconds = Number(result.stdout.trim());
        expect(cpuSeconds).toBeGreaterThan(0);
        expect(cpuSeconds).toBeLessThan(0.75);
      },
    );

    it.skipIf(!backend.available)(
      "a bounded fork bomb is stopped by the process limit",
      async () => {
        const marker = `31.${Date.now() % 100_000}${randomBytes(2).readUInt16BE()}`;
        const result = await sandbox().exec(
          request({
            command: [
              "python3",
              "-c",
              `import os
forked = 0
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execvp("sleep", ["sleep", "${marker}"])
    forked += 1
print(forked)`,
            ],
            limits: { timeoutMs: 30_000, maxProcesses: 32 },
          }),
        );
        expect(result.timedOut).toBe(false);
        const forked = Number(result.stdout.trim());
        expect(forked).toBeGreaterThan(0);
        expect(forked).toBeLessThan(32);
        expect(result.limitHit?.limit).toBe("processes");
        expect(result.limitHit?.detail).toContain("process limit of 32");
        // The sleepers die with the sandbox, not 31 s later.
        expect(hostProcessesWith(`sleep ${marker}`)).toEqual([]);
      },
    );

    it.skipIf(!backend.available)(
      "a request without limits still gets the default process limit (512), filled with threads",
      async () => {
        // The limit counts tasks, threads included, so one python process starting 600 sleeping
        // threads meets it as surely as 600 forked sleepers would, without forking and reaping
        // hundreds of processes (which took 20-30 s on a loaded two-core machine). Small stacks
        // keep 512 threads far below the default memory limit (RLIMIT_DATA counts their stacks).
        const result = await sandbox().exec(
          request({
            command: [
              "python3",
              "-c",
              `import _thread, threading, time
threading.stack_size(256 * 1024)
started = 0
for _ in range(600):
    try:
        _thread.start_new_thread(time.sleep, (30,))
    except RuntimeError:
        break
    started += 1
print(started, flush=True)`,
            ],
            limits: { timeoutMs: 60_000 },
          }),
        );
        expect(result.timedOut).toBe(false);
        const started = Number(result.stdout.trim());
        expect(started).toBeGreaterThan(400);
        expect(started).toBeLessThan(512);
        expect(result.limitHit?.limit).toBe("processes");
        expect(result.limitHit?.detail).toContain("process limit of 512");
      },
    );

    it.skipIf(!backend.available)(
      "a timeout kills the whole tree and leaves nothing behind",
      async () => {
        const marker = `300.${randomBytes(3).readUIntBE(0, 3)}`;
        const started = performance.now();
        const result = await sandbox().exec(
          request({
            command: ["sh", "-c", `sleep ${marker} & sleep ${marker} & wait`],
            limits: { timeoutMs: 1_000 },
          }),
        );
        expect(result.timedOut).toBe(true);
        expect(result.limitHit?.limit).toBe("time");
        // Well past any slow container start on a loaded machine, well short of the sleepers' 300 s.
        expect(performance.now() - started).toBeLessThan(90_000);
        expect(hostProcessesWith(`sleep ${marker}`)).toEqual([]);
        if (engine !== undefined && backend.name === "container") {
          const leftovers = await engine.docker.listContainers({
            all: true,
            filters: { label: [SANDBOX_LABEL] },
          });
          expect(leftovers.filter((container) => container.Command.includes(marker))).toEqual([]);
        }
      },
    );
  });
}
