import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prefetchInventories } from "../src/bench/run/inventory-batch.js";
import {
  type SuiteVerifierTarget,
  suiteVerifierInventory,
  takeSuiteInventory,
} from "../src/bench/run/verifier.js";
import type { SuiteVerifier } from "../src/bench/suite/types.js";
import { DEFAULT_BASE_IMAGE } from "../src/env/sandbox/container.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { treeDigest } from "../src/env/workspace/digest.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";
import { hasV1Tests, v1Verifier } from "./support/v1-verifiers.js";

const bubblewrap = await usableBubblewrap();
const container = await availableContainerSandbox();
const sandboxes: [string, SandboxV1, string | undefined][] = [
  ...(bubblewrap === undefined ? [] : [["bubblewrap", bubblewrap, undefined] as const]),
  ...(container === undefined ? [] : [["container", container, DEFAULT_BASE_IMAGE] as const]),
].map(([name, sandbox, image]) => [name, sandbox, image]);

/** v1 verifiers of several shapes: collected, read from source, helpers beside them. */
const V1_FILES = [
  ["batch1", "test_github_actions_templates.py"],
  ["batch1", "test_add_uint_support.py"],
  ["batch3", "test_python_packaging.py"],
  ["batch2", "test_django_patterns.py"],
  ["batch5", "test_fix.py"],
] as const;

let root: string;
let untouchedTemplate: string;
let untouchedDigest: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-inventory-batch-"));
  untouchedTemplate = join(root, "repo");
  await mkdir(join(untouchedTemplate, "src"), { recursive: true });
  await writeFile(join(untouchedTemplate, "src", "calc.py"), "def add(a, b):\n    return a + b\n");
  untouchedDigest = await treeDigest(untouchedTemplate);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let copies = 0;

/** A target of `folder` (its files copied there) in `sandbox`, on a fresh copy of the repo. */
function target(
  sandbox: SandboxV1,
  image: string | undefined,
  verifier: Omit<SuiteVerifier, "cwd" | "timeoutSeconds">,
): SuiteVerifierTarget {
  return {
    sandbox,
    ...(image === undefined ? {} : { image }),
    workspaceMountPath: "/workspace/repo",
    verifier: { ...verifier, cwd: verifier.mountPath, timeoutSeconds: 120 },
    untouched: {
      digest: untouchedDigest,
      materialise: async () => {
        const path = join(root, `untouched-${copies++}`, "repo");
        await cp(untouchedTemplate, path, { recursive: true });
        return { path, dispose: () => rm(path, { recursive: true, force: true }) };
      },
    },
  };
}

async function written(
  tag: string,
  name: string,
  files: Record<string, string>,
): Promise<Omit<SuiteVerifier, "cwd" | "timeoutSeconds">> {
  const folder = join(root, tag, name);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(join(folder, file, ".."), { recursive: true });
    await writeFile(join(folder, file), text);
  }
  const test = Object.keys(files).find((file) => file.startsWith("test_")) ?? "";
  return {
    command: `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -q -p no:cacheprovider ${test} --junitxml=junit.xml`,
    folder,
    files: Object.keys(files),
    mountPath: "/verifier",
    junit: "junit.xml",
  };
}

/** The victim: its parametrisation comes from a helper module and, if present, a /tmp file. */
const VICTIM = {
  "victim_cases.py": "CASES = [1, 2, 3]\n",
  "test_victim.py": `import json
import os

import pytest

from victim_cases import CASES

EXTRA = json.load(open("/tmp/victim-extra.json")) if os.path.exists("/tmp/victim-extra.json") else []


@pytest.mark.parametrize("case", CASES + EXTRA)
def test_case(case):
    assert case


def test_plain():
    assert True


# What the sandbox's environment says, as the verifier alone sees it.
@pytest.mark.parametrize("where", [os.environ.get("SKILLSMITH_WORKSPACE", "unset") + ":" + str("PATH" in os.environ)])
def test_where(where):
    assert where


class TestVictim:
    def test_method(self):
        assert True
`,
};

/** Pollutes the interpreter: a planted `victim_cases`, and pytest's collector told to match nothing. */
const INTERPRETER_POLLUTER = {
  "conftest.py": `import sys
import types

import _pytest.python

planted = types.ModuleType("victim_cases")
planted.CASES = [0]
sys.modules["victim_cases"] = planted
_pytest.python.PyCollector.funcnamefilter = lambda self, name: name == "test_polluter_only"
_pytest.python.PyCollector.classnamefilter = lambda self, name: False
`,
  "test_polluter.py": "def test_polluter_only():\n    assert True\n",
};

/** Pollutes through files: a conftest.py above every verifier folder of the batch, a /tmp file. */
const FILE_POLLUTER = {
  "test_files.py": `import json
import os

verifier = os.environ.get("SKILLSMITH_VERIFIER", "/verifier")
for folder in (os.path.dirname(os.path.dirname(verifier)), os.path.dirname(verifier), "/run"):
    try:
        with open(os.path.join(folder, "conftest.py"), "w") as handle:
            handle.write("def pytest_collection_modifyitems(items):\\n    items[:] = items[:1]\\n")
    except OSError:
        pass
with open("/tmp/victim-extra.json", "w") as handle:
    json.dump([7, 8, 9], handle)


def test_wrote():
    assert True
`,
};

describe.skipIf(sandboxes.length === 0)(
  "inventories taken in batches (needs bubblewrap or the container sandbox)",
  () => {
    for (const [name, sandbox, image] of sandboxes) {
      it.skipIf(!hasV1Tests)(
        `${name}: the batched inventories of real v1 verifiers equal the one-at-a-time ones`,
        async () => {
          const targets: SuiteVerifierTarget[] = [];
          for (const [batch, file] of V1_FILES) {
            targets.push(
              target(
                sandbox,
                image,
                await v1Verifier(
                  join(root, `${name}-v1`, batch, file.replace(/\.py$/, "")),
                  batch,
                  file,
                ),
              ),
            );
          }
          const report = await prefetchInventories(targets);
          expect(report.alone).toEqual([]);
          expect(report).toMatchObject({ batched: V1_FILES.length, batches: 1, known: 0 });
          for (const one of targets) {
            const batched = await suiteVerifierInventory(one);
            const alone = await takeSuiteInventory(one);
            expect(batched.kind, one.verifier.folder).toBe("pytest");
            expect(batched).toEqual(alone);
          }
          // Some of them collected, some read from source (they import the missing repository).
          const kinds = await Promise.all(
            targets.map(async (one) => {
              const inventory = await suiteVerifierInventory(one);
              return inventory.kind === "pytest" && inventory.collected.length > 0;
            }),
          );
          expect(kinds).toContain(true);
        },
        // Ten inventories alone and one batch, in a container on a loaded machine.
        300_000,
      );

      it(`${name}: a verifier polluting the interpreter changes nothing for the others of its batch`, async () => {
        const victim = target(sandbox, image, await written(`${name}-a`, "victim", VICTIM));
        const polluter = target(
          sandbox,
          image,
          await written(`${name}-a`, "polluter", INTERPRETER_POLLUTER),
        );
        // The polluter first, so in a shared interpreter the victim would collect after it.
        const report = await prefetchInventories([polluter, victim]);
        expect(report.alone).toEqual([]);
        expect(report.batched).toBe(2);
        const batched = await suiteVerifierInventory(victim);
        expect(batched).toEqual(await takeSuiteInventory(victim));
        expect(batched.kind === "pytest" ? batched.collected.map((test) => test.id) : []).toEqual([
          "verifier:test_victim.py::test_case[1]",
          "verifier:test_victim.py::test_case[2]",
          "verifier:test_victim.py::test_case[3]",
          "verifier:test_victim.py::test_plain",
          "verifier:test_victim.py::test_where[/workspace/repo:True]",
          "verifier:test_victim.py::TestVictim::test_method",
        ]);
        expect(await suiteVerifierInventory(polluter)).toEqual(await takeSuiteInventory(polluter));
      }, 300_000);

      it(`${name}: a verifier polluting through files sends the later ones of its batch to be taken alone`, async () => {
        const polluter = target(sandbox, image, await written(`${name}-b`, "files", FILE_POLLUTER));
        // Not the victim of the test above (an inventory is memoised by content).
        const victim = target(
          sandbox,
          image,
          await written(`${name}-b`, "victim", {
            ...VICTIM,
            "test_victim.py": `${VICTIM["test_victim.py"]}\n# the copy beside a file polluter\n`,
          }),
        );
        const report = await prefetchInventories([polluter, victim]);
        expect(report.batched).toBe(1);
        expect(report.alone).toEqual([
          {
            verifier: `${victim.verifier.folder}: ${victim.verifier.command}`,
            reason: expect.stringMatching(/^an earlier verifier of the batch \(job 0\) wrote /),
          },
        ]);
        const inventory = await suiteVerifierInventory(victim);
        expect(inventory).toEqual(await takeSuiteInventory(victim));
        expect(inventory.kind === "pytest" ? inventory.collected.length : 0).toBe(6);
      }, 300_000);
    }
  },
);
