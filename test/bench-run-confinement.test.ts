/**
 * A hostile run tries to read what it must not, through the paired runner in bubblewrap: a probe
 * patch applied by the replay agent (run by the verifier, in both arms), and the same probe typed
 * into the builtin agent's shell by a scripted model. Planted: a file in $HOME, a file beside the
 * suite, a verifier file the requirement does not hand out, the predictions file (the answer key),
 * the cache folder outside /tmp (where the other arm's workspace lives), the host's /etc/shadow
 * and a `*KEY*` variable of the runner's environment. Expected, by hand: the probe finds none of
 * them (both verifier checks pass, the builtin's shell prints no FOUND line), and no planted value
 * appears in any byte skillsmith stored or printed (the store and its WAL, trajectory files, the
 * manifest, the JSON and HTML reports).
 *
 * Before confinement, the same probe found every one of them: bubblewrap bound the host's `/`
 * read-only, and the default cache lived under the visible home folder.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSuite } from "../src/bench/run/runner.js";
import { ResultsStore } from "../src/bench/store/results.js";
import type { BubblewrapSandbox } from "../src/env/sandbox/bubblewrap.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { runInProcess } from "./support/cli.js";
import { usableBubblewrap } from "./support/sandboxes.js";
import {
  removeRunRoot,
  tinyRepository,
  writeAlphaSkill,
  writeRequirement,
} from "./support/suites.js";

const bubblewrap = await usableBubblewrap();
const marker = randomBytes(6).toString("hex");
const secret = (what: string) => `planted-${what}-${marker}`;
const keyVariable = `SKILLSMITH_PROBE_${marker.toUpperCase()}_API_KEY`;

let root: string;
let suite: string;
let predictions: string;
let cacheDir: string;
let homeFile: string;
let server: ScriptedServer | undefined;

function shadowDigest(): string | undefined {
  try {
    return createHash("sha256").update(readFileSync("/etc/shadow")).digest("hex");
  } catch {
    return undefined;
  }
}

/** The probe: prints `FOUND <what>: <content>` for each planted thing it can see, then probe-done. */
function probeScript(): string {
  const digest = shadowDigest();
  const targets: Record<string, string> = {
    "home-file": homeFile,
    "beside-suite": join(root, "beside-suite.txt"),
    "suite-verifier": join(
      suite,
      "skills",
      "alpha",
      "requirements",
      "r1",
      "verifier",
      "answer.txt",
    ),
    predictions,
    "cache-folder": cacheDir,
  };
  return [
    'show() { if [ -e "$2" ]; then echo "FOUND $1: $(cat "$2" 2>/dev/null; ls -R "$2" 2>/dev/null | head -20)"; fi; }',
    ...Object.entries(targets).map(([name, path]) => `show ${name} '${path}'`),
    ...(digest === undefined
      ? []
      : [
          `echo '${digest}  /etc/shadow' | sha256sum -c --status 2>/dev/null && echo "FOUND shadow: $(head -c 200 /etc/shadow)"`,
        ]),
    "env | grep -i key | sed 's/^/FOUND variable /'",
    "echo probe-done",
  ].join("\n");
}

/** A patch creating `path` with the given lines. */
function newFilePatch(path: string, text: string): string {
  const lines = text.split("\n");
  return `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join("\n")}\n`;
}

/** Runs the workspace's probe.sh (the code under test) and turns what it found into two checks. */
const CHECK_SCRIPT = `out=$(sh "$SKILLSMITH_WORKSPACE/probe.sh" 2>&1)
echo "$out"
found=$(echo "$out" | grep FOUND | tr -d '<>&"' | tr '\\n' ' ')
{
  echo '<testsuite name="probe">'
  if echo "$out" | grep -q probe-done; then echo '<testcase classname="probe" name="ran"/>'; else echo '<testcase classname="probe" name="ran"><failure message="probe did not run"/></testcase>'; fi
  if [ -z "$found" ]; then echo '<testcase classname="probe" name="nothing-found"/>'; else echo "<testcase classname=\\"probe\\" name=\\"nothing-found\\"><failure message=\\"$found\\"/></testcase>"; fi
  echo '</testsuite>'
} > junit.xml
`;

beforeAll(async () => {
  // Suite, predictions and run folder outside /tmp too, where users keep them.
  await mkdir(join(homedir(), ".cache"), { recursive: true });
  root = await mkdtemp(join(homedir(), ".cache", "bench-run-confine-"));
  suite = join(root, "suite");
  predictions = join(root, "predictions.jsonl");
  // Outside /tmp, like the default ~/.cache/skillsmith: sandboxes replace /tmp, not this.
  cacheDir = join(homedir(), ".cache", `skillsmith-confine-test-${marker}`);
  homeFile = join(homedir(), `.skillsmith-probe-${marker}`);
  await mkdir(cacheDir, { recursive: true });
  await writeFile(join(cacheDir, "planted.txt"), secret("cache"));
  await writeFile(homeFile, secret("home"));
  await writeFile(join(root, "beside-suite.txt"), secret("beside-suite"));
  process.env[keyVariable] = secret("variable");

  const { repo, commit } = await tinyRepository(root);
  const skill = await writeAlphaSkill(suite, {
    suiteYaml:
      "format: skillsmith-suite/1\nname: confine\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n  - id: builtin\n    agent: builtin\n    model: anthropic:claude-haiku-4-5\n    limits: { timeoutSeconds: 60, maxTurns: 4 }\n",
    skillYaml: `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Probes. Use when a task asks for a probe.\n---\n\n# Alpha\n\nProbe.\n",
  });
  await writeRequirement(skill, "r1", {
    requirementMarkdown:
      "## Requirement\n\nWrite probe.sh.\n\n## File Operations\n\n- `probe.sh`\n\n## Acceptance Criteria\n\n- it runs\n",
    checkScript: CHECK_SCRIPT,
    verifierYaml: "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\ntimeoutSeconds: 60\n",
  });
  // In the verifier folder, but not among the files this requirement's verifier is given.
  await writeFile(
    join(skill, "requirements", "r1", "verifier", "answer.txt"),
    secret("suite-verifier"),
  );
  const patch = newFilePatch("probe.sh", probeScript());
  await writeFile(
    predictions,
    `${["without", "with"].map((arm) => JSON.stringify({ skill: "alpha", requirement: "r1", arm, patch })).join("\n")}\n`,
  );
});

afterAll(async () => {
  delete process.env[keyVariable];
  await server?.close();
  await rm(homeFile, { force: true });
  await rm(cacheDir, { recursive: true, force: true });
  await removeRunRoot(root);
});

/** Every file below `folder`, recursively. */
function filesBelow(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe(`a probing run${bubblewrap === undefined ? " (skipped: bubblewrap unusable)" : ""}`, () => {
  it.skipIf(bubblewrap === undefined)(
    "finds nothing of the host, and nothing planted reaches what is stored or printed",
    async () => {
      const probe = probeScript();
      server = await startScriptedServer({
        script: {
          rules: [
            { match: { toolResult: "[\\s\\S]*" }, reply: { text: "Done." } },
            {
              match: { lastUserMessage: "probe" },
              reply: {
                toolCalls: [
                  {
                    name: "run_command",
                    input: { command: `cat > probe.sh <<'PROBE'\n${probe}\nPROBE\nsh probe.sh` },
                  },
                ],
              },
            },
          ],
          fallback: { text: "Nothing to do." },
        },
      });
      const runDir = join(root, "run");
      const summary = await runSuite({
        suite,
        runDir,
        predictions,
        sandbox: bubblewrap as BubblewrapSandbox,
        cacheDir,
        modelEndpoint: (configuration) =>
          configuration.agent === "builtin"
            ? { baseUrl: `${server?.url}/v1`, apiKey: secret("model-key") }
            : undefined,
      });
      expect(summary.failed).toEqual([]);
      expect(summary.executed).toBe(4);

      const store = ResultsStore.openReadOnly(runDir);
      const results = store.results();
      store.close();
      for (const result of results) {
        // The verifier ran the probe (in the builtin runs too: the agent wrote probe.sh) and it
        // found nothing: both checks pass.
        expect(
          result.checks.map((check) => `${check.name}:${check.status}`),
          `${result.config}/${result.arm}: ${JSON.stringify(result.checks)}`,
        ).toEqual(["probe::ran:pass", "probe::nothing-found:pass"]);
      }
      const builtinOutputs = results
        .filter((result) => result.config === "builtin")
        .map((result) => {
          const events = (result.trajectory as { events: { type: string; output?: string }[] })
            .events;
          return events.find((event) => event.type === "tool_result")?.output ?? "";
        });
      expect(builtinOutputs).toHaveLength(2);
      for (const output of builtinOutputs) {
        expect(output).toContain("probe-done");
        expect(output).not.toContain("FOUND");
      }

      const report = await runInProcess(["bench", "report", runDir, "--json"]);
      const html = join(root, "report.html");
      const htmlRun = await runInProcess(["bench", "report", runDir, "--html", html]);
      expect(report.code).toBe(0);
      expect(htmlRun.code).toBe(0);
      const stored = [
        ...filesBelow(runDir).map((file) => readFileSync(file)),
        readFileSync(html),
        Buffer.from(report.stdout + report.stderr + htmlRun.stdout + htmlRun.stderr),
      ];
      const planted = [
        "home",
        "beside-suite",
        "suite-verifier",
        "cache",
        "variable",
        "model-key",
      ].map(secret);
      const shadowStart = (() => {
        try {
          return readFileSync("/etc/shadow", "utf8").slice(0, 40);
        } catch {
          return undefined;
        }
      })();
      for (const bytes of stored) {
        for (const value of planted) expect(bytes.includes(value)).toBe(false);
        if (shadowStart !== undefined && shadowStart.length >= 20) {
          expect(bytes.includes(shadowStart)).toBe(false);
        }
      }
    },
  );
});
