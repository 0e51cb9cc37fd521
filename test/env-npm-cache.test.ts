/**
 * Verifier-time `npm ci` served from the environment's npm cache, in the real bubblewrap sandbox
 * and without any outside network: a package registry is a local HTTP server on the loopback
 * (serving two tiny packages made here, one depending on the other), setup reaches it as
 * "online" and its own `npm ci` fills the cache, then a verifier run with no network runs the
 * verifier's `npm ci --legacy-peer-deps` offline from it. Prepared with setup offline, the check
 * says the verifier needs the network at test time (before any agent time), and the install
 * itself fails at once with npm's ENOTCACHED instead of waiting out retries. Skipped without
 * bubblewrap, or without node and npm under /usr (the sandbox binds /usr). It needs no network:
 * the registry is on the loopback.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess } from "../src/core/process.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import {
  findTestTimeInstalls,
  testTimeNetworkProblem,
} from "../src/env/setup/test-time-installs.js";
import { prepareBase } from "../src/env/workspace/prepare.js";
import { committedRepository } from "./support/git.js";
import { runOffline } from "./support/offline-run.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot } from "./support/suites.js";

const sandbox = await usableBubblewrap();
// The sandbox binds /usr: node and npm must live under it (Debian's, or /usr/local's).
const toolchain = await runProcess("sh", [
  "-c",
  'for tool in node npm; do path=$(command -v "$tool") || exit 1; case $(readlink -f "$path") in /usr/*) ;; *) exit 1;; esac; done',
]);
const hasNpm = toolchain.exitCode === 0;

/** The verifier: a fixture installs the repository's locked tree, as v1's npm helper does. */
const VERIFIER = [
  "import subprocess, pytest",
  "",
  "@pytest.fixture(autouse=True)",
  "def deps():",
  '    subprocess.run(["npm", "ci", "--legacy-peer-deps"], cwd="/workspace/repo", check=True)',
  "",
  "def test_probe():",
  "    pass",
  "",
].join("\n");

interface Published {
  readonly name: string;
  readonly version: string;
  readonly dependencies: Record<string, string>;
  readonly tarball: Buffer;
  readonly integrity: string;
  readonly shasum: string;
}

let root: string;
let server: Server;
let registry: string;
/** Requests the registry answered, by path: setup's fetches, and none from a run. */
const requests: string[] = [];
const published = new Map<string, Published>();

/** A package tarball as npm makes one (`package/` prefix), with its sha512 integrity. */
async function publish(
  name: string,
  version: string,
  dependencies: Record<string, string>,
): Promise<void> {
  const folder = join(root, "packages", name, "package");
  await mkdir(folder, { recursive: true });
  await writeFile(
    join(folder, "package.json"),
    JSON.stringify({ name, version, main: "index.js", dependencies }),
  );
  const requires = Object.keys(dependencies)
    .map((dependency) => ` + " " + require(${JSON.stringify(dependency)})`)
    .join("");
  await writeFile(join(folder, "index.js"), `module.exports = "${name}@${version}"${requires};\n`);
  const file = join(root, "packages", `${name}-${version}.tgz`);
  const packed = await runProcess("tar", [
    "-czf",
    file,
    "-C",
    join(root, "packages", name),
    "package",
  ]);
  expect(packed.exitCode, packed.stderr).toBe(0);
  const tarball = await readFile(file);
  published.set(name, {
    name,
    version,
    dependencies,
    tarball,
    integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
    shasum: createHash("sha1").update(tarball).digest("hex"),
  });
}

function tarballUrl(item: Published): string {
  return `${registry}${item.name}/-/${item.name}-${item.version}.tgz`;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-npm-cache-"));
  if (!hasNpm) return;
  // probe-a needs probe-b: the cache must hold the locked tree, not only what the lock names at
  // the top. probe-c is on the registry but in no lock: it never reaches the environment's cache.
  await publish("probe-a", "1.0.0", { "probe-b": "^1.0.0" });
  await publish("probe-b", "1.2.0", {});
  await publish("probe-c", "3.0.0", {});
  server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? "/").split("?")[0] ?? "/");
    requests.push(path);
    const tarball = /^\/([\w-]+)\/-\/[\w.-]+\.tgz$/.exec(path);
    const item = published.get(tarball?.[1] ?? path.slice(1));
    if (item === undefined) {
      response.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
    } else if (tarball !== null) {
      response.writeHead(200, { "content-type": "application/octet-stream" }).end(item.tarball);
    } else {
      // The packument: what the registry says about every version of one package.
      response.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          name: item.name,
          "dist-tags": { latest: item.version },
          versions: {
            [item.version]: {
              name: item.name,
              version: item.version,
              dependencies: item.dependencies,
              dist: { tarball: tarballUrl(item), integrity: item.integrity, shasum: item.shasum },
            },
          },
        }),
      );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  registry = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/`;
});

afterAll(async () => {
  await new Promise((resolve) =>
    server === undefined ? resolve(undefined) : server.close(resolve),
  );
  await removeRunRoot(root);
});

/** A node repository whose lock file pins probe-a and its dependency probe-b at the registry. */
function repository(name: string): Promise<string> {
  const locked = (item: Published) => ({
    version: item.version,
    resolved: tarballUrl(item),
    integrity: item.integrity,
    ...(Object.keys(item.dependencies).length === 0 ? {} : { dependencies: item.dependencies }),
  });
  const a = published.get("probe-a") as Published;
  const b = published.get("probe-b") as Published;
  return committedRepository(join(root, name), {
    "package.json": JSON.stringify({
      name: "repo",
      version: "1.0.0",
      dependencies: { "probe-a": "1.0.0" },
    }),
    "package-lock.json": JSON.stringify({
      name: "repo",
      version: "1.0.0",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": { name: "repo", version: "1.0.0", dependencies: { "probe-a": "1.0.0" } },
        "node_modules/probe-a": locked(a),
        "node_modules/probe-b": locked(b),
      },
    }),
  });
}

/** What the verifier's fixture runs, then proof that the installed tree loads. */
const VERIFIER_INSTALL = `npm ci --legacy-peer-deps && node -e 'console.log(require("probe-a"))'`;

describe.skipIf(sandbox === undefined || !hasNpm)("npm cache for verifier-time installs", () => {
  it("setup's npm ci fills the cache and the verifier's npm ci is served from it offline; prepared offline, the check says it needs the network and npm fails at once", async () => {
    const installs = findTestTimeInstalls([{ path: "test_probe.py", content: VERIFIER }]);
    expect(installs.map((install) => [install.command, install.scope])).toEqual([
      ["npm ci --legacy-peer-deps", "verifier"],
    ]);
    const common = {
      commit: "HEAD",
      setup: { kind: "detect" as const },
      sandbox: sandbox as SandboxV1,
      cacheDir: join(root, "cache"),
      testTimeInstalls: installs,
      // The loopback registry stands in for registry.npmjs.org; verifier runs never see it.
      setupEnv: { npm_config_registry: registry },
    };

    const online = await prepareBase({
      ...common,
      source: await repository("repo-online"),
      setupNetwork: "on",
    });
    const cache = online.setup?.caches?.find((record) => record.installer === "npm");
    expect(cache?.installs.map((install) => [install.command, install.served])).toEqual([
      ["npm ci --legacy-peer-deps", "setup"],
    ]);
    expect(online.runtime?.env.npm_config_offline).toBe("true");
    expect(online.runtime?.env.npm_config_cache).toBe(cache?.path);
    const filled = online.setupReport?.steps.find((step) => step.command.startsWith("npm ci"));
    expect(filled?.outcome, filled?.outputTail).toBe("ok");
    expect(requests).toEqual(
      expect.arrayContaining(["/probe-a/-/probe-a-1.0.0.tgz", "/probe-b/-/probe-b-1.2.0.tgz"]),
    );
    expect(requests.some((path) => path.startsWith("/probe-c"))).toBe(false);
    const fetchedBySetup = requests.length;

    const served = await runOffline(sandbox as SandboxV1, online, VERIFIER_INSTALL, {
      timeoutMs: 120_000,
    });
    expect(served.exitCode, served.stderr).toBe(0);
    expect(served.stdout).toContain("probe-a@1.0.0 probe-b@1.2.0");
    // Served from the cache: the run made no request (it has no route to the registry).
    expect(requests).toHaveLength(fetchedBySetup);
    expect(
      testTimeNetworkProblem(installs, {
        network: "online",
        caches: online.setup?.caches ?? [],
        steps: online.setupReport?.steps ?? [],
      }),
    ).toBeUndefined();

    // A package the registry has but no lock names is not in the cache: a run cannot get it.
    const other = await runOffline(sandbox as SandboxV1, online, "npm install probe-c", {
      timeoutMs: 120_000,
    });
    expect(other.exitCode).not.toBe(0);
    expect(other.stdout + other.stderr).toMatch(/ENOTCACHED/);

    const offline = await prepareBase({
      ...common,
      source: await repository("repo-offline"),
      cacheDir: join(root, "cache-offline"),
      setupNetwork: "off",
    });
    expect(offline.setupReport?.network).toBe("offline");
    const problem = testTimeNetworkProblem(installs, {
      network: "offline",
      networkReason: "--no-setup-network",
      caches: offline.setup?.caches ?? [],
      steps: offline.setupReport?.steps ?? [],
    });
    expect(problem).toMatch(
      /^needs network at test time: test_probe\.py:5 runs `npm ci --legacy-peer-deps`; setup ran offline \(--no-setup-network\)/,
    );
    // Were it run anyway, npm's offline mode fails on the first miss: no retries, no timeout.
    const started = Date.now();
    const unserved = await runOffline(sandbox as SandboxV1, offline, VERIFIER_INSTALL, {
      timeoutMs: 120_000,
    });
    expect(unserved.exitCode).not.toBe(0);
    expect(unserved.stdout + unserved.stderr).toMatch(/ENOTCACHED/);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 300_000);
});
