/**
 * skillsmith as a user's dependency: `npm pack` the package (dist/ as built by `npm test`'s
 * pretest), install the tarball in a fresh project from the npm cache, and use it there by name:
 * - what a user gets by default (npm installs non-optional peers, never optional ones) weighs at
 *   most 120 MB: the heavy packages are optional peers, absent here, and the root validates a
 *   skill and runs the statistics without them, while a feature that needs one says which to
 *   install;
 * - Node imports the root and every subpath; the root loads no heavy package;
 * - `tsc` (strict) compiles a file against the package's declarations, with type errors where
 *   the types must refuse a call (so declarations that degraded to `any` fail the test), and
 *   the root's declarations check with `skipLibCheck: false`;
 * - a harness and a sandbox written in the user's project, registered from outside the package,
 *   run a tiny suite end to end (real git repository, the suite's verifier in bubblewrap);
 * - an error made by a second copy of the package is recognised by the first: the runner takes
 *   a harness's foreign `InputError` for the user's mistake it is (stops) instead of an
 *   infrastructure failure (retries).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, cp, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeRunRoot, TINY_MOUNT, writeTinySuite } from "./support/suites.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "..");
const built = existsSync(join(root, "dist", "index.js"));
const bubblewrap = existsSync("/usr/bin/bwrap");

/** Packages only some uses need: none may load when a program imports the root. */
const HEAVY = [
  "bullmq",
  "ioredis",
  "dockerode",
  "ai",
  "@ai-sdk/anthropic",
  "@ai-sdk/openai",
  "@ai-sdk/openai-compatible",
  "linkedom",
  "@mozilla/readability",
  "web-tree-sitter",
  "@modelcontextprotocol/sdk",
  "vega",
  "vega-lite",
  "playwright-core",
];

/** The optional peer dependencies: package.json must declare each one optional, and a default
 * install must not bring it. */
const OPTIONAL_PEERS = [
  "@modelcontextprotocol/sdk",
  "@mozilla/readability",
  "bullmq",
  "dockerode",
  "linkedom",
  "playwright-core",
  "tree-sitter-wasms",
  "vega",
  "vega-embed",
  "vega-lite",
  "web-tree-sitter",
];
/** The issue's limit for someone importing skillsmith for validation or statistics. */
const INSTALL_LIMIT_MB = 120;

let work: string;

/** `tsc -p .` in `folder` with this checkout's TypeScript: its exit code and what it printed. */
function typecheck(
  folder: string,
): Promise<{ code: number | undefined; output: string | undefined }> {
  const tsc = join(root, "node_modules", ".bin", "tsc");
  return run(tsc, ["-p", "."], { cwd: folder }).then(
    () => ({ code: 0, output: "" }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code, output: error.stdout }),
  );
}
let project: string;

async function node(
  script: string,
  args: readonly string[] = [],
  options: { env?: NodeJS.ProcessEnv } = {},
) {
  const file = join(project, `script-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(file, script);
  const { stdout } = await run(process.execPath, [file, ...args], {
    cwd: project,
    env: { ...process.env, ...options.env },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "null");
}

beforeAll(async () => {
  if (!built) return;
  work = await mkdtemp(join(tmpdir(), "skillsmith-package-"));
  project = join(work, "project");
  await mkdir(project);
  // dist/ is current: `npm test` builds it first. Scripts off: `prepare` would build again.
  const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", work], {
    cwd: root,
  });
  const tarball = join(work, packed.stdout.trim().split("\n").at(-1) ?? "");
  await writeFile(
    join(project, "package.json"),
    `${JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { skillsmith: `file:${tarball}` } }, null, 2)}\n`,
  );
  // From the npm cache (warm on these machines); no install scripts, so nothing compiles.
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd: project,
    maxBuffer: 16 * 1024 * 1024,
  });
  // better-sqlite3's addon is built by its install script (a C compiler and minutes on these
  // machines): use the one built for this checkout, which is the same pinned version.
  const ours = JSON.parse(
    await readFile(join(root, "node_modules/better-sqlite3/package.json"), "utf8"),
  );
  const theirs = JSON.parse(
    await readFile(join(project, "node_modules/better-sqlite3/package.json"), "utf8"),
  );
  expect(theirs.version).toBe(ours.version);
  await mkdir(join(project, "node_modules/better-sqlite3/build/Release"), { recursive: true });
  await copyFile(
    join(root, "node_modules/better-sqlite3/build/Release/better_sqlite3.node"),
    join(project, "node_modules/better-sqlite3/build/Release/better_sqlite3.node"),
  );
  // A second copy of the package, as a plugin bundling its own would bring.
  await cp(
    join(project, "node_modules/skillsmith"),
    join(project, "node_modules/skillsmith-copy"),
    {
      recursive: true,
    },
  );
  // Packing and installing the package ran out of 240 s at load 25.
}, 900_000);

afterAll(async () => {
  if (work !== undefined) await removeRunRoot(work);
});

describe.skipIf(!built)("the packed package (dist/ built by `npm test`'s pretest)", () => {
  it("ships declarations and code, no source maps or tests", async () => {
    const files = (await run("tar", ["tzf", join(work, "skillsmith-0.1.0.tgz")])).stdout.split(
      "\n",
    );
    for (const entry of ["index", "stats/public", "bench/public", "agents/public", "env/public"]) {
      expect(files).toContain(`package/dist/${entry}.js`);
      expect(files).toContain(`package/dist/${entry}.d.ts`);
    }
    expect(files.filter((file) => file.endsWith(".map") || /\.test\./.test(file))).toEqual([]);
  });

  it("installs at most 120 MB by default, with none of the optional peers", async () => {
    const manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
    for (const name of OPTIONAL_PEERS) {
      expect(manifest.peerDependenciesMeta?.[name], name).toEqual({ optional: true });
      expect(manifest.dependencies?.[name], name).toBeUndefined();
      // This repository's own install still gets it, for its tests.
      expect(manifest.devDependencies?.[name], name).toBeDefined();
      expect(existsSync(join(project, "node_modules", name)), name).toBe(false);
    }
    // Before the copy of the package made in beforeAll, which a user does not have.
    const { stdout } = await run("du", ["-sk", "--exclude=skillsmith-copy", "node_modules"], {
      cwd: project,
    });
    const megabytes = Number(stdout.split("\t")[0]) / 1024;
    console.log(`default install of the packed package: ${megabytes.toFixed(1)} MB`);
    expect(megabytes).toBeLessThanOrEqual(INSTALL_LIMIT_MB);
  });

  it("validates a skill and runs the statistics without the heavy packages; a heavy feature names what to install", async () => {
    await mkdir(join(project, "skills", "alpha"), { recursive: true });
    await writeFile(
      join(project, "skills", "alpha", "SKILL.md"),
      "---\nname: alpha\ndescription: Format dates as ISO 8601. Use when a task prints or parses dates.\n---\n\n# Alpha\n\nWrite dates as `YYYY-MM-DD`.\n",
    );
    const result = await node(`
import { signFlipTest, validateSkillFolder } from "skillsmith";
import { buildReport } from "skillsmith/bench";
import { renderHtmlReport } from "skillsmith/report";
const validation = await validateSkillFolder("skills/alpha");
const flips = signFlipTest([10, 20, 30, 40, 50, 60]);
let report;
try {
  renderHtmlReport(buildReport([]));
  report = "rendered";
} catch (error) {
  report = { name: error.name, code: error.code, message: error.message, packages: error.data.packages };
}
console.log(JSON.stringify({ valid: validation.valid, p: flips.p, report }));
`);
    expect(result.valid).toBe(true);
    expect(result.p).toBeCloseTo(2 / 64, 12);
    expect(result.report).toEqual({
      name: "DependencyMissingError",
      code: "core.dependency-missing",
      message: expect.stringMatching(
        /^install vega, vega-lite and vega-embed to use the HTML report's charts \(npm install vega@"\^[\d.]+" vega-lite@"\^[\d.]+" vega-embed@"\^[\d.]+"\)$/,
      ),
      packages: ["vega", "vega-lite", "vega-embed"],
    });
  });

  it("imports by name in Node: the root with what a user needs, every subpath", async () => {
    const result = await node(`
const root = await import("skillsmith");
const subpaths = {};
for (const name of ["stats", "skill", "bench", "agents", "env", "model", "report", "wiki", "synth"]) {
  subpaths[name] = Object.keys(await import("skillsmith/" + name)).length;
}
const flips = root.signFlipTest([10, 20, 30, 40, 50, 60]);
console.log(JSON.stringify({ root: Object.keys(root).sort(), subpaths, p: flips.p }));
`);
    expect(result.root).toEqual(
      expect.arrayContaining([
        "signFlipTest",
        "validateSkillFolder",
        "loadSuite",
        "runSuite",
        "registerHarness",
        "registerSandbox",
        "isSkillsmithError",
        "SkillsmithError",
        "benjaminiHochberg",
        "reportRunDir",
      ]),
    );
    // Six positive deltas: only the two all-equal-sign assignments of 64 reach |Σd|.
    expect(result.p).toBeCloseTo(2 / 64, 12);
    for (const count of Object.values(result.subpaths)) expect(count).toBeGreaterThan(3);
  });

  it("loads no heavy package when the root is imported", async () => {
    // A module hook records every ES module loaded and every CommonJS file resolved.
    await writeFile(
      join(project, "hooks.mjs"),
      `import { appendFileSync } from "node:fs";
export async function load(url, context, nextLoad) { appendFileSync(process.env.TRACE, url + "\\n"); return nextLoad(url, context); }
`,
    );
    await writeFile(
      join(project, "register.mjs"),
      `import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
register(new URL("./hooks.mjs", import.meta.url));
const Module = createRequire(import.meta.url)("node:module");
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) { const found = resolveFilename.apply(this, args); appendFileSync(process.env.TRACE, found + "\\n"); return found; };
`,
    );
    const trace = join(project, "trace.txt");
    await writeFile(trace, "");
    await run(
      process.execPath,
      ["--import", "./register.mjs", "--input-type=module", "-e", 'await import("skillsmith")'],
      {
        cwd: project,
        env: { ...process.env, TRACE: trace },
      },
    );
    const packages = new Set<string>();
    for (const line of (await readFile(trace, "utf8")).split("\n")) {
      const at = line.lastIndexOf("/node_modules/");
      if (at < 0) continue;
      const [first = "", second = ""] = line.slice(at + "/node_modules/".length).split("/");
      packages.add(first.startsWith("@") ? `${first}/${second}` : first);
    }
    packages.delete("skillsmith");
    // yaml: SKILL.md and suites; zod: suite schemas and the agents' log parsers.
    expect([...packages].sort()).toEqual(["yaml", "zod"]);
    expect(HEAVY.filter((name) => packages.has(name))).toEqual([]);
  });

  it("compiles a strict TypeScript file against the declarations, refusing wrong calls", async () => {
    await writeFile(
      join(project, "consumer.ts"),
      `import {
  type AgentHarnessV1,
  type BenchReport,
  InputError,
  isSkillsmithError,
  loadSuite,
  registerHarness,
  registerSandbox,
  runSuite,
  type SandboxV1,
  signFlipTest,
  validateSkillFolder,
} from "skillsmith";
import { type Profile, buildReport, REPORT_FORMAT } from "skillsmith/bench";
import { ClaudeCodeHarness, createHarness } from "skillsmith/agents";
import { UnsafeSandbox } from "skillsmith/env";
import { parseModelSpec } from "skillsmith/model";
import { renderHtmlReport } from "skillsmith/report";
import { benjaminiHochberg, detectableEffect } from "skillsmith/stats";
import { auditSkillFolder } from "skillsmith/skill";
import { searchSkills } from "skillsmith/wiki";
import { compareMethods } from "skillsmith/synth";

const p: number = signFlipTest([10, 20, -5]).p;
// @ts-expect-error the deltas are an array of numbers
signFlipTest(3);
// @ts-expect-error p is a number, not a string
const wrong: string = signFlipTest([1, 2]).p;
const q: number[] = benjaminiHochberg([p, 0.5]);
const lower: number | null = detectableEffect([10, 0, 20, 30, 40, 10]).interval.lower;

const harness: AgentHarnessV1 = createHarness("none");
registerHarness("mine", () => harness);
// @ts-expect-error a factory returns a harness, not a string
registerHarness("broken", () => "not a harness");
const sandbox: SandboxV1 = new UnsafeSandbox();
registerSandbox("mine", () => sandbox);

async function main(): Promise<void> {
  const validation = await validateSkillFolder("skill");
  const valid: boolean = validation.valid;
  const suite = await loadSuite("suite");
  const summary = await runSuite({ suite, runDir: "run", sandbox: "mine" });
  // @ts-expect-error runDir is required
  await runSuite({ suite });
  const executed: number = summary.executed;
  const report: BenchReport = buildReport([]);
  const format: typeof REPORT_FORMAT = report.format;
  const profile: Profile | undefined = report.profiles[0];
  const qValue: number | null | undefined = profile?.q;
  const html: string = renderHtmlReport(report);
  const spec = parseModelSpec("anthropic:claude-haiku-4-5", "--model");
  const audit = await auditSkillFolder("skill");
  try {
    throw new InputError("core.file-unreadable", "bad input", { file: "x.yaml", line: 3 });
  } catch (error) {
    if (isSkillsmithError(error, "input") && InputError.isInstance(error)) {
      const line: number | undefined = error.location.line;
      console.log(line);
    }
  }
  console.log(valid, executed, format, qValue, html.length, spec, audit, wrong, q, lower);
  console.log(ClaudeCodeHarness, searchSkills, compareMethods);
}
void main;
`,
    );
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2023"],
          noEmit: true,
          // The AI SDK's own declarations need @types/json-schema, which it does not install:
          // every project depending on it checks with skipLibCheck. The @ts-expect-error lines
          // above still fail if skillsmith's types were missing (everything would be `any`).
          skipLibCheck: true,
          types: ["node"],
          typeRoots: [join(root, "node_modules", "@types")],
        },
        files: ["consumer.ts"],
      }),
    );
    expect(await typecheck(project)).toEqual({ code: 0, output: "" });
    // tsc over the installed package: sized for a loaded machine.
  }, 300_000);

  it("checks the root's declarations with skipLibCheck: false", async () => {
    await mkdir(join(project, "strict"), { recursive: true });
    await writeFile(
      join(project, "strict", "consumer.ts"),
      `import * as skillsmith from "skillsmith";
import { type AgentHarnessV1, type BenchReport, signFlipTest, validateSkillFolder } from "skillsmith";
const p: number = signFlipTest([1, 2, 3]).p;
const report: BenchReport | undefined = undefined;
const harness: AgentHarnessV1 | undefined = undefined;
console.log(p, report, harness, validateSkillFolder, Object.keys(skillsmith));
`,
    );
    await writeFile(
      join(project, "strict", "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          // No "lib": the default for the target, which has the DOM's fetch types that the AI
          // SDK's own declarations (reached through the model types) refer to.
          noEmit: true,
          skipLibCheck: false,
          types: ["node"],
          typeRoots: [join(root, "node_modules", "@types")],
        },
        files: ["consumer.ts"],
      }),
    );
    expect(await typecheck(join(project, "strict"))).toEqual({ code: 0, output: "" });
    // tsc over the package and everything its root's types reach (the AI SDK, zod, Node's
    // types), every declaration checked: 238 s and 250 s at load 6-10 on two cores.
  }, 900_000);

  it.skipIf(!bubblewrap)(
    "runs a tiny suite with a harness and a sandbox registered from the user's project",
    async () => {
      const suite = await writeTinySuite(work, {
        suiteYaml:
          "format: skillsmith-suite/1\nname: tiny\nconfigurations:\n  - id: mine\n    agent: consumer-agent\n    limits: { timeoutSeconds: 30 }\n  - id: foreign\n    agent: copy-b-agent\n    limits: { timeoutSeconds: 30 }\n",
        skillMarkdown:
          "---\nname: alpha\ndescription: Write the word good into result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite `good`.\n",
        checkScript: (k) => `file="${TINY_MOUNT}/result-r${k}.txt"
{
  echo '<testsuite name="r${k}">'
  if [ -f "$file" ]; then echo '<testcase classname="r" name="exists"/>'; else echo '<testcase classname="r" name="exists"><failure message="missing"/></testcase>'; fi
  if [ "$(cat "$file" 2>/dev/null)" = good ]; then echo '<testcase classname="r" name="good"/>'; else echo '<testcase classname="r" name="good"><failure message="not good"/></testcase>'; fi
  echo '</testsuite>'
} > junit.xml
`,
      });
      const result = await node(
        `
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as skillsmith from "skillsmith";
import { BubblewrapSandbox } from "skillsmith/env";
import * as other from "skillsmith-copy";

const [suitePath, runDir, foreignRunDir, cacheDir] = process.argv.slice(2);
const trajectory = (request, harness) => ({
  version: 1, harness, taskId: request.taskId, arm: request.arm, events: [],
  skillsShown: [], skillsShownSource: "none", skillActivated: false,
  usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 }, wallTimeMs: 1,
  status: "completed", rawLog: "",
});

// The user's harness: with the skill it writes "good", without it "bad".
const runs = [];
skillsmith.registerHarness("consumer-agent", () => ({
  specificationVersion: "v1",
  name: "consumer-agent",
  async run(request) {
    const requirement = request.taskId.split("/")[1];
    runs.push(request.arm);
    await writeFile(join(request.workspace, "result-" + requirement + ".txt"), request.skillPaths ? "good" : "bad");
    return trajectory(request, "consumer-agent");
  },
}));
// A harness built against the second copy: it rejects with that copy's InputError.
skillsmith.registerHarness("copy-b-agent", () => ({
  specificationVersion: "v1",
  name: "copy-b-agent",
  async run() { throw new other.InputError("consumer.task-unusable", "this task cannot be given to the agent", { file: "task.md" }); },
}));
// The user's sandbox: bubblewrap underneath, plus its own policy and a record of every command.
const commands = [];
skillsmith.registerSandbox("audited", async () => {
  const inner = new BubblewrapSandbox();
  await inner.probe();
  return {
    specificationVersion: "v1",
    kind: "audited",
    async exec(request) {
      if (request.network === "host" && request.command.join(" ").includes("curl")) throw new Error("policy");
      commands.push(request.command.join(" "));
      return inner.exec(request);
    },
  };
});

const suite = await skillsmith.loadSuite(suitePath);
const summary = await skillsmith.runSuite({ suite, runDir, cacheDir, configs: ["mine"], sandbox: "audited" });
const report = await skillsmith.reportRunDir(runDir);
let foreign;
try {
  await skillsmith.runSuite({ suite, runDir: foreignRunDir, cacheDir, configs: ["foreign"], sandbox: "audited" });
  foreign = { rejected: false };
} catch (error) {
  foreign = {
    rejected: true,
    instanceOfOurs: error instanceof skillsmith.InputError,
    ours: skillsmith.InputError.isInstance(error),
    skillsmithError: skillsmith.isSkillsmithError(error, "input"),
    code: error.code,
  };
}
console.log(JSON.stringify({
  summary: { total: summary.total, executed: summary.executed, failed: summary.failed.length },
  profile: report.profiles.map((profile) => ({ config: profile.config, skill: profile.skill, requirements: profile.requirements.map((r) => [r.id, r.without, r.with]) })),
  runs: runs.sort(),
  verifierCommands: commands.filter((command) => command.includes("check.sh")).length,
  foreign,
}));
`,
        [suite, join(work, "run"), join(work, "run-foreign"), join(work, "cache")],
      );
      expect(result.summary).toEqual({ total: 4, executed: 4, failed: 0 });
      expect(result.runs).toEqual(["with", "with", "without", "without"]);
      // Every verifier ran through the user's sandbox: the 4 scored runs; once per requirement
      // (r1, r2) the inventory taken in an untouched copy of the base, which the check shares
      // with the runs; and the check before any agent runs, per requirement the verifier on the
      // untouched repository (2; there is no reference solution to run).
      expect(result.verifierCommands).toBe(4 + 2 + 2);
      // Without the skill the file says bad (1 of 2 checks), with it good (2 of 2).
      expect(result.profile).toEqual([
        {
          config: "mine",
          skill: "alpha",
          requirements: [
            ["r1", 0.5, 1],
            ["r2", 0.5, 1],
          ],
        },
      ]);
      // The foreign copy's InputError stopped the run as a user mistake (not retried).
      expect(result.foreign).toEqual({
        rejected: true,
        instanceOfOurs: false,
        ours: true,
        skillsmithError: true,
        code: "consumer.task-unusable",
      });
      const manifest = JSON.parse(await readFile(join(work, "run", "manifest.json"), "utf8"));
      expect(manifest.sandbox).toBe("audited");
    },
    // A run in a sandbox from the installed package: sized for a loaded machine.
    300_000,
  );
});
