/**
 * A verifier-time `pip install -r requirements/dev.txt` whose requirement is a git URL, served from a
 * mirror setup cloned into the environment, in the real bubblewrap sandbox and without any
 * outside network: the git host is a local HTTP server on the loopback (git's "dumb" HTTP
 * protocol over a real bare repository of a tiny Python package), setup reaches it as "online"
 * and mirrors it, then a verifier run with no network installs the package at the tag the
 * requirement names (pip's own `git clone` redirected to the mirror by git configuration) and
 * imports it. Prepared with setup offline, the check says the verifier needs the network, naming
 * the URL, file and line. Skipped without bubblewrap, Debian's python3 with pip, or Debian's
 * setuptools wheel (setup's wheels come from it: there is no index on the loopback).
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess } from "../src/core/process.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import {
  findTestTimeInstalls,
  testTimeNetworkProblem,
} from "../src/env/setup/test-time-installs.js";
import { prepareBase } from "../src/env/workspace/prepare.js";
import { committedRepository, git } from "./support/git.js";
import { runOffline } from "./support/offline-run.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot } from "./support/suites.js";

const sandbox = await usableBubblewrap();
const python = "/usr/bin/python3";
const debianWheels = "/usr/share/python-wheels";
const usable =
  existsSync(python) &&
  existsSync(debianWheels) &&
  (await runProcess(python, ["-m", "pip", "--version"])).exitCode === 0 &&
  (await runProcess("sh", ["-c", `ls ${debianWheels}/setuptools-*.whl`])).exitCode === 0;

/** The verifier's helper installs the repository's requirement file, as celery's does. */
const VERIFIER = [
  "import subprocess, sys, pytest",
  "",
  "@pytest.fixture(autouse=True)",
  "def deps():",
  '    subprocess.run([sys.executable, "-m", "pip", "install", "-r", "requirements/dev.txt"], check=True)',
  "",
  "def test_probe():",
  "    import probe_git",
  "",
].join("\n");

let root: string;
let server: Server;
let host: string;
/** Paths the git host answered: setup's clone, and none from a run. */
const requests: string[] = [];
/** The commit tag v1 of probe names: what the manifest must record. */
let taggedCommit = "";

/** A bare repository of package probe-git: tag v1 has VERSION "1", main moved on to "2". */
async function packageRepository(name: string): Promise<void> {
  const work = join(root, "work", name);
  await mkdir(join(work, "probe_git"), { recursive: true });
  await writeFile(
    join(work, "pyproject.toml"),
    [
      "[build-system]",
      'requires = ["setuptools>=40"]',
      'build-backend = "setuptools.build_meta"',
      "",
      "[project]",
      `name = "probe-git"`,
      'version = "0.1"',
      "",
    ].join("\n"),
  );
  await writeFile(join(work, "probe_git", "__init__.py"), 'VERSION = "1"\n');
  await git(work, "init", "-q", "-b", "main");
  await git(work, "add", "-A");
  await git(work, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "v1");
  await git(work, "tag", "v1");
  if (name === "probe") {
    taggedCommit = (await runProcess("git", ["-C", work, "rev-parse", "HEAD"])).stdout.trim();
  }
  await writeFile(join(work, "probe_git", "__init__.py"), 'VERSION = "2"\n');
  await git(work, "-c", "commit.gpgsign=false", "commit", "-q", "-am", "v2");
  const bare = join(root, "served", `${name}.git`);
  const cloned = await runProcess("git", ["clone", "-q", "--bare", work, bare]);
  expect(cloned.exitCode, cloned.stderr).toBe(0);
  // The "dumb" HTTP protocol: git reads info/refs and objects as plain files.
  await git(bare, "update-server-info");
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-git-mirror-"));
  if (!usable) return;
  await packageRepository("probe");
  // Another repository on the same host that no requirement names: runs cannot reach it.
  await packageRepository("other");
  const served = join(root, "served");
  server = createServer(async (request, response) => {
    const path = normalize(decodeURIComponent((request.url ?? "/").split("?")[0] ?? "/"));
    requests.push(path);
    const file = join(served, path);
    if (!file.startsWith(served) || !(await stat(file).catch(() => undefined))?.isFile()) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200).end(await readFile(file));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  host = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
});

afterAll(async () => {
  await new Promise((resolve) =>
    server === undefined ? resolve(undefined) : server.close(resolve),
  );
  await removeRunRoot(root);
});

/** The repository under test: its requirement file names probe-git at tag v1 on the host. */
function repository(name: string): Promise<string> {
  // Not the top-level requirements.txt: setup's own install would install it into the
  // environment, and pip reinstalls a URL requirement there is already (see the report).
  return committedRepository(join(root, name), {
    "requirements.txt": "\n",
    "requirements/dev.txt": `probe-git @ git+${host}/probe.git@v1#egg=probe-git\n`,
  });
}

const INSTALL = `python -m pip install -q -r requirements/dev.txt && python -c 'import probe_git; print("probe-git", probe_git.VERSION)'`;

describe.skipIf(sandbox === undefined || !usable)("git mirrors for verifier-time installs", () => {
  it("setup mirrors the git URL a requirement file names and a run installs it offline from the mirror; prepared offline, the check names the URL", async () => {
    const installs = findTestTimeInstalls([{ path: "test_probe.py", content: VERIFIER }]);
    expect(installs.map((install) => [install.command, install.scope])).toEqual([
      ["pip install -r requirements/dev.txt", "verifier"],
    ]);
    const common = {
      commit: "HEAD",
      setup: { kind: "detect" as const },
      sandbox: sandbox as SandboxV1,
      cacheDir: join(root, "cache"),
      pythonInterpreter: python,
      testTimeInstalls: installs,
      // No index on the loopback: setup's wheels (setuptools, the build requirement) come from
      // Debian's wheel folder; only the git host is served over HTTP. Setup's own builds use
      // Debian's setuptools and wheel in place (that folder has no wheel of `wheel`).
      setupEnv: { PIP_NO_INDEX: "1", PIP_FIND_LINKS: debianWheels, PIP_NO_BUILD_ISOLATION: "0" },
    };

    const online = await prepareBase({
      ...common,
      source: await repository("repo-online"),
      setupNetwork: "on",
    });
    const cache = online.setup?.caches?.find((record) => record.installer === "pip");
    const served = cache?.installs[0];
    expect(served?.served).toBe("cache");
    expect(served?.mirrors?.map((mirror) => [mirror.url, mirror.ref, mirror.where])).toEqual([
      [`${host}/probe.git`, "v1", "requirements/dev.txt:1"],
    ]);
    expect(taggedCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(served?.mirrors?.[0]?.commit).toBe(taggedCommit);
    for (const step of online.setupReport?.steps ?? []) {
      expect(step.outcome, `${step.command}\n${step.outputTail}`).toBe("ok");
    }
    expect(requests).toContain("/probe.git/info/refs");
    expect(requests.some((path) => path.startsWith("/other.git"))).toBe(false);
    const mirrorPath = served?.mirrors?.[0]?.path as string;
    // Only the mirrored URL is redirected, to its mirror: one key, fixed by setup.
    const env = online.runtime?.env ?? {};
    expect(
      Object.entries(env)
        .filter(([key]) => key.startsWith("GIT_CONFIG"))
        .sort(),
    ).toEqual([
      ["GIT_CONFIG_COUNT", "1"],
      ["GIT_CONFIG_KEY_0", `url.${mirrorPath}.insteadOf`],
      ["GIT_CONFIG_VALUE_0", `${host}/probe.git`],
    ]);
    expect(
      testTimeNetworkProblem(installs, {
        network: "online",
        caches: online.setup?.caches ?? [],
        steps: online.setupReport?.steps ?? [],
      }),
    ).toBeUndefined();

    const fetchedBySetup = requests.length;
    const run = await runOffline(sandbox as SandboxV1, online, INSTALL, { timeoutMs: 180_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    // The tag the requirement names, not the branch that moved on.
    expect(run.stdout).toContain("probe-git 1");
    expect(requests).toHaveLength(fetchedBySetup);

    // The mirror is read-only in runs, and another URL of the same host is not redirected (a
    // run has no network to reach it).
    const attack = await runOffline(
      sandbox as SandboxV1,
      online,
      `touch ${mirrorPath}/objects/planted; echo touch=$?; git clone -q ${host}/other.git /tmp/other; echo clone=$?`,
      { timeoutMs: 120_000 },
    );
    expect(attack.stdout).toMatch(/touch=[1-9]/);
    expect(attack.stdout).toMatch(/clone=[1-9]/);
    expect(existsSync(join(mirrorPath, "objects", "planted"))).toBe(false);
    expect(requests).toHaveLength(fetchedBySetup);

    const offline = await prepareBase({
      ...common,
      source: await repository("repo-offline"),
      cacheDir: join(root, "cache-offline"),
      setupNetwork: "off",
    });
    const problem = testTimeNetworkProblem(installs, {
      network: "offline",
      networkReason: "--no-setup-network",
      caches: offline.setup?.caches ?? [],
      steps: offline.setupReport?.steps ?? [],
    });
    expect(problem).toContain(
      `needs network at test time: test_probe.py:5 runs \`pip install -r requirements/dev.txt\`: requirements/dev.txt:1 names \`${host}/probe.git\`, which git clones at every install; setup mirrors it only with the network; setup ran offline (--no-setup-network)`,
    );
  }, 300_000);
});
