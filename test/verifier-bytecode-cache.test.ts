/**
 * The verifier's shared bytecode cache (`src/env/verifier/integrity/bytecode-cache.ts`): an
 * inventory, where no agent's code has run, compiles the interpreter's own modules into it, and
 * every scored run reads it through a read-only mount. The attacks below are deliverables that,
 * when imported at collection, try to put their own bytecode where a later import would load it:
 * overwriting every cached `.pyc`, and writing one elsewhere and renaming it in. Each must leave
 * the cache byte for byte as the inventory left it and gain nothing over the stub (1 of 3
 * checks), in bubblewrap and, when an engine answers with the base image, a container.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import { UnsafeSandbox } from "../src/env/sandbox/unsafe.js";
import {
  BYTECODE_MOUNT_PATH,
  verifierBytecodeCache,
} from "../src/env/verifier/integrity/bytecode-cache.js";
import { runVerifier } from "../src/env/verifier/run.js";
import type { VerifierSpec } from "../src/env/verifier/types.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";

// The cache lives under skillsmith's cache folder: this file's own, so what it finds is its own.
const cacheRoot = await mkdtemp(join(tmpdir(), "verifier-bytecode-"));
process.env.SKILLSMITH_CACHE_DIR = cacheRoot;
afterAll(() => rm(cacheRoot, { recursive: true, force: true }));

const FOLDER = ".skillsmith-verifier";
const WORKSPACE = "/workspace/task";

// `fractions` is imported inside a test, after collection: a planted `.pyc` for it would run then.
const TEST_CALC = `from tinycalc import add


def test_add():
    assert add(2, 3) == 5


def test_fraction():
    import fractions
    assert add(fractions.Fraction(1, 2), fractions.Fraction(1, 2)) == 1


def test_documented():
    import tinycalc
    assert isinstance(tinycalc.__doc__, str)
`;

function verifier(python: string): VerifierSpec {
  return {
    files: [{ path: `${FOLDER}/test_calc.py`, content: TEST_CALC }],
    command: `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ${python} -m pytest -q -p no:cacheprovider ${FOLDER} --junitxml=${FOLDER}/junit.xml`,
    resultsFile: `${FOLDER}/junit.xml`,
    timeoutMs: 120_000,
  };
}

const STUB = '"""tinycalc: not implemented yet."""\n\n\ndef add(a, b):\n    return None\n';

// Bytecode of a module whose every name answers 1 == anything: what an attacker would plant.
const OVERWRITE_EVERY_PYC = `${STUB}
import os as _os
import marshal as _marshal
import importlib.util as _util

_code = _marshal.dumps(compile("Fraction = lambda *a: 1", "fractions", "exec"))
for _root, _dirs, _files in _os.walk(${JSON.stringify(BYTECODE_MOUNT_PATH)}):
    for _name in _files:
        try:
            with open(_os.path.join(_root, _name), "wb") as _file:
                _file.write(_util.MAGIC_NUMBER + b"\\0" * 12 + _code)
        except OSError:
            pass
`;

const RENAME_INTO_CACHE = `${STUB}
import os as _os
import sys as _sys
import marshal as _marshal
import importlib.util as _util
import tempfile as _tempfile

_code = _marshal.dumps(compile("Fraction = lambda *a: 1", "fractions", "exec"))
_target = _os.path.join(${JSON.stringify(BYTECODE_MOUNT_PATH)}, _os.path.dirname(_os.__file__).lstrip("/"), "fractions." + _sys.implementation.cache_tag + ".pyc")
try:
    _handle, _temporary = _tempfile.mkstemp()
    _os.write(_handle, _util.MAGIC_NUMBER + b"\\0" * 12 + _code)
    _os.close(_handle)
    _os.makedirs(_os.path.dirname(_target), exist_ok=True)
    _os.replace(_temporary, _target)
except OSError:
    pass
`;

const bubblewrap = await usableBubblewrap();
const container = await availableContainerSandbox();
const SANDBOXES: { name: string; sandbox: SandboxV1 | undefined; python: string }[] = [
  { name: "bubblewrap", sandbox: bubblewrap, python: "/usr/bin/python3" },
  { name: "container", sandbox: container, python: "python3" },
];

async function score(sandbox: SandboxV1, python: string, deliverable: string) {
  const workspace = await mkdtemp(join(tmpdir(), "verifier-bytecode-run-"));
  try {
    const init = join(workspace, "tinycalc", "__init__.py");
    await mkdir(dirname(init), { recursive: true });
    await writeFile(init, deliverable);
    return await runVerifier({
      sandbox,
      workspace,
      workspaceMountPath: WORKSPACE,
      verifier: verifier(python),
    });
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

/** Every file of the cache, relative to it, with the SHA-256 of its bytes. */
async function contents(folder: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    found.set(
      relative(folder, path),
      createHash("sha256")
        .update(await readFile(path))
        .digest("hex"),
    );
  }
  return found;
}

for (const { name, sandbox, python } of SANDBOXES) {
  describe.skipIf(sandbox === undefined)(`the verifier's bytecode cache (${name})`, () => {
    let cache = "";
    let filled = new Map<string, string>();

    it("is filled by the inventory with the interpreter's modules, none of the workspace's", async () => {
      if (sandbox === undefined) throw new Error("unreachable");
      const stub = await score(sandbox, python, STUB);
      expect([stub.passed, stub.total, stub.flags]).toEqual([1, 3, []]);
      // runVerifier is given no image here: the cache's scope is the sandbox's kind alone.
      cache = await verifierBytecodeCache({ sandboxKind: sandbox.kind });
      filled = await contents(cache);
      const files = [...filled.keys()];
      expect(files.some((file) => /\/_pytest\/[a-z_]+\.[a-z0-9-]+\.pyc$/.test(file))).toBe(true);
      expect(files.some((file) => /\/json\/__init__\.[a-z0-9-]+\.pyc$/.test(file))).toBe(true);
      expect(files.filter((file) => file.startsWith(WORKSPACE.slice(1)))).toEqual([]);
      expect(files.filter((file) => file.includes("skillsmith_verifier_channel"))).toEqual([]);
      expect(files.filter((file) => file.startsWith("tmp/"))).toEqual([]);
    });

    for (const [attack, deliverable] of [
      ["overwriting every cached .pyc", OVERWRITE_EVERY_PYC],
      ["renaming a planted .pyc into the cache", RENAME_INTO_CACHE],
    ] as const) {
      it(`${attack}: leaves the cache as the inventory left it and gains nothing`, async () => {
        if (sandbox === undefined) throw new Error("unreachable");
        expect(filled.size).toBeGreaterThan(0);
        const result = await score(sandbox, python, deliverable);
        const shown = `${result.passed}/${result.total} flags [${result.flags.join(", ")}]`;
        expect(result.passed, shown).toBeLessThanOrEqual(1);
        expect(await contents(cache)).toEqual(filled);
      });
    }
  });
}

// `unsafe` runs in place, without mounts: its cache is a folder of its own, filled by its own
// inventories (the code under test could write it, as it could the interpreter's files), so an
// unsafe pytest session no longer compiles pytest and the standard library from source.
describe.skipIf(!existsSync("/usr/bin/python3"))("the verifier's bytecode cache (unsafe)", () => {
  it("is filled in a folder of its own by the inventory, none of the workspace's", async () => {
    const stub = await score(new UnsafeSandbox(), "/usr/bin/python3", STUB);
    expect([stub.passed, stub.total, stub.flags]).toEqual([1, 3, []]);
    const folder = await verifierBytecodeCache({ sandboxKind: "unsafe" });
    expect(folder).not.toBe(await verifierBytecodeCache({ sandboxKind: "local" }));
    const files = [...(await contents(folder)).keys()];
    expect(files.some((file) => /\/_pytest\/[a-z_]+\.[a-z0-9-]+\.pyc$/.test(file))).toBe(true);
    expect(files.filter((file) => file.includes("verifier-bytecode-run-"))).toEqual([]);
    expect(files.filter((file) => file.includes("skillsmith_verifier_channel"))).toEqual([]);
  });
});
