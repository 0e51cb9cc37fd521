import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  inventories,
  inventoryKey,
  runSuiteVerifier,
  type SuiteVerifierTarget,
  suiteVerifierInventory,
  takeSuiteInventory,
  untouchedRunWithInventory,
} from "../src/bench/run/verifier.js";
import type { SuiteVerifier } from "../src/bench/suite/types.js";
import { DEFAULT_BASE_IMAGE } from "../src/env/sandbox/container.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { treeDigest } from "../src/env/workspace/digest.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";
import { hasV1Tests, v1Verifier } from "./support/v1-verifiers.js";

const bubblewrap = await usableBubblewrap();
const container = await availableContainerSandbox();

/** v1 verifiers of several shapes: collected, read from source, helpers beside them. */
const V1_FILES = [
  ["batch1", "test_github_actions_templates.py"],
  ["batch1", "test_add_uint_support.py"],
  ["batch3", "test_python_packaging.py"],
  ["batch5", "test_fix.py"],
] as const;

let root: string;
let template: string;
let digest: string;
let copies = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-inventory-run-"));
  template = join(root, "repo");
  await mkdir(join(template, "src"), { recursive: true });
  await writeFile(join(template, "src", "calc.py"), "def add(a, b):\n    return a + b\n");
  digest = await treeDigest(template);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshCopy(): Promise<{ path: string; dispose: () => Promise<void> }> {
  const path = join(root, `copy-${copies++}`, "repo");
  await cp(template, path, { recursive: true });
  return { path, dispose: () => rm(path, { recursive: true, force: true }) };
}

function target(
  sandbox: SandboxV1,
  verifier: Omit<SuiteVerifier, "cwd" | "timeoutSeconds">,
  timeoutSeconds = 120,
  image?: string,
): SuiteVerifierTarget {
  return {
    sandbox,
    ...(image === undefined ? {} : { image }),
    workspaceMountPath: "/workspace/repo",
    verifier: { ...verifier, cwd: verifier.mountPath, timeoutSeconds },
    untouched: { digest, materialise: freshCopy },
  };
}

async function written(name: string, test: string, command?: string) {
  const folder = join(root, "written", name);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, "test_it.py"), test);
  return {
    command:
      command ??
      "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -q -p no:cacheprovider test_it.py --junitxml=junit.xml",
    folder,
    files: ["test_it.py"],
    mountPath: "/verifier",
    junit: "junit.xml",
  };
}

/** The untouched run with its inventory, in a fresh copy; what it stored in the memo. */
async function untouchedRun(one: SuiteVerifierTarget) {
  const workspace = await freshCopy();
  const scratch = await mkdtemp(join(root, "scratch-"));
  try {
    const done = await untouchedRunWithInventory({
      ...one,
      workspace: workspace.path,
      scratch,
    });
    const run = done.kind === "scored" ? done.run : undefined;
    const key = await inventoryKey(one);
    return {
      done: done.kind,
      run,
      kept: inventories.has(key) ? await suiteVerifierInventory(one) : undefined,
    };
  } finally {
    await workspace.dispose();
  }
}

/** The usual way: inventory first (given), then a scored run with canaries in a fresh copy. */
async function usualRun(one: SuiteVerifierTarget) {
  const inventory = await takeSuiteInventory(one);
  const workspace = await freshCopy();
  const scratch = await mkdtemp(join(root, "scratch-"));
  try {
    const run = await runSuiteVerifier({ ...one, workspace: workspace.path, scratch, inventory });
    return { inventory, run };
  } finally {
    await workspace.dispose();
  }
}

function outcomes(run: { checks: readonly { name: string; status: string }[] }) {
  return run.checks.map((check) => `${check.name}: ${check.status}`).sort();
}

describe.skipIf(bubblewrap === undefined)(
  "the untouched run takes the verifier's inventory (needs bubblewrap)",
  () => {
    const sandbox = bubblewrap as SandboxV1;

    it.skipIf(!hasV1Tests)(
      "real v1 verifiers: the inventory equals the inventory mode's, the run the usual run's",
      async () => {
        for (const [batch, file] of V1_FILES) {
          const one = target(
            sandbox,
            await v1Verifier(join(root, "v1", batch, file.replace(/\.py$/, "")), batch, file),
          );
          const { run, kept } = await untouchedRun(one);
          const usual = await usualRun(one);
          expect(kept, file).toEqual(usual.inventory);
          expect(kept?.kind, file).toBe("pytest");
          expect(run, file).toBeDefined();
          expect(run?.source, file).toBe("channel");
          expect(run?.flags, file).toEqual(usual.run.flags);
          expect(outcomes(run ?? { checks: [] }), file).toEqual(outcomes(usual.run));
        }
      },
      300_000,
    );

    it("a verifier passing on the untouched repository: its exit status still tells", async () => {
      const one = target(
        sandbox,
        await written(
          "passing",
          "import pytest\n\n\ndef test_one():\n    assert True\n\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_two(n):\n    assert n\n",
        ),
      );
      const { run, kept } = await untouchedRun(one);
      const usual = await usualRun(one);
      expect(kept).toEqual(usual.inventory);
      expect(kept).toMatchObject({
        kind: "pytest",
        exitStatusPropagates: true,
        junitWritten: true,
      });
      // pytest's 0 was turned into 1 to learn that; the run is not flagged for it.
      expect(run).toMatchObject({ passed: 3, total: 3, passRatio: 1, flags: [], exitCode: 1 });
      // Known now: a second untouched run leaves its workspace to the usual run.
      expect((await untouchedRun(one)).done).toBe("known");
    }, 120_000);

    it("a command swallowing pytest's exit status is known as one", async () => {
      const one = target(
        sandbox,
        await written(
          "swallowing",
          "def test_fails():\n    assert False\n",
          "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -q -p no:cacheprovider test_it.py --junitxml=junit.xml || true",
        ),
      );
      const { run, kept } = await untouchedRun(one);
      const usual = await usualRun(one);
      expect(kept).toEqual(usual.inventory);
      expect(kept).toMatchObject({ kind: "pytest", exitStatusPropagates: false });
      expect(run).toMatchObject({ passed: 0, total: 1, exitCode: 0 });
    }, 120_000);

    it("a test slower than the time limit: no inventory is kept from that session", async () => {
      const one = target(
        sandbox,
        await written("slow", "import time\n\n\ndef test_slow():\n    time.sleep(30)\n"),
        4,
      );
      const { done, run, kept } = await untouchedRun(one);
      expect(done).toBe("spent");
      expect(run).toBeUndefined();
      expect(kept).toBeUndefined();
      // Taken the usual way, collecting only, it is a pytest inventory (not "timed out").
      expect(await suiteVerifierInventory(one)).toMatchObject({
        kind: "pytest",
        collected: [{ id: "verifier:test_it.py::test_slow" }],
      });
    }, 120_000);

    it("a command that is not pytest: its opaque inventory is kept, its run read the plain way", async () => {
      const one = target(sandbox, await written("plain", "", "echo '1 passed in 0.01s'"));
      const { run, kept } = await untouchedRun(one);
      expect(run).toBeUndefined();
      expect(kept).toMatchObject({ kind: "opaque" });
      expect(kept).toEqual(await takeSuiteInventory(one));
    }, 120_000);
  },
);

describe.skipIf(container === undefined)(
  "the untouched run takes the verifier's inventory in the container sandbox (needs Podman or Docker)",
  () => {
    it("a real v1 verifier and one passing on the untouched repository, as the inventory mode gives", async () => {
      const sandbox = container as SandboxV1;
      const [batch, file] = V1_FILES[1];
      const verifiers = [
        ...(hasV1Tests
          ? [
              await v1Verifier(
                join(root, "container-v1", batch, file.replace(/\.py$/, "")),
                batch,
                file,
              ),
            ]
          : []),
        await written(
          "container-passing",
          "def test_one():\n    assert True\n\n\ndef test_two():\n    assert 2\n",
        ),
      ];
      for (const verifier of verifiers) {
        const one = target(sandbox, verifier, 120, DEFAULT_BASE_IMAGE);
        const { run, kept } = await untouchedRun(one);
        const usual = await usualRun(one);
        expect(kept, verifier.folder).toEqual(usual.inventory);
        expect(kept?.kind, verifier.folder).toBe("pytest");
        expect(run?.flags, verifier.folder).toEqual(usual.run.flags);
        expect(outcomes(run ?? { checks: [] }), verifier.folder).toEqual(outcomes(usual.run));
      }
    }, 300_000);
  },
);
