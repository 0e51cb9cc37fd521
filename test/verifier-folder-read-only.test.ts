/**
 * `runVerifier` (generated and synthesis verifiers, copied into the workspace) shows each folder
 * holding the verifier's files read-only as a whole, as suite verifiers' folders are
 * (`src/env/verifier/read-only-folder.ts`). Before, only the files themselves were read-only, and
 * a deliverable could add things beside them that Python or pytest then load as the verifier's
 * own. Each attack below is the deliverable of a generated verifier's layout
 * (`.skillsmith-verifier/`, as `bench generate` validates): the stub earns 1 of 4 checks; the
 * attack, imported while the first test module is collected, plants into the verifier's folder
 * and must gain nothing: nothing lands there and the run scores the stub's 1 of 4, unflagged, in
 * bubblewrap and, when an engine answers with the base image, a container.
 */
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { runVerifier } from "../src/env/verifier/run.js";
import type { VerifierSpec } from "../src/env/verifier/types.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";

const FOLDER = ".skillsmith-verifier";
const CHECKS = 4;
const STUB_PASSED = 1;

// The expected values live in a verifier module imported inside each test body, after the
// deliverable was imported at collection: what that import finds decides the checks.
const TEST_CALC = `from tinycalc import add


def test_add_small():
    import expected
    assert add(2, 3) == expected.SMALL


def test_add_large():
    import expected
    assert add(200, 300) == expected.LARGE


def test_documented():
    import tinycalc
    assert isinstance(tinycalc.__doc__, str)
`;
const TEST_LATER = `from tinycalc import add


def test_add_zero():
    import expected
    assert add(0, 0) == expected.ZERO
`;

function verifier(python: string): VerifierSpec {
  return {
    files: [
      { path: `${FOLDER}/test_calc.py`, content: TEST_CALC },
      { path: `${FOLDER}/expected.py`, content: "SMALL = 5\nLARGE = 500\nZERO = 0\n" },
      // Collected after test_calc.py: a conftest.py planted here would still be loaded.
      { path: `${FOLDER}/zz/test_later.py`, content: TEST_LATER },
    ],
    command: `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ${python} -m pytest -q -p no:cacheprovider ${FOLDER} --junitxml=${FOLDER}/junit.xml`,
    resultsFile: `${FOLDER}/junit.xml`,
    timeoutMs: 120_000,
  };
}

const STUB = '"""tinycalc: not implemented yet."""\n\n\ndef add(a, b):\n    return None\n';

/** The stub, plus a line run when it is imported that writes `files` into the verifier's folder. */
function planting(files: Readonly<Record<string, string>>): string {
  return `${STUB}
import os as _os

for _name, _text in ${JSON.stringify(files)}.items():
    _path = _os.path.join(_os.getcwd(), ${JSON.stringify(FOLDER)}, _name)
    try:
        _os.makedirs(_os.path.dirname(_path), exist_ok=True)
        with open(_path, "w") as _file:
            _file.write(_text)
    except OSError:
        pass
`;
}

const FAKE_EXPECTED = "SMALL = None\nLARGE = None\nZERO = None\n";
const PLANTS: readonly { id: string; files: Readonly<Record<string, string>> }[] = [
  // A package wins over a module of the same name in the same folder.
  { id: "package-shadowing-verifier-module", files: { "expected/__init__.py": FAKE_EXPECTED } },
  {
    id: "conftest-in-folder-collected-later",
    files: {
      "zz/conftest.py": `import sys, types\nsys.modules["expected"] = types.SimpleNamespace(SMALL=None, LARGE=None, ZERO=None)\n`,
    },
  },
  {
    id: "module-and-pyc-planted-beside-tests",
    files: { "zz/expected.py": FAKE_EXPECTED, "__pycache__/expected.cpython-311.pyc": "" },
  },
];

const bubblewrap = await usableBubblewrap();
const container = await availableContainerSandbox();
const SANDBOXES: { name: string; sandbox: SandboxV1 | undefined; python: string }[] = [
  { name: "bubblewrap", sandbox: bubblewrap, python: "/usr/bin/python3" },
  { name: "container", sandbox: container, python: "python3" },
];

/** The verifier's result, and which of `planted` (relative to its folder) exist afterwards. */
async function score(
  sandbox: SandboxV1,
  python: string,
  deliverable: string,
  planted: readonly string[] = [],
) {
  const workspace = await mkdtemp(join(tmpdir(), "verifier-folder-"));
  try {
    const init = join(workspace, "tinycalc", "__init__.py");
    await mkdir(dirname(init), { recursive: true });
    await writeFile(init, deliverable);
    const result = await runVerifier({
      sandbox,
      workspace,
      workspaceMountPath: "/workspace/task",
      verifier: verifier(python),
    });
    const landed: string[] = [];
    for (const file of planted) {
      if ((await stat(join(workspace, FOLDER, file)).catch(() => undefined)) !== undefined) {
        landed.push(file);
      }
    }
    return { result, landed };
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

type Scored = Awaited<ReturnType<typeof score>>;

// Every case of both sandboxes starts when the file loads, each awaited by its own test: the
// runs mostly wait on their sandbox's start, so they overlap instead of queueing (85 s → ~25 s).
const started = new Map<string, Promise<Scored | { error: unknown }>>();
for (const { name, sandbox, python } of SANDBOXES) {
  if (sandbox === undefined) continue;
  const cases: [string, string, readonly string[]][] = [
    ["stub", STUB, []],
    ...PLANTS.map((plant): [string, string, readonly string[]] => [
      plant.id,
      planting(plant.files),
      Object.keys(plant.files),
    ]),
  ];
  for (const [id, deliverable, planted] of cases) {
    started.set(
      `${name}/${id}`,
      score(sandbox, python, deliverable, planted).catch((error: unknown) => ({ error })),
    );
  }
}

async function outcome(key: string): Promise<Scored> {
  const found = await started.get(key);
  if (found === undefined) throw new Error(`no run was started for ${key}`);
  if ("error" in found) throw found.error;
  return found;
}

for (const { name, sandbox } of SANDBOXES) {
  describe.skipIf(sandbox === undefined)(
    `runVerifier's read-only verifier folder (${name})`,
    () => {
      it("scores the stub 1 of 4, unflagged", async () => {
        const { result } = await outcome(`${name}/stub`);
        expect([result.passed, result.total, result.flags]).toEqual([STUB_PASSED, CHECKS, []]);
      });

      // Before the folder was read-only each plant landed, and the run was caught by another layer
      // (flagged `tampered`, scored 0). Now the write fails: nothing lands, the run is the stub's.
      for (const plant of PLANTS) {
        it(`${plant.id}: cannot be planted, gains nothing`, async () => {
          const { result, landed } = await outcome(`${name}/${plant.id}`);
          const shown = `${result.passed}/${result.total} flags [${result.flags.join(", ")}] evidence ${JSON.stringify(result.evidence)}`;
          expect(landed, shown).toEqual([]);
          expect([result.passed, result.total, result.flags], shown).toEqual([
            STUB_PASSED,
            CHECKS,
            [],
          ]);
        });
      }
    },
  );
}
