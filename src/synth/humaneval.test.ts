import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { selfLoopingLink } from "../../test/support/temporary.js";
import { InputError } from "../core/errors.js";
import { UnsafeSandbox } from "../env/index.js";
import { renderVisible, visibleView } from "./family.js";
import { doctestAsserts, HumanEvalTaskFamily, humanEvalPathOf, moduleOf } from "./humaneval.js";

const fixture = join(import.meta.dirname, "..", "..", "..", "shared", "fixtures", "humaneval");
const hasFixture = existsSync(join(fixture, "HumanEval.jsonl.gz"));

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});
async function folder(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), "skillsmith-humaneval-unit-"));
  folders.push(path);
  return path;
}

const family = (path: string) => new HumanEvalTaskFamily({ path, sandbox: new UnsafeSandbox() });

const record = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    task_id: id,
    prompt: `def f_${id}(x):\n    """Return x."""\n`,
    canonical_solution: "    return x\n",
    test: "def check(candidate):\n    assert candidate(1) == 1\n",
    entry_point: `f_${id}`,
    ...extra,
  });

describe.skipIf(!hasFixture)(
  "HumanEval family on the real data (needs ../shared/fixtures/humaneval)",
  () => {
    it("loads 164 tasks from the folder, shows only the prompt, and records the dataset's hash", async () => {
      const humanEval = family(fixture);
      const tasks = await humanEval.loadTasks();
      expect(tasks).toHaveLength(164);
      expect(tasks[0]?.id).toBe("HumanEval/0");
      const first = tasks[0];
      if (first === undefined) throw new Error("no task");
      const view = visibleView(humanEval, first);
      expect(Object.keys(view.fields)).toEqual(["prompt"]);
      expect(renderVisible(view)).toMatch(
        /^prompt:\nfrom typing import List\n\n\ndef has_close_elements/,
      );
      // The evaluator-only fields are loaded (the evaluator needs them) and kept out of the view.
      expect(Object.keys(first.hidden).sort()).toEqual([
        "canonical_solution",
        "entry_point",
        "test",
      ]);
      expect(JSON.stringify(view)).not.toContain(first.hidden.canonical_solution?.trim() ?? "x");
      expect(JSON.stringify(view)).not.toContain("def check(candidate)");
      expect(humanEval.settings).toMatchObject({
        dataset: join(fixture, "HumanEval.jsonl.gz"),
        tasks: 164,
        python: "/usr/bin/python3",
        taskTimeoutMs: 10_000,
        sandbox: "unsafe",
      });
      expect(humanEval.settings.datasetSha256).toMatch(/^[0-9a-f]{64}$/);
    });

    it("splits 82 : 82, disjoint, the same for a seed whatever the order, another for another seed", async () => {
      const humanEval = family(fixture);
      const tasks = await humanEval.loadTasks();
      const ids = (split: "train" | "test", seed: number, from = tasks) =>
        humanEval.split(from, split, seed).map((task) => task.id);
      const train = ids("train", 7);
      const test = ids("test", 7);
      expect([train.length, test.length]).toEqual([82, 82]);
      expect(new Set([...train, ...test]).size).toBe(164);
      expect(ids("train", 7, [...tasks].reverse())).toEqual(train);
      expect(ids("train", 8)).not.toEqual(train);
    });
  },
);

describe("HumanEval family files", () => {
  it("reads .jsonl and .jsonl.gz, and names the file and line of a bad record", async () => {
    const directory = await folder();
    const plain = join(directory, "tasks.jsonl");
    await writeFile(plain, `${record("a")}\n\n${record("b")}\n`);
    expect((await family(plain).loadTasks()).map((task) => task.id)).toEqual(["a", "b"]);
    const gzipped = join(directory, "tasks.jsonl.gz");
    await writeFile(gzipped, gzipSync(`${record("c")}\n`));
    expect((await family(gzipped).loadTasks()).map((task) => task.id)).toEqual(["c"]);

    const bad = join(directory, "bad.jsonl");
    await writeFile(bad, `${record("a")}\n${record("b", { entry_point: "not an identifier" })}\n`);
    const error = await family(bad)
      .loadTasks()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).data).toMatchObject({ file: bad, line: 2, field: "entry_point" });

    const duplicate = join(directory, "duplicate.jsonl");
    await writeFile(duplicate, `${record("a")}\n${record("a")}\n`);
    await expect(family(duplicate).loadTasks()).rejects.toThrow(/duplicate task_id "a"/);
    await writeFile(join(directory, "torn.jsonl"), `${record("a")}\n{"task_id": `);
    await expect(family(join(directory, "torn.jsonl")).loadTasks()).rejects.toThrow(
      /not valid JSON/,
    );
    await expect(family(join(directory, "missing")).loadTasks()).rejects.toThrow(
      /no such file or folder/,
    );
    // A folder without HumanEval.jsonl(.gz) in it.
    await expect(family(directory).loadTasks()).rejects.toThrow(/holds neither/);
    // One whose dataset is there but unreadable (a link loop): said so, not "holds neither".
    await selfLoopingLink(directory, "HumanEval.jsonl.gz");
    await expect(family(directory).loadTasks()).rejects.toMatchObject({
      code: "core.file-unreadable",
      location: { file: join(directory, "HumanEval.jsonl.gz") },
    });
  });

  it("parses humaneval:<path> family names", () => {
    expect(humanEvalPathOf("humaneval:data/HumanEval.jsonl.gz")).toBe("data/HumanEval.jsonl.gz");
    expect(humanEvalPathOf("humaneval:")).toBe("");
    expect(humanEvalPathOf("builtin")).toBeUndefined();
  });
});

describe("doctestAsserts and moduleOf", () => {
  it("turns single-line doctest examples into asserts and skips the rest", () => {
    const prompt = [
      "def f(x):",
      '    """Double x.',
      "    >>> f(2)",
      "    4",
      "    >>> f(-1)",
      "    -2",
      "    >>> for i in range(2):",
      "    ...     print(f(i))",
      "    0",
      "    2",
      "    >>> f('a')",
      "    'aa'",
      '    """',
    ].join("\n");
    expect(doctestAsserts(prompt)).toEqual([
      "assert (f(2)) == (4)",
      "assert (f(-1)) == (-2)",
      "assert (f('a')) == ('aa')",
    ]);
  });

  it("continues the prompt with a completion and appends a whole module", () => {
    const prompt = 'def f(x):\n    """Double x."""\n';
    expect(moduleOf(prompt, "    return 2 * x\n")).toBe(`${prompt}    return 2 * x\n`);
    expect(moduleOf(prompt, "def f(x):\n    return 2 * x\n")).toBe(
      `${prompt}\n\ndef f(x):\n    return 2 * x\n`,
    );
  });
});
