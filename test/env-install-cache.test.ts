/**
 * Verifier-time `pip install` served from the environment's wheel folder, in the real bubblewrap
 * sandbox and without any outside network: a package index is a local HTTP server on the
 * loopback (serving two tiny wheels built here), setup reaches it as "online" and fills the
 * folder, then a verifier run with no network installs the package from it. Prepared with setup
 * offline, the same install fails and the check's reason says the verifier needs the network at
 * test time. Skipped without bubblewrap or Debian's python3 with pip.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess } from "../src/core/process.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { readPythonIndexConfiguration } from "../src/env/setup/package-index.js";
import {
  findTestTimeInstalls,
  testTimeNetworkProblem,
} from "../src/env/setup/test-time-installs.js";
import { type PreparedBase, prepareBase } from "../src/env/workspace/prepare.js";
import { committedRepository } from "./support/git.js";
import { runOffline } from "./support/offline-run.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot } from "./support/suites.js";

const sandbox = await usableBubblewrap();
const python = "/usr/bin/python3";
const hasPip =
  existsSync(python) && (await runProcess(python, ["-m", "pip", "--version"])).exitCode === 0;

/** Writes a pure-Python wheel by hand (zip with METADATA, WHEEL and RECORD): no build tools. */
const WHEEL_WRITER = `
import base64, hashlib, os, sys, zipfile
dest, name, version, *requires = sys.argv[1:]
package = name.replace("-", "_")
dist = f"{package}-{version}"
files = {
    f"{package}/__init__.py": f"VERSION = {version!r}\\n",
    f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n"
    + "".join(f"Requires-Dist: {r}\\n" for r in requires),
    f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(text.encode())}")
record.append(f"{dist}.dist-info/RECORD,,")
files[f"{dist}.dist-info/RECORD"] = "\\n".join(record) + "\\n"
os.makedirs(dest, exist_ok=True)
with zipfile.ZipFile(os.path.join(dest, f"{dist}-py3-none-any.whl"), "w") as archive:
    for path, text in files.items():
        archive.writestr(path, text)
`;

/** The verifier: a fixture installs a package at test time, as v1's helpers do. */
const VERIFIER = [
  "import subprocess, sys, pytest",
  "",
  "@pytest.fixture(autouse=True)",
  "def deps():",
  '    subprocess.run([sys.executable, "-m", "pip", "install", "probe-a"], check=True)',
  "",
  "def test_probe():",
  "    import probe_a",
  "",
].join("\n");

let root: string;
let server: Server;
let indexUrl: string;
/** The same wheels as a folder on disk, the way a local PyPI mirror is laid out. */
let mirror: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-pip-cache-"));
  if (!hasPip) return;
  const index = join(root, "index");
  mirror = index;
  await writeFile(join(root, "wheel.py"), WHEEL_WRITER);
  // probe-a needs probe-b: the folder must hold what the install resolves, not only its name.
  // probe-c is on the index but no verifier names it: it never reaches the environment's cache.
  for (const [name, version, ...requires] of [
    ["probe-a", "1.0", "probe-b>=1"],
    ["probe-b", "1.2"],
    ["probe-c", "3.0"],
  ] as const) {
    const made = await runProcess(python, [
      join(root, "wheel.py"),
      join(index, name),
      name,
      version,
      ...requires,
    ]);
    expect(made.exitCode, made.stderr).toBe(0);
    // The same folder is also a local mirror (`file://` index, as pip reads one from disk).
    const wheels = (await readdir(join(index, name))).filter((file) => file.endsWith(".whl"));
    await writeFile(
      join(index, name, "index.html"),
      wheels.map((file) => `<a href="${file}">${file}</a>`).join("\n"),
    );
  }
  // A PEP 503 index: /<project>/ lists its files as links.
  server = createServer(async (request, response) => {
    const path = decodeURIComponent((request.url ?? "/").split("?")[0] ?? "/");
    const project = /^\/([\w-]+)\/$/.exec(path)?.[1];
    if (project !== undefined && existsSync(join(index, project))) {
      const links = (await readdir(join(index, project)))
        .filter((file) => file.endsWith(".whl"))
        .map((file) => `<a href="${file}">${file}</a>`)
        .join("\n");
      response
        .writeHead(200, { "content-type": "text/html" })
        .end(`<html><body>${links}</body></html>`);
      return;
    }
    const file = /^\/([\w-]+)\/([\w.-]+\.whl)$/.exec(path);
    if (file !== null && existsSync(join(index, file[1] ?? "", file[2] ?? ""))) {
      const { readFile } = await import("node:fs/promises");
      response.writeHead(200).end(await readFile(join(index, file[1] ?? "", file[2] ?? "")));
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  indexUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/`;
});

afterAll(async () => {
  await new Promise((resolve) =>
    server === undefined ? resolve(undefined) : server.close(resolve),
  );
  await removeRunRoot(root);
});

function repository(name = "repo"): Promise<string> {
  return committedRepository(join(root, name), {
    "README.md": "a repository whose verifier installs at test time\n",
  });
}

const INSTALL_PROBE_A =
  'python -m pip install probe-a && python -c "import probe_a, probe_b; print(probe_a.VERSION, probe_b.VERSION)"';

function installInVerifierRun(base: PreparedBase, script = INSTALL_PROBE_A) {
  return runOffline(sandbox as SandboxV1, base, script, { timeoutMs: 120_000 });
}

describe.skipIf(sandbox === undefined || !hasPip)(
  "pip wheel cache for verifier-time installs",
  () => {
    it("fills the wheel folder during setup and serves `pip install` offline; without it, the install needs the network", async () => {
      const installs = findTestTimeInstalls([{ path: "test_probe.py", content: VERIFIER }]);
      expect(installs.map((install) => [install.command, install.scope])).toEqual([
        ["pip install probe-a", "verifier"],
      ]);
      const source = await repository();
      const common = {
        source,
        commit: "HEAD",
        setup: { kind: "detect" as const },
        sandbox: sandbox as SandboxV1,
        cacheDir: join(root, "cache"),
        verifierNeedsPython: true,
        pythonInterpreter: python,
        testTimeInstalls: installs,
        // The loopback index stands in for PyPI; the verifier runs never see it.
        setupEnv: { PIP_INDEX_URL: indexUrl },
      };

      const online = await prepareBase({ ...common, setupNetwork: "on" });
      const cache = online.setup?.caches?.find((record) => record.installer === "pip");
      expect(cache?.installs.map((install) => install.served)).toEqual(["cache"]);
      expect(online.runtime?.env.PIP_NO_INDEX).toBe("1");
      expect(online.runtime?.env.PIP_FIND_LINKS).toBe(cache?.path);
      const filled = online.setupReport?.steps.find((step) => step.command.includes("pip wheel"));
      expect(filled?.outcome, filled?.outputTail).toBe("ok");
      expect((await readdir(join(online.root, "env", "pip-wheels"))).sort()).toEqual([
        "probe_a-1.0-py3-none-any.whl",
        "probe_b-1.2-py3-none-any.whl",
      ]);
      const served = await installInVerifierRun(online);
      expect(served.exitCode, served.stderr).toBe(0);
      expect(served.stdout).toContain("1.0 1.2");
      expect(
        testTimeNetworkProblem(installs, {
          network: "online",
          caches: online.setup?.caches ?? [],
          steps: online.setupReport?.steps ?? [],
        }),
      ).toBeUndefined();

      const offline = await prepareBase({ ...common, setupNetwork: "off" });
      expect(offline.setup?.caches?.[0]?.installs.map((install) => install.served)).toEqual([
        "offline",
      ]);
      const unserved = await installInVerifierRun(offline);
      expect(unserved.exitCode).not.toBe(0);
      expect(unserved.stdout + unserved.stderr).toMatch(
        /No matching distribution found for probe-a/,
      );
      expect(
        testTimeNetworkProblem(installs, {
          network: "offline",
          networkReason: "--no-setup-network",
          caches: offline.setup?.caches ?? [],
          steps: offline.setupReport?.steps ?? [],
        }),
      ).toMatch(
        /^needs network at test time: test_probe\.py:5 runs `pip install probe-a`; setup ran offline/,
      );
    }, 300_000);

    it("takes the user's local mirror from their pip configuration for setup only: a run cannot reach it, even by naming it", async () => {
      // The user's own pip configuration, as pip reads it from their home folder.
      const home = join(root, "home");
      await mkdir(join(home, ".config", "pip"), { recursive: true });
      await writeFile(
        join(home, ".config", "pip", "pip.conf"),
        `[global]\nindex-url = file://${mirror}\n`,
      );
      const pythonIndex = await readPythonIndexConfiguration({ HOME: home });
      const installs = findTestTimeInstalls([{ path: "test_probe.py", content: VERIFIER }]);
      const base = await prepareBase({
        source: await repository("repo-mirror"),
        commit: "HEAD",
        setup: { kind: "detect" },
        sandbox: sandbox as SandboxV1,
        cacheDir: join(root, "cache-mirror"),
        verifierNeedsPython: true,
        pythonInterpreter: python,
        testTimeInstalls: installs,
        pythonIndex,
      });
      // `auto`: the mirror folder answers for the network.
      expect(base.setupReport?.network).toBe("online");
      expect(base.setupReport?.networkReason).toContain(
        `file://${mirror} is a folder on this machine`,
      );
      const filled = base.setupReport?.steps.find((step) => step.command.includes("pip wheel"));
      expect(filled?.outcome, filled?.outputTail).toBe("ok");
      const served = await installInVerifierRun(base);
      expect(served.exitCode, served.stderr).toBe(0);
      expect(served.stdout).toContain("1.0 1.2");

      // The attack: a verifier installs what is on the mirror but not in the cache, first as
      // the run's pip is configured, then naming the mirror itself. Both must fail offline.
      const fromCache = await installInVerifierRun(base, "python -m pip install probe-c");
      expect(fromCache.exitCode).not.toBe(0);
      expect(fromCache.stdout + fromCache.stderr).toMatch(
        /No matching distribution found for probe-c/,
      );
      const naming = await installInVerifierRun(
        base,
        // Without the run's pip settings, so only the mirror's absence can stop it.
        `test ! -e ${mirror} && echo mirror-hidden; env -u PIP_NO_INDEX -u PIP_CONFIG_FILE python -m pip install --no-cache-dir --index-url file://${mirror} probe-c`,
      );
      expect(naming.stdout).toContain("mirror-hidden");
      expect(naming.exitCode).not.toBe(0);
      expect(naming.stdout + naming.stderr).toMatch(/No matching distribution found for probe-c/);
    }, 300_000);
  },
);
