/**
 * Defence in depth, end to end: every row of `test/support/defence-attacks.ts` is the with-skill
 * arm of one requirement whose verifier defines fourteen checks; the stub package alone (the without
 * arm of every row) earns one. The stub is run once per sandbox, as the control's without arm,
 * and that stored result is every other row's without arm (`runAttackSuiteSharingStub`): the 24
 * identical stub runs per sandbox measured the same thing 24 times and were half the file's time. The hacks do not touch the runner, a report file, the console or
 * the exit status: they change what the checks see from inside the process. `runSuite`, the replay
 * agent and bubblewrap (and the container sandbox where it exists) run them.
 *
 * By hand: an attack that gains nothing scores 1/14; a caught one scores 0 and is flagged
 * `tampered` with evidence. The control skill's honest implementation (which itself uses
 * subprocess, pathlib, json, logging, dataclasses, enum, namedtuple and has unittest tests of its
 * own) passes all fourteen, unflagged. With every attack at ≤ 1/14 against the stub's 1/14 the
 * attacks skill can never be Golden.
 *
 * Set SKILLSMITH_ATTACK_TABLE=1 to print each row's score, flags and evidence.
 */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BenchReport } from "../src/bench/analysis/report.js";
import type { RunResult } from "../src/bench/store/results.js";
import type { SandboxV1 } from "../src/env/sandbox/types.js";
import {
  attackPredictionLines,
  runAttackSuiteSharingStub,
  stubScores,
  writeAttackSkill,
} from "./support/attack-suite.js";
import {
  DEFENCE_ATTACKS,
  DEFENCE_CHECKS,
  DEFENCE_STUB_PASSED,
  type DefenceRow,
  HELPERS,
  HONEST_DEFENCE_FILES,
  TEST_DELIVERABLE,
} from "./support/defence-attacks.js";
import { availableContainerSandbox, usableBubblewrap } from "./support/sandboxes.js";
import { removeRunRoot, tinyRepository } from "./support/suites.js";

const bubblewrap = await usableBubblewrap();
const container = await availableContainerSandbox();
const STUB_RATIO = DEFENCE_STUB_PASSED / DEFENCE_CHECKS;
const STUB = { "tinycalc/__init__.py": '"""tinycalc: not implemented yet."""\n' };
const CONTROL: DefenceRow = {
  id: "control-honest",
  kind: "control",
  description: "a real implementation using subprocess, pathlib, json, logging and unittest",
  expect: "no-gain",
  layer: "none",
  files: HONEST_DEFENCE_FILES,
};

function verifierFor(python: string) {
  return {
    yaml: `command: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ${python} -m pytest -q -p no:cacheprovider --junitxml=junit.xml test_deliverable.py
files: [test_deliverable.py, helpers.py]
junit: junit.xml
timeoutSeconds: 120
`,
    files: { "test_deliverable.py": TEST_DELIVERABLE, "helpers.py": HELPERS },
  };
}

function describeResult(result: RunResult): string {
  return `${result.passed}/${result.total} = ${result.passRatio.toFixed(3)} flags [${result.flags.join(", ")}] evidence ${JSON.stringify(result.verifier?.evidence ?? [])}`;
}

const SANDBOXES: { name: string; sandbox: SandboxV1 | undefined; python: string }[] = [
  { name: "bubblewrap", sandbox: bubblewrap, python: "/usr/bin/python3" },
  { name: "container", sandbox: container, python: "python3" },
];

interface TableRun {
  readonly root: string;
  readonly results: RunResult[];
  readonly report: BenchReport;
}

/** One sandbox's table: every row's with and without arm through `runSuite`. */
async function runTable(sandbox: SandboxV1, python: string): Promise<TableRun> {
  const root = await mkdtemp(join(tmpdir(), "verifier-defence-"));
  const repository = await tinyRepository(root);
  const suite = join(root, "suite");
  await mkdir(suite, { recursive: true });
  await writeFile(
    join(suite, "suite.yaml"),
    "format: skillsmith-suite/1\nname: defence\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 120 }\n",
  );
  const verifier = verifierFor(python);
  await writeAttackSkill(suite, "attacks", repository, DEFENCE_ATTACKS, verifier);
  await writeAttackSkill(suite, "control", repository, [CONTROL], verifier);
  const predictions = join(root, "predictions.jsonl");
  await writeFile(
    predictions,
    `${[...attackPredictionLines("attacks", DEFENCE_ATTACKS, STUB), ...attackPredictionLines("control", [CONTROL], STUB)].join("\n")}\n`,
  );
  // The stub is measured once (the control's without arm) and shared by every attack's without
  // arm: 26 runs per sandbox instead of 50. Three runs at a time: a run mostly waits on its
  // sandbox (bubblewrap's or the engine's start, pytest's import), so a third overlaps the other
  // two's waits without starving them.
  const shared = {
    stubSkill: "control",
    stubRequirement: CONTROL.id,
    rows: DEFENCE_ATTACKS.map((row) => ({ skill: "attacks", requirement: row.id })),
  };
  return {
    root,
    ...(await runAttackSuiteSharingStub(root, suite, predictions, sandbox, shared, 3)),
  };
}

// Both sandboxes' tables start together when the file loads, and each half's hook awaits its own:
// the container half's engine waits overlap the bubblewrap half's CPU (they ran one after the
// other before). A failure is kept and thrown in the hook that awaits it.
const TABLES = new Map(
  SANDBOXES.flatMap(({ name, sandbox, python }) =>
    sandbox === undefined
      ? []
      : [
          [
            name,
            runTable(sandbox, python).then(
              (table) => ({ table }),
              (error: unknown) => ({ error }),
            ),
          ] as const,
        ],
  ),
);

for (const { name, sandbox } of SANDBOXES) {
  describe.skipIf(sandbox === undefined)(`verifier defence in depth (${name})`, () => {
    let root: string | undefined;
    let results: RunResult[] = [];
    let report: BenchReport;
    const resultOf = (requirement: string, arm: "with" | "without"): RunResult => {
      const found = results.find(
        (result) => result.requirement === requirement && result.arm === arm,
      );
      if (found === undefined) throw new Error(`no result for ${requirement}/${arm}`);
      return found;
    };

    beforeAll(async () => {
      const outcome = await TABLES.get(name);
      if (outcome === undefined) throw new Error(`no table was started for ${name}`);
      if ("error" in outcome) throw outcome.error;
      ({ root, results, report } = outcome.table);
    }, 1_500_000);

    afterAll(async () => {
      if (process.env.SKILLSMITH_ATTACK_TABLE === "1" && results.length > 0) {
        const lines = [...DEFENCE_ATTACKS, CONTROL].map(
          (row) =>
            `${row.id.padEnd(32)} ${row.layer.padEnd(28)} ${describeResult(resultOf(row.id, "with"))}`,
        );
        process.stderr.write(`\n${name}\n${lines.join("\n")}\n`);
      }
      if (root !== undefined) await removeRunRoot(root);
    });

    it("scores the stub alone at 1 of 14 checks, unflagged, in every without arm", () => {
      const rows = [...DEFENCE_ATTACKS, CONTROL];
      // One measurement shared by every row: each without arm is the control's stored run.
      const stub = resultOf(CONTROL.id, "without");
      expect(
        rows.filter((row) => resultOf(row.id, "without").startedAt !== stub.startedAt),
      ).toEqual([]);
      expect(stubScores(results, rows)).toEqual(
        rows.map((row) => ({
          row: row.id,
          passed: DEFENCE_STUB_PASSED,
          total: DEFENCE_CHECKS,
          flags: [],
        })),
      );
    });

    it("scores the honest implementation 14 of 14, unflagged, with no evidence", () => {
      const result = resultOf(CONTROL.id, "with");
      expect([result.passed, result.total, result.flags, result.verifier?.evidence ?? []]).toEqual([
        DEFENCE_CHECKS,
        DEFENCE_CHECKS,
        [],
        [],
      ]);
    });

    for (const row of DEFENCE_ATTACKS) {
      it(`${row.id} (${row.kind}, ${row.layer}): ${row.expect} — ${row.description}`, () => {
        const result = resultOf(row.id, "with");
        const shown = describeResult(result);
        const tampered = result.flags.includes("tampered");
        if (row.expect === "tampered") {
          expect(tampered, shown).toBe(true);
          expect(result.passRatio, shown).toBe(0);
          expect(result.verifier?.evidence?.length ?? 0, shown).toBeGreaterThan(0);
        } else if (tampered) {
          expect(result.passRatio, shown).toBe(0);
        } else {
          expect(result.passRatio, shown).toBeLessThanOrEqual(STUB_RATIO);
        }
      });
    }

    it("finds layer-5 evidence in the attacks' patches and none in the honest control's", () => {
      expect(resultOf(CONTROL.id, "with").patch?.scan ?? []).toEqual([]);
      const unseen = DEFENCE_ATTACKS.filter(
        (row) => (resultOf(row.id, "with").patch?.scan ?? []).length === 0,
      ).map((row) => row.id);
      if (process.env.SKILLSMITH_ATTACK_TABLE === "1") {
        process.stderr.write(
          `patch scan: no finding in ${unseen.length} of ${DEFENCE_ATTACKS.length} attacks: ${unseen.join(", ")}\n`,
        );
      }
      expect(unseen).toEqual([]);
    });

    it("never finds the attacks Golden", () => {
      const attacks = report.profiles.find((profile) => profile.skill === "attacks");
      expect(attacks?.class).not.toBe("golden");
      expect(attacks?.requirements).toHaveLength(DEFENCE_ATTACKS.length);
    });
  });
}
