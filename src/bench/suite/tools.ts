/**
 * Tools a verifier needs that this machine lacks, found by `bench validate-suite` before anything
 * runs: a check that calls `go`, `kustomize`, `yarn` or `pdm` fails on a machine without them
 * whatever the agent wrote, so an untouched pass ratio measured here says nothing about the
 * verifier. Only tools named below are looked for (a verifier's string literals hold many words);
 * each comes with what would fix it.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { findOnPath } from "../../env/sandbox/bubblewrap.js";
import { programsStarted } from "../../env/setup/test-time-installs.js";
import { pythonLogicalLines } from "../../env/verifier/keyword-scan-python.js";
import type { SuiteRequirement } from "./types.js";

const fixes: Readonly<Record<string, string>> = {
  go: "install Go (apt-get install golang-go) or use a container image with Go",
  gofmt: "install Go (apt-get install golang-go)",
  kustomize: "install kustomize (a release binary on PATH) or use an image with it",
  kubectl: "install kubectl or use an image with it",
  helm: "install helm or use an image with it",
  yarn: "enable it with corepack (corepack enable) or npm install --global yarn",
  pnpm: "enable it with corepack (corepack enable)",
  pdm: "install pdm into the prepared environment (pip install pdm) or the image",
  poetry: "install poetry into the prepared environment or the image",
  cargo: "install Rust (apt-get install cargo)",
  mvn: "install Maven (apt-get install maven)",
  gradle: "install Gradle or use an image with it",
  java: "install a JDK (apt-get install default-jdk-headless)",
  dotnet: "install the .NET SDK or use an image with it",
  terraform: "install terraform or use an image with it",
  actionlint: "install actionlint or use an image with it",
  yamllint: "install yamllint (apt-get install yamllint)",
  shellcheck: "install shellcheck (apt-get install shellcheck)",
  bazel: "install bazel (bazelisk) or use an image with it",
  dbt: "install dbt into the prepared environment",
  clojure: "install the Clojure CLI or use an image with it",
  lein: "install Leiningen or use an image with it",
  zig: "install zig or use an image with it",
  bun: "install bun or use an image with it",
  docker:
    "a container engine inside the verifier's sandbox (rarely possible): expect the check to fail",
  node: "install Node.js (apt-get install nodejs)",
  npm: "install npm (apt-get install npm)",
  npx: "install npm (apt-get install npm)",
};

/** Python modules a helper imports that are tools rather than libraries of the repository. */
const toolModules: Readonly<Record<string, string>> = {
  pdm: "pdm",
  poetry: "poetry",
};

export interface MissingTool {
  readonly program: string;
  readonly file: string;
  readonly line: number;
  readonly fix: string;
  /**
   * Test functions that start it in their own body; undefined when it is started outside any
   * test (a fixture, module code, a helper, the verifier's command), so every test needs it.
   */
  readonly tests?: number;
}

/** The test function (`def test_…`) enclosing each logical line of a Python file, by line. */
function testFunctionAt(content: string): (line: number) => string | undefined {
  const ranges: { name: string; indent: number; start: number; end: number }[] = [];
  const open: { name: string; indent: number; start: number; end: number }[] = [];
  for (const line of pythonLogicalLines(content)) {
    while ((open.at(-1)?.indent ?? -1) >= line.indent) open.pop();
    for (const range of open) range.end = line.line;
    const name = /^(?:async\s+)?def\s+(test\w*)/.exec(line.code)?.[1];
    if (name !== undefined) {
      const range = { name, indent: line.indent, start: line.line, end: line.line };
      ranges.push(range);
      open.push(range);
    }
  }
  return (line) => ranges.find((range) => range.start <= line && line <= range.end)?.name;
}

/** Known tools the requirement's verifier starts (or imports) that are not on PATH here. */
export async function missingVerifierTools(
  requirement: SuiteRequirement,
  path: string | undefined = process.env.PATH,
): Promise<MissingTool[]> {
  const files = [];
  for (const file of requirement.verifier.files.filter((name) => name.endsWith(".py"))) {
    files.push({
      path: file,
      content: await readFile(join(requirement.verifier.folder, file), "utf8"),
    });
  }
  const started = programsStarted(files);
  for (const file of files) {
    file.content.split("\n").forEach((text, index) => {
      const module = /^\s*(?:import|from)\s+(\w+)/.exec(text)?.[1];
      const program =
        module === undefined || !Object.hasOwn(toolModules, module)
          ? undefined
          : toolModules[module];
      if (program !== undefined) started.push({ program, file: file.path, line: index + 1 });
    });
  }
  const commandWord = /^\S+/.exec(requirement.verifier.command)?.[0];
  if (commandWord !== undefined)
    started.push({ program: commandWord, file: "verifier command", line: 0 });
  const missing = new Map<string, MissingTool>();
  const testsOf = new Map<string, Set<string> | "all">();
  const enclosingTest = new Map(files.map((file) => [file.path, testFunctionAt(file.content)]));
  for (const { program, file, line } of started) {
    // Own keys only: a word such as `constructor` must not find Object's prototype.
    const fix = Object.hasOwn(fixes, program) ? fixes[program] : undefined;
    if (fix === undefined || findOnPath(program, path) !== null) continue;
    if (!missing.has(program)) missing.set(program, { program, file, line, fix });
    const test = enclosingTest.get(file)?.(line);
    const seen = testsOf.get(program) ?? new Set<string>();
    testsOf.set(
      program,
      test === undefined || seen === "all" ? "all" : seen.add(`${file}:${test}`),
    );
  }
  return [...missing.values()].map((tool) => {
    const tests = testsOf.get(tool.program);
    return tests === undefined || tests === "all" ? tool : { ...tool, tests: tests.size };
  });
}

/** One sentence per missing tool, for validation warnings and check reasons. */
export function describeMissingTool(tool: MissingTool): string {
  const where = tool.line === 0 ? tool.file : `${tool.file}:${tool.line}`;
  const which =
    tool.tests === undefined
      ? "every check needs it, so they fail"
      : `${tool.tests} test${tool.tests === 1 ? " needs" : "s need"} it; ${tool.tests === 1 ? "it fails" : "they fail"}`;
  return `the verifier runs \`${tool.program}\` (${where}), which is not installed here: ${which} for the missing tool, not for the agent — fix: ${tool.fix}`;
}
