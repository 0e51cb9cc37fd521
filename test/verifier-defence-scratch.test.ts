/**
 * The plugin's fresh bytecode caches (its own and its children's) live in a scratch folder
 * skillsmith creates per verifier run and removes when the run is over, whatever way pytest
 * ended: before, each run left two `skillsmith-*pycache-*` folders in /tmp (about 290 had piled
 * up on the build machine). Needs pytest on the host (`python3 -m pytest`): the unsafe sandbox's
 * host paths, no container.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runProcess } from "../src/core/process.js";
import { openVerifierChannel } from "../src/env/verifier/integrity/plugin.js";
import { cleanupsAfterEach, temporaryDirectoryIn } from "./support/temporary.js";

const cleanups = cleanupsAfterEach();

const hasPytest =
  (
    await runProcess("python3", ["-m", "pytest", "--version"], { timeoutMs: 60_000 }).catch(
      () => undefined,
    )
  )?.exitCode === 0;

const TEST_MODULE = `
import os, subprocess, sys

def test_records_caches():
    with open("caches.txt", "w") as out:
        out.write(sys.pycache_prefix + "\\n" + os.environ.get("PYTHONPYCACHEPREFIX", "") + "\\n")
    # A child compiles into its own cache, as a verifier's test may.
    with open("helper.py", "w") as source:
        source.write("X = 1\\n")
    subprocess.run([sys.executable, "-c", "import py_compile; py_compile.compile('helper.py')"], check=True)

def test_ends_hard():
    # No pytest_unconfigure, no atexit: only skillsmith can clean up now.
    os._exit(0)
`;

describe.skipIf(!hasPytest)("the plugin's bytecode caches (needs python3 -m pytest)", () => {
  it("live in the run's scratch folder and are gone when the run is over, even after os._exit", async () => {
    const workspace = await temporaryDirectoryIn(cleanups, "skillsmith-scratch-test-");
    await writeFile(join(workspace, "test_scratch.py"), TEST_MODULE);
    const channel = await openVerifierChannel({ mode: "run", canaries: [] }, { hostPaths: true });
    const scratch = channel.env.SKILLSMITH_VERIFIER_SCRATCH ?? "";
    expect(existsSync(scratch)).toBe(true);
    const run = await runProcess(
      "python3",
      ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_scratch.py"],
      {
        cwd: workspace,
        env: { ...process.env, ...channel.env },
        timeoutMs: 120_000,
      },
    ).finally(() => channel.finish());
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    const [own = "", children = ""] = (await readFile(join(workspace, "caches.txt"), "utf8")).split(
      "\n",
    );
    expect(own.startsWith(`${scratch}/skillsmith-pycache-`)).toBe(true);
    expect(children.startsWith(`${scratch}/skillsmith-child-pycache-`)).toBe(true);
    expect(existsSync(own)).toBe(false);
    expect(existsSync(children)).toBe(false);
    expect(existsSync(scratch)).toBe(false);
  });
});
