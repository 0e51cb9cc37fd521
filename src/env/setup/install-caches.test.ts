import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lifecycleScripts, planInstallCaches } from "./install-caches.js";
import {
  findTestTimeInstalls,
  type TestTimeInstall,
  testTimeNetworkProblem,
} from "./test-time-installs.js";

let repository: string;

beforeAll(async () => {
  repository = await mkdtemp(join(tmpdir(), "skillsmith-caches-"));
  await mkdir(join(repository, "requirements"));
  await writeFile(join(repository, "requirements", "base.txt"), "attrs>=22\nrich\n");
  await writeFile(
    join(repository, "requirements", "dev.txt"),
    "vine>=5\ngit+https://github.com/celery/kombu.git\n",
  );
  // Included files, a direct reference, and URLs that are only comments or markers.
  await mkdir(join(repository, "requirements", "extras"));
  const files: Record<string, string> = {
    "ci.txt": "-r base.txt\nrequests  # https://docs.python-requests.org\n-r extras/pinned.txt\n",
    "extras/pinned.txt":
      "# pinned by hand\nattrs\namqp[test] @ git+https://github.com/celery/py-amqp.git@v5.3.1#egg=amqp  # fork\n",
    "outside.txt": "-r ../../elsewhere/requirements.txt\n-c base.txt\nrich\n",
    "hg.txt": "rich\nhg+https://hg.example.org/probe#egg=probe\n",
    "editable.txt": "-e git+https://github.com/celery/kombu.git#egg=kombu\n",
  };
  for (const [name, text] of Object.entries(files)) {
    await writeFile(join(repository, "requirements", name), text);
  }
});

afterAll(async () => {
  await rm(repository, { recursive: true, force: true });
});

/** A helper shaped like v1's `_dependency_utils.py`: the file is a variable, the names literals. */
function helper(files: string[]): TestTimeInstall[] {
  const content = [
    "import os, subprocess",
    "def ensure_python(repo_dir):",
    `    for relpath in [${files
      .map((file) =>
        file.includes("/")
          ? `os.path.join(${file
              .split("/")
              .map((part) => `"${part}"`)
              .join(", ")})`
          : `"${file}"`,
      )
      .join(", ")}]:`,
    "        fpath = os.path.join(repo_dir, relpath)",
    '        subprocess.run(["python", "-m", "pip", "install", "-r", fpath], check=True)',
    "",
  ].join("\n");
  return findTestTimeInstalls([
    {
      path: "test_a.py",
      content: "from helper import ensure_python\n\ndef test_a():\n    ensure_python('/w')\n",
    },
    { path: "helper.py", content },
  ]);
}

const online = {
  repository: "",
  network: "online" as const,
  environmentPath: "/env",
  primaryLanguage: "python",
};

describe("planInstallCaches", () => {
  it("fills a wheel folder with the packages a verifier's pip install names, and runs read only it", async () => {
    const installs = findTestTimeInstalls([
      {
        path: "test_x.py",
        content:
          "import subprocess\ndef test_x():\n    subprocess.run(['pip', 'install', '--quiet', 'celery', 'pytest'])\n",
      },
    ]);
    const plan = await planInstallCaches(installs, { ...online, repository });
    expect(plan.records).toEqual([
      {
        installer: "pip",
        path: "/env/pip-wheels",
        installs: [
          {
            installer: "pip",
            command: "pip install --quiet celery pytest",
            served: "cache",
            fill: ["python -m pip wheel --quiet --wheel-dir /env/pip-wheels celery pytest"],
          },
        ],
      },
    ]);
    expect(plan.steps.map((step) => step.command)).toEqual([
      "mkdir -p /env/pip-wheels",
      "python -m pip wheel --quiet --wheel-dir /env/pip-wheels celery pytest",
    ]);
    expect(plan.steps[1]?.optional).toBe(true);
    // No index and no pip configuration file: a user's or an image's pip.conf could name others.
    expect(plan.runEnv).toEqual({
      PIP_NO_INDEX: "1",
      PIP_FIND_LINKS: "/env/pip-wheels",
      PIP_CONFIG_FILE: "/dev/null",
    });
  });

  it("serves `pip install -r <variable>` from the requirement files the helper names that exist", async () => {
    const installs = helper(["requirements.txt", "requirements/base.txt"]);
    expect([...(installs[0]?.requirementFiles ?? [])].sort()).toEqual([
      "requirements.txt",
      "requirements/base.txt",
    ]);
    const plan = await planInstallCaches(installs, { ...online, repository });
    expect(plan.records[0]?.installs[0]?.fill).toEqual([
      "python -m pip wheel --quiet --wheel-dir /env/pip-wheels -r requirements/base.txt",
    ]);
  });

  it("follows included requirement files to a git direct reference, mirrors it at the ref it names, and reads no comment or file outside the repository as one", async () => {
    const included = await planInstallCaches(helper(["requirements/ci.txt"]), {
      ...online,
      repository,
    });
    const served = included.records[0]?.installs[0];
    expect(served?.served).toBe("cache");
    expect(served?.mirrors).toHaveLength(1);
    const mirror = served?.mirrors?.[0];
    expect(mirror).toMatchObject({
      url: "https://github.com/celery/py-amqp.git",
      ref: "v5.3.1",
      where: "requirements/extras/pinned.txt:3",
    });
    expect(mirror?.path.startsWith("/env/git-mirrors/")).toBe(true);
    expect(served?.fill?.[0]).toBe(
      `rm -rf ${mirror?.path} && git clone --quiet --mirror https://github.com/celery/py-amqp.git ${mirror?.path}`,
    );
    // Build requirements at the named ref, then the requirement file's own wheels.
    expect(served?.fill?.[1]).toMatch(/^python -c '.*' \S+ v5\.3\.1 \/env\/pip-wheels$/s);
    expect(served?.fill?.[2]).toBe(
      "python -m pip wheel --quiet --wheel-dir /env/pip-wheels -r requirements/ci.txt",
    );
    expect(included.runEnv).toMatchObject({
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: `url.${mirror?.path}.insteadOf`,
      GIT_CONFIG_VALUE_0: "https://github.com/celery/py-amqp.git",
    });
    // A clone that failed in setup: the check names the URL, its file and line.
    const clone = served?.fill?.[0] as string;
    expect(
      testTimeNetworkProblem(helper(["requirements/ci.txt"]), {
        network: "online",
        caches: included.records,
        steps: (served?.fill ?? []).map((command) => ({
          command,
          outcome: command === clone ? ("skipped" as const) : ("ok" as const),
          exitCode: command === clone ? 128 : 0,
          timedOut: false,
          durationMs: 1,
          outputTail: "",
        })),
      }),
    ).toContain(
      "skipped; see the setup log): requirements/extras/pinned.txt:3 names `https://github.com/celery/py-amqp.git`, which git clones at every install",
    );
    const local = await planInstallCaches(helper(["requirements/outside.txt"]), {
      ...online,
      repository,
    });
    expect(local.records[0]?.installs[0]?.served).toBe("cache");
  });

  it("reports a requirement fetched from a VCS host other than git, or an editable git clone, as unservable, a git URL with setup offline as needing the network, and a file that is not there as nothing to do", async () => {
    const vcs = await planInstallCaches(helper(["requirements/hg.txt"]), {
      ...online,
      repository,
    });
    expect(vcs.records[0]?.installs[0]).toMatchObject({ served: "unservable" });
    expect(vcs.records[0]?.installs[0]?.reason).toMatch(
      /^requirements\/hg\.txt:2 is `hg\+https:\/\/hg\.example\.org\/probe#egg=probe`, which pip fetches from its host at every install; no cache serves it offline/,
    );
    expect(vcs.steps).toEqual([]);
    const editable = await planInstallCaches(helper(["requirements/editable.txt"]), {
      ...online,
      repository,
    });
    expect(editable.records[0]?.installs[0]?.reason).toMatch(
      /^requirements\/editable\.txt:1 is `-e git\+https:\/\/github\.com\/celery\/kombu\.git#egg=kombu`, an editable clone/,
    );
    expect(editable.runEnv.GIT_CONFIG_COUNT).toBeUndefined();
    const offline = await planInstallCaches(helper(["requirements/dev.txt"]), {
      ...online,
      network: "offline",
      repository,
    });
    expect(offline.steps).toEqual([]);
    expect(
      testTimeNetworkProblem(helper(["requirements/dev.txt"]), {
        network: "offline",
        networkReason: "--no-setup-network",
        caches: offline.records,
        steps: [],
      }),
    ).toMatch(
      /^needs network at test time: helper\.py:5 runs `python -m pip install -r` \(in ensure_python\): requirements\/dev\.txt:2 names `https:\/\/github\.com\/celery\/kombu\.git`, which git clones at every install; setup mirrors it only with the network; setup ran offline \(--no-setup-network\)/,
    );
    const none = await planInstallCaches(helper(["requirements-dev.txt"]), {
      ...online,
      repository,
    });
    expect(none.records[0]?.installs[0]?.served).toBe("nothing");
    // The check: the VCS install is a problem even with an online setup; the absent file is not.
    const problem = testTimeNetworkProblem(helper(["requirements/hg.txt"]), {
      network: "online",
      caches: vcs.records,
      steps: [],
    });
    expect(problem).toMatch(
      /^needs network at test time: helper\.py:5 runs `python -m pip install -r` \(in ensure_python\): requirements\/hg\.txt:2 is/,
    );
    expect(
      testTimeNetworkProblem(helper(["requirements-dev.txt"]), {
        network: "online",
        caches: none.records,
        steps: [],
      }),
    ).toBeUndefined();
  });

  it("a fill step that failed in setup leaves the install unserved, named with its outcome", async () => {
    const installs = helper(["requirements/base.txt"]);
    const plan = await planInstallCaches(installs, { ...online, repository });
    const fill = plan.records[0]?.installs[0]?.fill?.[0] ?? "";
    const setup = { network: "online", caches: plan.records };
    expect(
      testTimeNetworkProblem(installs, { ...setup, steps: [{ command: fill, outcome: "ok" }] }),
    ).toBeUndefined();
    expect(
      testTimeNetworkProblem(installs, {
        ...setup,
        steps: [{ command: fill, outcome: "skipped" }],
      }),
    ).toContain("setup could not fill the pip cache");
  });

  it("offline, nothing is filled and every install is recorded as needing the network", async () => {
    const plan = await planInstallCaches(helper(["requirements/base.txt"]), {
      ...online,
      repository,
      network: "offline",
    });
    expect(plan.steps).toEqual([]);
    expect(plan.records[0]?.installs[0]?.served).toBe("offline");
  });

  it("npm ci of a node repository is served by the cache setup's own install fills", async () => {
    const installs = findTestTimeInstalls([
      {
        path: "test_n.py",
        content: "import subprocess\nsubprocess.run(['npm', 'ci', '--legacy-peer-deps'])\n",
      },
    ]);
    const node = await planInstallCaches(installs, {
      ...online,
      repository,
      primaryLanguage: "node",
    });
    expect(node.records[0]).toMatchObject({ installer: "npm", path: "/env/npm-cache" });
    expect(node.records[0]?.installs[0]?.served).toBe("setup");
    expect(node.runEnv.npm_config_offline).toBe("true");
    const python = await planInstallCaches(installs, { ...online, repository });
    expect(python.records[0]?.installs[0]?.served).toBe("unservable");
  });
});

describe("lifecycleScripts", () => {
  it("lists the root package's and its workspaces' install and prepare scripts, as npm ci runs them", async () => {
    const root = await mkdtemp(join(tmpdir(), "skillsmith-lifecycle-"));
    try {
      // Shaped like modelcontextprotocol/servers: workspaces `src/*`, each built in `prepare`.
      await writeFile(
        join(root, "package.json"),
        JSON.stringify({
          workspaces: ["src/*", "tools/cli"],
          scripts: { build: "npm run build --workspaces", postinstall: "node patch.js" },
        }),
      );
      const packages: Record<string, unknown> = {
        "src/memory": { scripts: { build: "tsc", prepare: "npm run build" } },
        "src/fetch": { scripts: { test: "vitest" } },
        "src/everything": { scripts: { prepare: "npm run build", preinstall: "node check.js" } },
        "tools/cli": { scripts: { install: "node-gyp rebuild" } },
      };
      for (const [folder, manifest] of Object.entries(packages)) {
        await mkdir(join(root, folder), { recursive: true });
        await writeFile(join(root, folder, "package.json"), JSON.stringify(manifest));
      }
      // A folder under the pattern without a package.json, and one whose manifest is broken.
      await mkdir(join(root, "src", "docs"));
      await mkdir(join(root, "src", "broken"));
      await writeFile(join(root, "src", "broken", "package.json"), "{ not json");
      expect(await lifecycleScripts(root)).toEqual([
        "package.json: postinstall `node patch.js`",
        "src/everything/package.json: preinstall `node check.js`",
        "src/everything/package.json: prepare `npm run build`",
        "src/memory/package.json: prepare `npm run build`",
        "tools/cli/package.json: install `node-gyp rebuild`",
      ]);
      const installs = findTestTimeInstalls([
        { path: "test_n.py", content: "import subprocess\nsubprocess.run(['npm', 'ci'])\n" },
      ]);
      const plan = await planInstallCaches(installs, {
        network: "online",
        environmentPath: "/env",
        repository: root,
        primaryLanguage: "node",
      });
      expect(plan.records[0]?.installs[0]?.scripts).toHaveLength(5);
      expect(await lifecycleScripts(join(root, "src", "fetch"))).toEqual([]);
      expect(await lifecycleScripts(join(root, "nowhere"))).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
