/**
 * What a sandboxed workload can see of the host, in both real sandboxes (bubblewrap and
 * containers over the Docker Engine API): planted files in the home folder and in a folder
 * outside /tmp (where the default cache lives), credential files of /etc, key variables of the
 * caller's environment. Each probe prints `FOUND <what>` for anything it could read; the
 * expectations are written by hand: nothing is found, the workspace and an explicit read-only
 * mount are usable, and `python3` is the system's.
 *
 * Before this test existed, bubblewrap bound the whole host read-only (`--ro-bind / /`): the same
 * probe found /etc/shadow, /root's files and the cache folder, and PATH led to pyenv's shims.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BubblewrapSandbox, findOnPath } from "../src/env/sandbox/bubblewrap.js";
import type { SandboxExecRequest, SandboxV1 } from "../src/env/sandbox/types.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import { availableContainerSandbox } from "./support/sandboxes.js";

const hasBwrap = findOnPath("bwrap") !== null;
const container = await availableContainerSandbox();

const marker = randomBytes(6).toString("hex");
const secretValue = `planted-secret-${marker}`;
const keyVariable = `SKILLSMITH_PROBE_${marker.toUpperCase()}_API_KEY`;
let root: string;
let workspace: string;
let readOnlyFolder: string;
let homeFile: string;
let outsideTmp: string;

beforeAll(() => {
  root = join(tmpdir(), `skillsmith-confine-${marker}`);
  workspace = join(root, "repo");
  readOnlyFolder = join(root, "venv");
  mkdirSync(workspace, { recursive: true });
  mkdirSync(join(readOnlyFolder, "bin"), { recursive: true });
  writeFileSync(join(readOnlyFolder, "bin", "tool"), "#!/bin/sh\necho tool-ran\n", { mode: 0o755 });
  homeFile = join(homedir(), `.skillsmith-probe-${marker}`);
  writeFileSync(homeFile, secretValue);
  // Like the default cache (~/.cache/skillsmith): outside /tmp, where workspaces of other runs live.
  outsideTmp = join(homedir(), ".cache", `skillsmith-probe-${marker}`);
  mkdirSync(join(outsideTmp, "workspaces", "other-run"), { recursive: true });
  writeFileSync(join(outsideTmp, "workspaces", "other-run", "answer.txt"), secretValue);
  process.env[keyVariable] = secretValue;
});

afterAll(() => {
  removeHostKeys();
  delete process.env[keyVariable];
  rmSync(root, { recursive: true, force: true });
  rmSync(homeFile, { force: true });
  rmSync(outsideTmp, { recursive: true, force: true });
});

/** sha256 of a host file, or undefined when it is missing or unreadable. */
function hostDigest(path: string): string | undefined {
  try {
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch {
    return undefined;
  }
}

/**
 * A shell probe printing `FOUND <what>` for every host secret it can read: the planted files,
 * the host's own credential files (by content: a container image has files of the same names,
 * its own), key variables, and the planted value anywhere it can search.
 */
function probeScript(searchEverywhere = true): string {
  const planted = [homeFile, join(outsideTmp, "workspaces", "other-run", "answer.txt")];
  const credentialFiles = ["/etc/shadow", "/etc/gshadow", "/etc/sudoers"].flatMap((path) => {
    const digest = hostDigest(path);
    return digest === undefined ? [] : [`${digest}  ${path}`];
  });
  return [
    `for target in ${planted.map((target) => `'${target}'`).join(" ")}; do`,
    '  if [ -e "$target" ]; then echo "FOUND $target"; fi',
    "done",
    ...credentialFiles.map(
      (line) =>
        `echo '${line}' | sha256sum -c --status 2>/dev/null && echo 'FOUND host ${line.split("  ")[1]}'`,
    ),
    "env | grep -i -E 'key|token|secret' | sed 's/^/FOUND variable /'",
    // Every folder but the kernel's and the system's programs (the probe's own command line,
    // under /proc, holds the value it searches for).
    ...(searchEverywhere
      ? [
          "for folder in /*; do case $folder in /proc|/sys|/dev|/usr|/bin|/sbin|/lib*) ;; *)",
          `  grep -r -l '${secretValue}' "$folder" 2>/dev/null | sed 's/^/FOUND value in /';;`,
          "esac; done",
        ]
      : []),
    'echo "PATH=$PATH"',
    'echo "python3=$(command -v python3)"',
    "echo probe-done",
  ].join("\n");
}

const backends: { name: string; available: boolean; missing: string; make: () => SandboxV1 }[] = [
  {
    name: "bubblewrap",
    available: hasBwrap,
    missing: "bwrap not installed",
    make: () => new BubblewrapSandbox(),
  },
  {
    name: "container",
    available: container !== undefined,
    missing: "no Docker/Podman API socket or no base image",
    make: () => {
      if (container === undefined) throw new Error("no container sandbox");
      return container;
    },
  },
];

function request(overrides: Partial<SandboxExecRequest>): SandboxExecRequest {
  return {
    command: ["sh", "-c", probeScript()],
    workspace,
    workspaceMountPath: "/workspace/repo",
    network: "none",
    limits: { timeoutMs: 60_000 },
    ...overrides,
  };
}

/**
 * Adds a key named after the marker to the user keyring and to the session keyring, printing
 * `added <keyring>` for each that took it. Keyrings are confined by no namespace: a key added
 * inside outlives the sandbox, where the next run (or the host) can read it.
 */
const keyringProbe = [
  "import ctypes, sys",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "add_key = {'x86_64': 248, 'aarch64': 217}[__import__('platform').machine()]",
  "for name, ring in (('user', -4), ('session', -3)):",
  `    if libc.syscall(add_key, b"user", b"skillsmith-probe-${marker}-" + name.encode(), b"1", 1, ring) > 0:`,
  "        print('added', name)",
  "    else:",
  "        print('refused', name, ctypes.get_errno())",
].join("\n");

/** The ids of keys on the host whose description names the marker (removed by the caller). */
function hostKeys(): string[] {
  try {
    return readFileSync("/proc/keys", "utf8")
      .split("\n")
      .filter((line) => line.includes(`skillsmith-probe-${marker}`))
      .map((line) => line.split(" ")[0] ?? "");
  } catch {
    return [];
  }
}

/** Invalidates the marker's keys on the host (keyctl 21, KEYCTL_INVALIDATE). */
function removeHostKeys(): void {
  const ids = hostKeys();
  if (ids.length === 0) return;
  execFileSync("python3", [
    "-c",
    `import ctypes\nfor key in ${JSON.stringify(ids)}:\n    ctypes.CDLL(None).syscall({'x86_64': 250, 'aarch64': 219}[__import__('platform').machine()], 21, int(key, 16))`,
  ]);
}

describe("the probe itself", () => {
  it("finds the planted files, the host's shadow file and the key variable when nothing confines it", async () => {
    // The control: without a sandbox the same probe must see everything, or its silence above
    // would prove nothing (the search of the whole host is left out: it would take minutes).
    const result = await new UnsafeSandbox().exec(
      request({
        command: ["sh", "-c", probeScript(false)],
        // The unsafe pass-through drops credential variables; hand this one over explicitly.
        env: { [keyVariable]: secretValue },
      }),
    );
    const found = result.stdout.split("\n").filter((line) => line.startsWith("FOUND"));
    expect(found).toContain(`FOUND ${homeFile}`);
    expect(found).toContain(`FOUND ${join(outsideTmp, "workspaces", "other-run", "answer.txt")}`);
    if (hostDigest("/etc/shadow") !== undefined) expect(found).toContain("FOUND host /etc/shadow");
    expect(found.some((line) => line.startsWith(`FOUND variable ${keyVariable}=`))).toBe(true);
  });

  it("adds keys that outlive it to the host's keyrings when nothing confines it", async () => {
    try {
      const result = await new UnsafeSandbox().exec(
        request({ command: ["python3", "-c", keyringProbe] }),
      );
      expect(result.stdout.trim().split("\n")).toEqual(["added user", "added session"]);
      expect(hostKeys().length).toBeGreaterThan(0);
    } finally {
      removeHostKeys();
    }
  });
});

for (const backend of backends) {
  describe(`${backend.name} confinement${backend.available ? "" : ` (skipped: ${backend.missing})`}`, () => {
    it.skipIf(!backend.available)(
      "shows no home, cache, credential file or key variable of the host",
      async () => {
        const result = await backend.make().exec(request({}));
        expect(result.stdout).toContain("probe-done");
        expect(result.stdout.split("\n").filter((line) => line.startsWith("FOUND"))).toEqual([]);
        // No PATH entry leads into a hidden folder; python3 is the system's (with pytest).
        const path = /^PATH=(.*)$/m.exec(result.stdout)?.[1] ?? "";
        // (bubblewrap adds its own alias folder, where `python` means the system's python3.)
        for (const entry of path.split(":")) {
          expect(entry).toMatch(/^\/(usr|bin|sbin)(\/|$)|^\/run\/skillsmith-bin$/);
        }
        expect(result.stdout).toMatch(/^python3=\/usr\/(local\/)?bin\/python3$/m);
      },
    );

    it.skipIf(!backend.available)(
      "the kernel keyring is out of reach: no key added inside outlives the sandbox",
      async () => {
        const result = await backend
          .make()
          .exec(request({ command: ["python3", "-c", keyringProbe] }));
        // Refused for both keyrings: EPERM from bubblewrap's filter, ENOSYS from the engine's.
        expect(result.stdout.trim().replace(/ \d+$/gm, "").split("\n")).toEqual([
          "refused user",
          "refused session",
        ]);
        expect(hostKeys()).toEqual([]);
      },
    );

    it.skipIf(!backend.available || backend.name !== "bubblewrap")(
      "bubblewrap shows no user folder of the host at all, and a curated /etc",
      async () => {
        const result = await backend.make().exec(
          request({
            command: [
              "sh",
              "-c",
              "for path in /root /home /work /opt /srv /mnt /var/lib /etc/shadow /etc/gshadow /etc/sudoers /etc/ssh /etc/environment; do [ -e $path ] && echo $path; done; [ -r /etc/passwd ] && echo passwd-readable; true",
            ],
          }),
        );
        expect(result.stdout.trim().split("\n")).toEqual(["passwd-readable"]);
      },
    );

    it.skipIf(!backend.available)(
      "a read-only extra mount can be run and read but not written",
      async () => {
        const result = await backend.make().exec(
          request({
            command: [
              "sh",
              "-c",
              "/opt/venv/bin/tool; if touch /opt/venv/written 2>/dev/null; then echo writable; else echo read-only; fi; echo ok > /workspace/repo/from-inside.txt && echo workspace-writable",
            ],
            extraMounts: [{ hostPath: readOnlyFolder, sandboxPath: "/opt/venv", readOnly: true }],
          }),
        );
        expect(result.stdout.split("\n").slice(0, 3)).toEqual([
          "tool-ran",
          "read-only",
          "workspace-writable",
        ]);
      },
    );
  });
}
