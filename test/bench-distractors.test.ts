/**
 * Distractor skills (issue 29, a peer benchmark's treatment): `bench run --distractor <dir>` and
 * skill.yaml's `distractors:` install skills in every arm, the unassisted one included, while the
 * skill under test stays in its own arm. The manifest records each arm's skills by name and
 * digest, every report names them, and a distractor named like the skill under test is refused
 * before anything runs (installed beside it, an identical copy would put the skill under test
 * into the without arm; a different one would replace it).
 */
import { cp, mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerHarness, unregisterHarness } from "../src/agents/registry.js";
import { NoneHarness } from "../src/agents/replay.js";
import type { AgentRunRequest } from "../src/agents/types.js";
import { runInProcess } from "./support/cli.js";
import { removeRunRoot, writeTinySuite } from "./support/suites.js";

const AGENT = "distractor-test-agent";
const FOLDER = ".distractor-agent/skills";
let root: string;
/** Per arm: the skill folders the agent found in its workspace while it ran. */
const seen = new Map<string, string[]>();

const ALPHA =
  "---\nname: alpha\ndescription: Writes result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite good.\n";
const BETA =
  "---\nname: beta\ndescription: Formats tables. Use when a task asks for a table.\n---\n\n# Beta\n\nAlign columns.\n";

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "bench-distractors-"));
  registerHarness(
    AGENT,
    () => ({
      specificationVersion: "v1",
      name: AGENT,
      async run(request: AgentRunRequest) {
        const found = await readdir(join(request.workspace, FOLDER)).catch(() => []);
        seen.set(request.arm ?? "", [...found].sort());
        await writeFile(join(request.workspace, "result-r1.txt"), "good\n");
        return new NoneHarness().run(request);
      },
    }),
    { facts: { skillFolders: [FOLDER] } },
  );
});

afterAll(async () => {
  unregisterHarness(AGENT);
  await removeRunRoot(root);
});

/** A tiny suite whose configuration runs the test agent, in its own folder under the root. */
async function suiteIn(name: string): Promise<string> {
  const folder = join(root, name);
  await mkdir(folder);
  return writeTinySuite(folder, {
    suiteYaml: `format: skillsmith-suite/1\nname: distractors\nconfigurations:\n  - id: c1\n    agent: ${AGENT}\n    limits: { timeoutSeconds: 30 }\n`,
    skillMarkdown: ALPHA,
    checkScript: () =>
      'echo \'<testsuite name="r"><testcase classname="r" name="x"/></testsuite>\' > junit.xml\n',
  });
}

/** An Agent Skills folder `name` with `text` as its SKILL.md. */
async function skillFolder(name: string, text: string): Promise<string> {
  const folder = join(root, "skills", name);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, "SKILL.md"), text);
  return folder;
}

function run(suite: string, runDir: string, extra: readonly string[]) {
  return runInProcess([
    "bench",
    "run",
    suite,
    "--out",
    runDir,
    "--sandbox",
    "unsafe",
    "--no-check",
    "--requirement",
    "r1",
    ...extra,
  ]);
}

interface ManifestArm {
  skill: string;
  arm: string;
  skills: Array<{ name: string; role: string; digest: string }>;
}

describe("distractor skills", () => {
  it("are installed in both arms, the skill under test in its arm only, and every report names them", async () => {
    const suite = await suiteIn("installed");
    const beta = await skillFolder("beta", BETA);
    const runDir = join(root, "installed", "run");
    const result = await run(suite, runDir, ["--distractor", beta]);
    expect(result.stderr).not.toContain("failed after");
    expect(seen.get("without")).toEqual(["beta"]);
    expect(seen.get("with")).toEqual(["alpha", "beta"]);

    const manifest = JSON.parse(await readFile(join(runDir, "manifest.json"), "utf8")) as {
      armSkills: ManifestArm[];
      commandLines: string[][];
    };
    const arm = (name: string) => manifest.armSkills.find((entry) => entry.arm === name);
    expect(arm("without")?.skills.map(({ name, role }) => `${name}/${role}`)).toEqual([
      "beta/distractor",
    ]);
    expect(arm("with")?.skills.map(({ name, role }) => `${name}/${role}`)).toEqual([
      "alpha/treatment",
      "beta/distractor",
    ]);
    const [alphaDigest, betaDigest] = arm("with")?.skills.map((skill) => skill.digest) ?? [];
    expect(alphaDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(betaDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(alphaDigest).not.toBe(betaDigest);
    expect(arm("without")?.skills[0]?.digest).toBe(betaDigest);
    expect(manifest.commandLines[0]).toContain("--distractor");

    // The text report (bench run's and bench report's), the JSON report and the HTML report.
    expect(result.stdout).toContain(`without: beta (distractor, ${betaDigest?.slice(0, 12)})`);
    expect(result.stdout).toContain(
      `with: alpha (treatment, ${alphaDigest?.slice(0, 12)}), beta (distractor, ${betaDigest?.slice(0, 12)})`,
    );
    const html = join(root, "installed", "report.html");
    const json = await runInProcess(["bench", "report", runDir, "--json", "--html", html]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { armSkills: ManifestArm[] };
    expect(report.armSkills).toEqual(manifest.armSkills);
    const page = await readFile(html, "utf8");
    expect(page).toMatch(
      /data-testid="arm-skills" data-skill="alpha" data-arm="without"><td>alpha<\/td><td>without<\/td><td>beta \(distractor, [0-9a-f]{12}\)<\/td>/,
    );
    expect(page).toMatch(
      /data-arm="with"><td>alpha<\/td><td>with<\/td><td>alpha \(treatment, [0-9a-f]{12}\), beta \(distractor/,
    );

    // Resuming with another distractor content would mix two experiments under one arm.
    await writeFile(join(beta, "SKILL.md"), `${BETA}\nMore.\n`);
    const changed = await run(suite, runDir, ["--distractor", beta]);
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain("arm without of skill alpha installed beta (distractor");
    expect(changed.stderr).toContain("use a new --out folder");
  });

  it("refuse a distractor named like the skill under test, identical or not, before anything runs", async () => {
    const suite = await suiteIn("conflict");
    // An identical copy: installed in the without arm, it would be the skill under test there.
    const copy = join(root, "conflict", "copy", "alpha");
    await cp(join(suite, "skills", "alpha", "agent-skills", "alpha"), copy, { recursive: true });
    const other = await skillFolder("alpha", ALPHA.replace("Write good.", "Write bad."));
    for (const folder of [copy, other]) {
      seen.clear();
      const runDir = join(root, "conflict", folder === copy ? "run-copy" : "run-other");
      const result = await run(suite, runDir, ["--distractor", folder]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `distractor ${folder} is named "alpha", like the with arm's skill`,
      );
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(seen.size).toBe(0);
    }
  });

  it("come from skill.yaml's distractors: as well, checked the same way", async () => {
    const suite = await suiteIn("yaml");
    const skill = join(suite, "skills", "alpha");
    await mkdir(join(skill, "distractors", "beta"), { recursive: true });
    await writeFile(join(skill, "distractors", "beta", "SKILL.md"), BETA);
    const yaml = await readFile(join(skill, "skill.yaml"), "utf8");
    await writeFile(join(skill, "skill.yaml"), `${yaml}distractors: [distractors/beta]\n`);
    seen.clear();
    const result = await run(suite, join(root, "yaml", "run"), []);
    expect(result.stderr).not.toContain("failed after");
    expect(seen.get("without")).toEqual(["beta"]);
    expect(seen.get("with")).toEqual(["alpha", "beta"]);

    // The skill under test listed as its own distractor: refused, not installed in both arms.
    await writeFile(
      join(skill, "skill.yaml"),
      `${yaml}distractors: [distractors/beta, agent-skills/alpha]\n`,
    );
    seen.clear();
    const refused = await run(suite, join(root, "yaml", "run-2"), []);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is named "alpha", like the with arm\'s skill');
    expect(seen.size).toBe(0);
  });

  it("join a multi-skill treatment given on bench run's command line (--variant name=dirA,dirB)", async () => {
    const suite = await suiteIn("treatment");
    const beta = join(root, "skills", "beta");
    const gamma = await skillFolder("gamma", BETA.replaceAll("beta", "gamma"));
    const delta = await skillFolder("delta", BETA.replaceAll("beta", "delta"));
    const runDir = join(root, "treatment", "run");
    seen.clear();
    const result = await run(suite, runDir, [
      "--variant",
      `pair=${gamma},${delta}`,
      "--distractor",
      beta,
    ]);
    expect(result.stderr).not.toContain("failed after");
    expect(seen.get("without")).toEqual(["beta"]);
    expect(seen.get("with")).toEqual(["alpha", "beta"]);
    expect(seen.get("variant:pair")).toEqual(["beta", "delta", "gamma"]);
    const manifest = JSON.parse(await readFile(join(runDir, "manifest.json"), "utf8")) as {
      armSkills: ManifestArm[];
    };
    expect(
      manifest.armSkills
        .find((entry) => entry.arm === "variant:pair")
        ?.skills.map(({ name, role }) => `${name}/${role}`),
    ).toEqual(["gamma/treatment", "delta/treatment", "beta/distractor"]);
    expect(result.stdout).toMatch(
      /variant:pair: gamma \(treatment, [0-9a-f]{12}\), delta \(treatment/,
    );
  });
});
