import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BubblewrapSandbox, findOnPath } from "../src/env/sandbox/bubblewrap.js";
import type { ContainerSandbox } from "../src/env/sandbox/container.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import { runVerifier } from "../src/env/verifier/run.js";
import type { VerifierSpec } from "../src/env/verifier/types.js";
import { materialiseWorkspace } from "../src/env/workspace/materialise.js";
import { type PreparedBase, prepareBase } from "../src/env/workspace/prepare.js";
import { gitSync as git } from "./support/git.js";
import { availableContainerSandbox } from "./support/sandboxes.js";
import { hasPytest } from "./support/tool-probes.js";

const hasBwrap = findOnPath("bwrap") !== null;

/** The container sandbox, when an engine answers and the base image (python3, pytest, node) exists. */
const container: ContainerSandbox | undefined = await availableContainerSandbox();

async function makeRepository(folder: string, files: Record<string, string>): Promise<string> {
  await mkdir(folder, { recursive: true });
  git(folder, "init", "-q", "-b", "main");
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(folder, path, ".."), { recursive: true });
    await writeFile(join(folder, path), content);
  }
  git(folder, "add", "-A");
  git(folder, "commit", "-q", "-m", "initial");
  return git(folder, "rev-parse", "HEAD");
}

let scratch: string;
let calcBase: PreparedBase;
let stringsBase: PreparedBase;

// `sub` is wrong on purpose: the verifiers below have one failing check because of it.
const calcSource = [
  "def add(a, b):",
  "    return a + b",
  "",
  "def sub(a, b):",
  "    return a + b",
  "",
  "def mul(a, b):",
  "    return a * b",
  "",
  "def div(a, b):",
  "    return a / b",
  "",
].join("\n");

// `reverse` and `padRight` are wrong on purpose.
const stringsSource = [
  "export const upper = (text) => text.toUpperCase();",
  "export const lower = (text) => text.toLowerCase();",
  "export const reverse = (text) => text;",
  "export const padLeft = (text, width) => text.padStart(width);",
  "export const padRight = (text, width) => text.padStart(width);",
  "",
].join("\n");

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-env-verifier-"));
  const cacheDir = join(scratch, "cache");
  const calcCommit = await makeRepository(join(scratch, "calc"), { "calc.py": calcSource });
  const stringsCommit = await makeRepository(join(scratch, "strings"), {
    "lib.mjs": stringsSource,
    "package.json": '{"name":"strings","type":"module"}\n',
  });
  calcBase = await prepareBase({ source: join(scratch, "calc"), commit: calcCommit, cacheDir });
  stringsBase = await prepareBase({
    source: join(scratch, "strings"),
    commit: stringsCommit,
    cacheDir,
  });
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * Every pytest verifier here sets this: the unsafe sandbox runs the host's `python3`, whose
 * third-party pytest plugins load themselves into every session unless told not to (on the
 * development machine hypothesis and pytest-benchmark: about 1 s of CPU a session, 0.01 s of
 * pytest's own work without them; 14 unsafe sessions in this file). No check here concerns
 * third-party plugins, and skillsmith's own plugin is loaded by name (`-p`), which this leaves on.
 */
const withoutThirdPartyPlugins = { PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" } as const;

// Four checks; `test_sub` fails against calc.py: 3 of 4 pass → 0.75.
const pytestJunitVerifier: VerifierSpec = {
  name: "calc-junit",
  files: [
    {
      path: "verifier_tests/test_calc.py",
      content: [
        "from calc import add, sub, mul, div",
        "",
        "def test_add():",
        "    assert add(2, 3) == 5",
        "",
        "def test_sub():",
        "    assert sub(5, 3) == 2",
        "",
        "def test_mul():",
        "    assert mul(4, 3) == 12",
        "",
        "def test_div():",
        "    assert div(9, 3) == 3",
        "",
      ].join("\n"),
    },
  ],
  command:
    "python3 -m pytest -q -p no:cacheprovider verifier_tests --junitxml=verifier-results.xml",
  resultsFile: "verifier-results.xml",
  timeoutMs: 60_000,
  env: withoutThirdPartyPlugins,
};

// Five checks read from pytest's summary (no JUnit): add, mul pass; sub fails; one skipped;
// div passes → 3 of 5 → 0.6.
const pytestSummaryVerifier: VerifierSpec = {
  name: "calc-summary",
  files: [
    {
      path: "verifier_tests/test_summary.py",
      content: [
        "import pytest",
        "from calc import add, sub, mul, div",
        "",
        "def test_add():",
        "    assert add(1, 1) == 2",
        "",
        "def test_sub():",
        "    assert sub(3, 1) == 2",
        "",
        "def test_mul():",
        "    assert mul(2, 5) == 10",
        "",
        "@pytest.mark.skip(reason='not yet')",
        "def test_pow():",
        "    assert False",
        "",
        "def test_div():",
        "    assert div(8, 2) == 4",
        "",
      ].join("\n"),
    },
  ],
  command: ["python3", "-m", "pytest", "-v", "-p", "no:cacheprovider", "verifier_tests"],
  timeoutMs: 60_000,
  env: withoutThirdPartyPlugins,
};

// node:test, six leaf checks: upper, lower, left pass; reverse, right fail; one skipped → 3/6.
const nodeVerifier: VerifierSpec = {
  name: "strings-node-test",
  files: [
    {
      path: "verifier/strings.test.mjs",
      content: [
        'import { test, describe, it } from "node:test";',
        'import assert from "node:assert/strict";',
        'import { upper, lower, reverse, padLeft, padRight } from "../lib.mjs";',
        "",
        'test("upper", () => assert.equal(upper("ab"), "AB"));',
        'test("lower", () => assert.equal(lower("AB"), "ab"));',
        'test("reverse", () => assert.equal(reverse("ab"), "ba"));',
        'test("later", { skip: "not yet" }, () => assert.fail("skipped"));',
        'describe("pad", () => {',
        '  it("left", () => assert.equal(padLeft("a", 3), "  a"));',
        '  it("right", () => assert.equal(padRight("a", 3), "a  "));',
        "});",
        "",
      ].join("\n"),
    },
  ],
  command: ["node", "--test", "--test-reporter=tap", "verifier/strings.test.mjs"],
  timeoutMs: 60_000,
};

async function runOn(
  base: PreparedBase,
  sandbox: SandboxV1,
  verifier: VerifierSpec,
  beforeRun?: (workspace: string) => Promise<void>,
) {
  const workspace = await materialiseWorkspace(base);
  try {
    await beforeRun?.(workspace.path);
    return await runVerifier({
      sandbox,
      workspace: workspace.path,
      workspaceMountPath: workspace.mountPath,
      verifier,
    });
  } finally {
    await workspace.dispose();
  }
}

const sandboxes: { name: string; available: boolean; missing: string; make: () => SandboxV1 }[] = [
  { name: "unsafe", available: true, missing: "", make: () => new UnsafeSandbox() },
  {
    name: "bubblewrap",
    available: hasBwrap,
    missing: "bwrap",
    make: () => new BubblewrapSandbox(),
  },
  {
    name: "container",
    available: container !== undefined,
    missing: "a container engine with the skillsmith base image",
    make: () => container as ContainerSandbox,
  },
];

describe("verifier pass ratios are the same in every sandbox", () => {
  for (const sandbox of sandboxes) {
    const label = sandbox.available ? sandbox.name : `${sandbox.name} (missing ${sandbox.missing})`;
    it.skipIf(!sandbox.available || !hasPytest)(`${label}: pytest with JUnit → 3/4`, async () => {
      const result = await runOn(calcBase, sandbox.make(), pytestJunitVerifier);
      // A pytest verifier is read from skillsmith's channel, not from the JUnit file it writes.
      expect(result.source).toBe("channel");
      expect(result.flags).toEqual([]);
      expect(result.total).toBe(4);
      expect(result.passed).toBe(3);
      expect(result.passRatio).toBe(0.75);
      expect(result.checks.map((check) => [check.name.split("::").pop(), check.status])).toEqual([
        ["test_add", "pass"],
        ["test_sub", "fail"],
        ["test_mul", "pass"],
        ["test_div", "pass"],
      ]);
      expect(result.checks[1]?.message).toContain("assert");
    });

    it.skipIf(!sandbox.available || !hasPytest)(`${label}: pytest summary → 3/5`, async () => {
      const result = await runOn(calcBase, sandbox.make(), pytestSummaryVerifier);
      // Without a JUnit file too: the console summary is never what a pytest run is scored from.
      expect(result.source).toBe("channel");
      expect(result.evidence).toEqual([]);
      expect(result.passRatio).toBe(0.6);
      const statuses = Object.fromEntries(
        result.checks.map((check) => [check.name.split("::").pop(), check.status]),
      );
      expect(statuses).toEqual({
        test_add: "pass",
        test_sub: "fail",
        test_mul: "pass",
        test_pow: "skip",
        test_div: "pass",
      });
    });

    it.skipIf(!sandbox.available)(`${label}: node:test → 3/6`, async () => {
      const result = await runOn(stringsBase, sandbox.make(), nodeVerifier);
      expect(result.source).toBe("summary");
      expect(result.runner).toBe("node-test");
      expect(result.total).toBe(6);
      expect(result.passed).toBe(3);
      expect(result.passRatio).toBe(0.5);
      expect(result.checks.map((check) => `${check.name}:${check.status}`).sort()).toEqual(
        [
          "upper:pass",
          "lower:pass",
          "reverse:fail",
          "later:skip",
          "left:pass",
          "right:fail",
        ].sort(),
      );
    });
  }

  it.skipIf(!hasBwrap || !hasPytest)(
    "a verifier written for /workspace/<repo> runs unchanged (bubblewrap)",
    async () => {
      const verifier: VerifierSpec = {
        files: [
          {
            path: "verifier_tests/test_fixed_path.py",
            content: [
              "import os, sys",
              'sys.path.insert(0, "/workspace/calc")',
              "from calc import add",
              "",
              "def test_cwd_is_fixed_path():",
              '    assert os.getcwd() == "/workspace/calc"',
              "",
              "def test_source_at_fixed_path():",
              '    assert os.path.isfile("/workspace/calc/calc.py")',
              "",
              "def test_import_from_fixed_path():",
              "    assert add(20, 22) == 42",
              "",
            ].join("\n"),
          },
        ],
        command:
          "cd /workspace/calc && python3 -m pytest -q -p no:cacheprovider /workspace/calc/verifier_tests --junitxml=/workspace/calc/out.xml",
        resultsFile: "out.xml",
        timeoutMs: 60_000,
        env: withoutThirdPartyPlugins,
      };
      expect(calcBase.workspaceMountPath).toBe("/workspace/calc");
      const result = await runOn(calcBase, new BubblewrapSandbox(), verifier);
      expect(result.flags).toEqual([]);
      expect(result.total).toBe(3);
      expect(result.passRatio).toBe(1);
    },
  );
});

describe("verifier runner", () => {
  it.skipIf(!hasPytest)(
    "copies the verifier in only when run, over planted files, ignoring a planted report",
    async () => {
      const sandbox = new UnsafeSandbox();
      const result = await runOn(calcBase, sandbox, pytestJunitVerifier, async (workspace) => {
        // Before the run the verifier is not in the workspace.
        expect(existsSync(join(workspace, "verifier_tests"))).toBe(false);
        // An agent plants a trivially passing test at the verifier's path and a fake report.
        await mkdir(join(workspace, "verifier_tests"));
        await writeFile(
          join(workspace, "verifier_tests", "test_calc.py"),
          "def test_ok():\n    assert True\n",
        );
        const fake = Array.from(
          { length: 10 },
          (_, index) => `<testcase classname="fake" name="t${index}"/>`,
        ).join("");
        await writeFile(
          join(workspace, "verifier-results.xml"),
          `<testsuites><testsuite>${fake}</testsuite></testsuites>`,
        );
      });
      expect(result.total).toBe(4);
      expect(result.passRatio).toBe(0.75);
    },
  );

  it.skipIf(!hasPytest)("flags a verifier that collects no checks", async () => {
    const result = await runOn(calcBase, new UnsafeSandbox(), {
      files: [{ path: "verifier_tests/test_empty.py", content: "def helper():\n    return 1\n" }],
      command: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "verifier_tests"],
      timeoutMs: 60_000,
      env: withoutThirdPartyPlugins,
    });
    expect(result.exitCode).toBe(5);
    expect(result.flags).toEqual(["no-checks"]);
    expect(result.passRatio).toBe(0);
    expect(result.total).toBe(0);
  });

  it.skipIf(!hasPytest)(
    "flags a verifier that crashes at collection (JUnit and summary)",
    async () => {
      const broken = {
        path: "verifier_tests/test_broken.py",
        content: "import module_that_does_not_exist\n\ndef test_never():\n    assert True\n",
      };
      const withJunit = await runOn(calcBase, new UnsafeSandbox(), {
        files: [broken],
        command:
          "python3 -m pytest -q -p no:cacheprovider verifier_tests --junitxml=verifier-results.xml",
        resultsFile: "verifier-results.xml",
        timeoutMs: 60_000,
        env: withoutThirdPartyPlugins,
      });
      expect(withJunit.flags).toEqual(["collection-error"]);
      expect(withJunit.passRatio).toBe(0);
      const withoutJunit = await runOn(calcBase, new UnsafeSandbox(), {
        files: [broken],
        command: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "verifier_tests"],
        timeoutMs: 60_000,
        env: withoutThirdPartyPlugins,
      });
      expect(withoutJunit.exitCode).toBe(2);
      expect(withoutJunit.flags).toEqual(["collection-error"]);
      expect(withoutJunit.passRatio).toBe(0);
    },
    // Two verifiers, each listed (the inventory) and then run: four pytest sessions, which
    // took 60 s at load 25.
    180_000,
  );

  it("flags a node verifier whose import fails as a collection error", async () => {
    const result = await runOn(stringsBase, new UnsafeSandbox(), {
      files: [
        {
          path: "verifier/broken.test.mjs",
          content: 'import { missing } from "../no-such-file.mjs";\n',
        },
      ],
      command: ["node", "--test", "--test-reporter=tap", "verifier/broken.test.mjs"],
      timeoutMs: 60_000,
    });
    // node:test reports the file itself as one failing "test" named after the file.
    expect(result.flags).toEqual(["collection-error"]);
    expect(result.passRatio).toBe(0);
    expect(result.passed).toBe(0);
  });

  it.skipIf(!hasPytest)("flags a verifier killed by its timeout, scoring 0", async () => {
    const result = await runOn(calcBase, new UnsafeSandbox(), {
      files: [
        {
          path: "verifier_tests/test_slow.py",
          content:
            "import time\n\ndef test_fast():\n    assert True\n\ndef test_slow():\n    time.sleep(60)\n",
        },
      ],
      command: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "verifier_tests"],
      timeoutMs: 1_500,
      env: withoutThirdPartyPlugins,
    });
    expect(result.timedOut).toBe(true);
    expect(result.flags).toEqual(["timeout"]);
    expect(result.passRatio).toBe(0);
  });

  it.skipIf(!hasPytest)(
    "never follows a symbolic link the agent planted where verifier files go",
    async () => {
      const outside = await mkdtemp(join(scratch, "outside-"));
      await writeFile(join(outside, "keep.txt"), "host file\n");
      const result = await runOn(
        calcBase,
        new UnsafeSandbox(),
        pytestJunitVerifier,
        async (workspace) => {
          await symlink(outside, join(workspace, "verifier_tests"));
          await symlink(join(outside, "keep.txt"), join(workspace, "verifier-results.xml"));
        },
      );
      expect(result.passRatio).toBe(0.75);
      expect(await readdir(outside)).toEqual(["keep.txt"]);
      expect(await readFile(join(outside, "keep.txt"), "utf8")).toBe("host file\n");
    },
  );

  it("refuses verifier paths that leave the workspace or replace it", async () => {
    await expect(
      runOn(calcBase, new UnsafeSandbox(), { command: ["true"], resultsFile: "." }),
    ).rejects.toThrow(/stay inside/);
    await expect(
      runOn(calcBase, new UnsafeSandbox(), {
        files: [{ path: "../escape.txt", content: "x" }],
        command: ["true"],
      }),
    ).rejects.toThrow(/stay inside/);
  });

  it("reads a folder of JUnit files (Surefire layout) and copies a verifier directory", async () => {
    const directory = join(scratch, "surefire-verifier");
    await mkdir(join(directory, "tools"), { recursive: true });
    // A stand-in for `mvn test`: writes two Surefire-style reports (3 checks, 1 error → 2/3).
    await writeFile(
      join(directory, "tools", "fake-surefire.sh"),
      [
        "mkdir -p target/surefire-reports",
        `echo '<testsuite name="A"><testcase classname="A" name="one"/><testcase classname="A" name="two"><error message="boom"/></testcase></testsuite>' > target/surefire-reports/TEST-A.xml`,
        `echo '<testsuite name="B"><testcase classname="B" name="three"/></testsuite>' > target/surefire-reports/TEST-B.xml`,
        "",
      ].join("\n"),
    );
    const result = await runOn(calcBase, new UnsafeSandbox(), {
      directory,
      command: ["sh", "tools/fake-surefire.sh"],
      resultsFile: "target/surefire-reports",
    });
    expect(result.source).toBe("junit");
    expect(result.checks).toEqual([
      { name: "A::one", status: "pass" },
      { name: "A::two", status: "error", message: "boom" },
      { name: "B::three", status: "pass" },
    ]);
    expect(result.passRatio).toBeCloseTo(2 / 3, 10);
    expect(await readFile(join(directory, "tools", "fake-surefire.sh"), "utf8")).toContain("mkdir");
  });
});
