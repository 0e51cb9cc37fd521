/**
 * `skillsmith eval <skill> --suite <suite>` on the quick start's suite (two skills, ten
 * requirements each), with the builtin agent on the scripted model server: the skill given is the
 * one evaluated, on its own requirements only; the suite's pinned repository is used without
 * `--repo`; the verdict line names the skill; the estimate counts the runs that will happen.
 *
 * The agent answers "Done." and writes nothing, so both arms fail every check: what is asserted
 * is which runs happen and what the output names, not an effect.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { runInProcess, writeTree } from "./support/cli.js";
import { hasPytest, usableBubblewrap } from "./support/sandboxes.js";

const bubblewrap = await usableBubblewrap();
const suite = resolve(import.meta.dirname, "..", "examples", "quickstart", "suite");
const moneySkill = join(suite, "skills", "money-decimal", "agent-skills", "money-decimal");

let scratch: string;
let server: ScriptedServer | undefined;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-eval-suite-"));
  server = await startScriptedServer({
    script: {
      rules: [],
      fallback: { text: "Done.", usage: { inputTokens: 1_000, outputTokens: 10 } },
    },
  });
});

/** `skillsmith eval` with the builtin agent on haiku, and the test's cache. */
function evaluate(args: readonly string[], env: Record<string, string> = {}) {
  return runInProcess([...args, "--agent", "builtin", "--model", "anthropic:claude-haiku-4-5"], {
    cwd: scratch,
    env: { ...process.env, SKILLSMITH_CACHE_DIR: join(scratch, "cache"), ...env },
  });
}

afterAll(async () => {
  await server?.close();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe("skillsmith eval --suite", () => {
  it.skipIf(!hasPytest || bubblewrap === undefined)(
    "evaluates the given skill on its own requirements, with the suite's repository, and names it",
    async () => {
      const run = await evaluate(
        [
          "eval",
          moneySkill,
          "--suite",
          suite,
          "--concurrency",
          "2",
          "--out",
          join(scratch, "work"),
        ],
        {
          ANTHROPIC_API_KEY: "sk-ant-api03-TESTKEY-eval-suite-1234567890",
          ANTHROPIC_BASE_URL: server?.url ?? "",
        },
      );
      const moneyRequirements = await readdir(
        join(suite, "skills", "money-decimal", "requirements"),
      );
      expect(moneyRequirements).toHaveLength(10);
      // Ten requirements × two arms: not the 40 runs of both skills.
      expect(run.stderr).toMatch(/20 runs to do \(0 stored\)/);
      expect(run.stderr).not.toMatch(/Error: |at .*\.ts:\d+/);
      expect(run.stdout).toMatch(/^(no )?verdict for money-decimal\b/m);
      const report = JSON.parse(await readFile(join(scratch, "work", "report.json"), "utf8"));
      expect(report.profiles.map((profile: { skill: string }) => profile.skill)).toEqual([
        "money-decimal",
      ]);
      const ids = report.profiles[0].requirements.map(
        (requirement: { id: string }) => requirement.id,
      );
      expect([...ids].sort()).toEqual([...moneyRequirements].sort());
      // Every evidence line about a requirement names one of the money skill's.
      const evidence = run.stdout.split("\n").filter((line) => /^ {2}[a-z]\d\d-/.test(line));
      expect(evidence).toHaveLength(10);
      for (const line of evidence) expect(moneyRequirements).toContain(line.trim().split(":")[0]);
      const state = JSON.parse(await readFile(join(scratch, "work", "eval.json"), "utf8"));
      // The repository the suite pins, recorded for the next call's comparison.
      expect(state.repository).toBe(join(suite, "..", "invoicer.bundle"));
    },
    900_000,
  );

  it("asks for --repo when no suite pins one (exit 2, no stack trace)", async () => {
    const run = await evaluate(["eval", moneySkill]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--repo <url|path>@<commit> is required unless --suite");
    expect(run.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });

  it("refuses a suite of other skills, naming them", async () => {
    const other = join(scratch, "unrelated");
    await writeTree(other, {
      "SKILL.md": "---\nname: unrelated\ndescription: Nothing the suite covers.\n---\n\nBody.\n",
    });
    const run = await evaluate([
      "eval",
      other,
      "--suite",
      suite,
      "--out",
      join(scratch, "unrelated-work"),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('the suite has no skill "unrelated"');
    expect(run.stderr).toContain("iso-dates, money-decimal");
  });
});
