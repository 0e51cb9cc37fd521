/**
 * Install commands verifiers run at test time. Some benchmark verifiers install dependencies from
 * inside the test (SWE-Skills-Bench v1: 21 files import a helper that runs `npm ci
 * --legacy-peer-deps` or `python -m pip install -r …`). Agents and verifiers get no network, so
 * such a command is served from the prepared environment or not at all: from the caches setup
 * fills for them (install-caches.ts: npm's cache, a folder of pip wheels). When setup itself had no network there
 * is nothing to serve them from, and the check says so before any agent time is spent, instead of
 * a crash ("Command failed … npm ci") or npm's retries running into the time limit.
 *
 * Found statically in the verifier's Python files: argument lists (`["npm", "ci", …]`,
 * `[sys.executable, "-m", "pip", "install", …]`) and command strings (`"pip install -e ."`). A
 * command inside a helper module's function counts only when a test file of the same verifier
 * names that function (the v1 helper defines installers for npm, go, dotnet and pip; each test
 * uses one).
 */
import { pythonLogicalLines } from "../verifier/keyword-scan-python.js";
import type { InstallCacheRecord } from "./install-caches.js";

export type TestTimeInstaller = "npm" | "yarn" | "pnpm" | "pip" | "go" | "dotnet";

export interface TestTimeInstall {
  readonly file: string;
  readonly line: number;
  readonly installer: TestTimeInstaller;
  /** The command as the verifier spells it (`npm ci --legacy-peer-deps`). */
  readonly command: string;
  /** The helper function it runs in, when it is in a helper module. */
  readonly via?: string;
  /**
   * `-r` without a literal file (`["pip", "install", "-r", path]`): the requirement files the
   * enclosing function names (`"requirements.txt"`, `os.path.join("requirements", "dev.txt")`),
   * relative to the repository; setup serves those that exist.
   */
  readonly requirementFiles?: readonly string[];
  /**
   * `test`: in a test function or another function of the test file (the tests calling it need
   * the network); `verifier`: in a fixture, module code or a helper module, which every test of
   * the file goes through.
   */
  readonly scope: "test" | "verifier";
}

interface SourceFile {
  readonly path: string;
  readonly content: string;
}

const installers: readonly { installer: TestTimeInstaller; pattern: RegExp }[] = [
  { installer: "npm", pattern: /^npm (?:ci|install|i)\b/ },
  { installer: "yarn", pattern: /^yarn(?: install)?(?:\s|$)/ },
  { installer: "pnpm", pattern: /^pnpm (?:install|i)\b/ },
  { installer: "pip", pattern: /^(?:\S*python3?(?:\.\d+)? -m )?pip3? install\b/ },
  { installer: "go", pattern: /^go (?:mod download|get)\b/ },
  { installer: "dotnet", pattern: /^dotnet restore\b/ },
];

/** The commands a logical line spells: string literals joined as an argument list, and alone. */
function commandsOf(text: string): string[] {
  const literals = [...text.matchAll(/[rbuRBU]?(["'])((?:(?!\1)[^\\\n]|\\.)*)\1/g)].map(
    (match) => match[2] ?? "",
  );
  const commands: string[] = [];
  // An argument list: the literals of one bracket, joined (`sys.executable` is not a literal,
  // so `[sys.executable, "-m", "pip", …]` reads as `-m pip install …`).
  for (const list of text.matchAll(/\[([^[\]]*)\]/g)) {
    const parts = [...(list[1] ?? "").matchAll(/(["'])((?:(?!\1)[^\\\n]|\\.)*)\1/g)].map(
      (match) => match[2] ?? "",
    );
    if (parts.length > 1) commands.push(parts.join(" ").replace(/^-m /, ""));
  }
  commands.push(...literals.map((literal) => literal.trim()));
  return commands;
}

function installerOf(command: string): TestTimeInstaller | undefined {
  return installers.find((candidate) => candidate.pattern.test(command))?.installer;
}

/** Install commands each test file of a verifier runs, itself or through its helper modules. */
export function findTestTimeInstalls(files: readonly SourceFile[]): TestTimeInstall[] {
  const python = files.filter((file) => file.path.endsWith(".py"));
  const tests = python.filter((file) => /(^|\/)(test_[^/]*|[^/]*_test)\.py$/.test(file.path));
  const found: TestTimeInstall[] = [];
  const seen = new Set<string>();
  for (const file of python) {
    const isTest = tests.includes(file);
    const functionTexts = topLevelFunctionTexts(file.content);
    const enclosing: { indent: number; name: string; fixture: boolean }[] = [];
    let decorators = "";
    for (const line of pythonLogicalLines(file.content)) {
      while ((enclosing.at(-1)?.indent ?? -1) >= line.indent) enclosing.pop();
      if (line.code.startsWith("@")) {
        decorators += line.code;
        continue;
      }
      const header = /^(?:async\s+)?def\s+(\w+)/.exec(line.code);
      if (header !== null) {
        const fixture = /\bfixture\b/.test(decorators);
        enclosing.push({ indent: line.indent, name: header[1] ?? "", fixture });
      }
      decorators = "";
      // Messages and docstrings mention commands without running them.
      if (/^(?:""|assert\b|raise\b|print\(|pytest\.(?:skip|fail|xfail)\()/.test(line.code))
        continue;
      for (const command of commandsOf(line.text)) {
        const installer = installerOf(command);
        if (installer === undefined) continue;
        const topLevel = enclosing[0]?.name;
        // A helper's installer matters only when a test of this verifier calls its function.
        if (
          !isTest &&
          (topLevel === undefined ||
            !tests.some((test) => new RegExp(`\\b${topLevel}\\b`).test(test.content)))
        ) {
          continue;
        }
        const key = `${file.path}:${line.line}:${command}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const requirementFiles =
          installer === "pip" && /\s-r$/.test(command)
            ? requirementFilesNamed(functionTexts.get(topLevel ?? "") ?? line.text)
            : [];
        found.push({
          file: file.path,
          line: line.line,
          installer,
          command,
          ...(isTest || topLevel === undefined ? {} : { via: topLevel }),
          ...(requirementFiles.length === 0 ? {} : { requirementFiles }),
          // Module code, a fixture or a helper module's function runs for every test; a test
          // file's own function or method runs for the tests that call it.
          scope:
            isTest && enclosing.length > 0 && !enclosing.some((entry) => entry.fixture)
              ? "test"
              : "verifier",
        });
      }
    }
  }
  return found;
}

/** The text of each top-level function of a Python file, by name (module code under ""). */
function topLevelFunctionTexts(content: string): Map<string, string> {
  const texts = new Map<string, string>();
  let current = "";
  for (const line of pythonLogicalLines(content)) {
    if (line.indent === 0) current = /^(?:async\s+)?def\s+(\w+)/.exec(line.code)?.[1] ?? "";
    texts.set(current, `${texts.get(current) ?? ""}\n${line.text}`);
  }
  return texts;
}

/** Requirement files a function names: `.txt` literals, and `os.path.join` of literals only. */
function requirementFilesNamed(text: string): string[] {
  const literal = /^\s*[rbuRBU]?(["'])((?:(?!\1)[^\\\n]|\\.)*)\1\s*$/;
  const files = new Set<string>();
  for (const join of text.matchAll(/os\.path\.join\(([^()]*)\)/g)) {
    const parts = (join[1] ?? "").split(",").map((part) => literal.exec(part)?.[2]);
    if (parts.every((part) => part !== undefined)) files.add(parts.join("/"));
  }
  for (const match of text.matchAll(/(["'])([\w./-]+\.txt)\1/g)) {
    const name = match[2] ?? "";
    // A part of a join already counted whole (`"base.txt"` of `join("requirements", "base.txt")`).
    if (![...files].some((file) => file.endsWith(`/${name}`))) files.add(name);
  }
  return [...files].filter((file) => file.endsWith(".txt") && !file.startsWith("/"));
}

/** What the check knows of the environment a verifier runs in: its setup and its caches. */
export interface TestTimeSetup {
  readonly network?: string;
  readonly networkReason?: string;
  /** The caches setup planned and how each install is served (`SetupPlan.caches`). */
  readonly caches?: readonly InstallCacheRecord[];
  /** What became of setup's steps (a cache-filling step may have failed); absent for images. */
  readonly steps?: readonly { readonly command: string; readonly outcome: string }[];
}

/** Marks a reason that is there because setup ran offline (it is said with that). */
const OFFLINE = "\u0000offline:";

/**
 * Why one install of the verifier cannot be served here, or undefined when the environment's
 * cache serves it: setup filled the cache (its filling steps succeeded), setup's own install
 * filled it, or the install has nothing to do here.
 */
function unservedReason(install: TestTimeInstall, setup: TestTimeSetup): string | undefined {
  const served = setup.caches
    ?.find((cache) => cache.installer === install.installer)
    ?.installs.find((entry) => entry.command === install.command);
  const offline = setup.network !== "online";
  if (served === undefined) return offline ? "" : undefined;
  switch (served.served) {
    case "nothing":
      return undefined;
    case "unservable":
      return served.reason ?? "no cache serves it";
    case "offline":
      // Setup had no network: the reason (a git URL it would have mirrored) is said with that.
      return served.reason === undefined ? "" : `${OFFLINE}${served.reason}`;
    case "setup":
      return offline ? "" : undefined;
    case "cache": {
      // An image build runs the steps inside the image: no outcome per step to read.
      if (setup.steps === undefined) return undefined;
      const failed = (served.fill ?? []).find(
        (command) => setup.steps?.find((step) => step.command === command)?.outcome !== "ok",
      );
      if (failed === undefined) return undefined;
      const outcome = setup.steps?.find((step) => step.command === failed)?.outcome;
      const mirror = served.mirrors?.find((entry) => failed.includes(entry.path));
      return `setup could not fill the ${install.installer} cache (\`${failed}\` ${outcome === undefined ? "did not run" : outcome}; see the setup log)${mirror === undefined ? "" : `: ${mirror.where} names \`${mirror.url}\`, which git clones at every install`}`;
    }
  }
}

/**
 * Why a verifier cannot run here, or undefined when its test-time installs can be served: each
 * install that runs for every test (a fixture, module code, a helper) must be served by a cache
 * of the environment. Setup that had no network filled no cache; an install that fetches from a
 * VCS host at every install cannot be served at all.
 */
export function testTimeNetworkProblem(
  installs: readonly TestTimeInstall[],
  setup: TestTimeSetup,
): string | undefined {
  const blocking = installs
    .filter((install) => install.scope === "verifier")
    .map((install) => ({ install, reason: unservedReason(install, setup) }))
    .filter(
      (entry): entry is { install: TestTimeInstall; reason: string } => entry.reason !== undefined,
    );
  if (blocking.length === 0) return undefined;
  const listed = blocking
    .slice(0, 3)
    .map(({ install, reason }) => {
      const said = reason.startsWith(OFFLINE) ? reason.slice(OFFLINE.length) : reason;
      return `${install.file}:${install.line} runs \`${install.command}\`${install.via === undefined ? "" : ` (in ${install.via})`}${said === "" ? "" : `: ${said}`}`;
    })
    .join("; ");
  const more = blocking.length > 3 ? `; and ${blocking.length - 3} more` : "";
  if (blocking.every(({ reason }) => reason !== "" && !reason.startsWith(OFFLINE))) {
    return `needs network at test time: ${listed}${more}; verifier runs have no network`;
  }
  const why =
    setup.network === undefined
      ? "the environment was prepared without setup"
      : `setup ran offline${setup.networkReason === undefined ? "" : ` (${setup.networkReason})`}`;
  return `needs network at test time: ${listed}${more}; ${why}, so no package cache holds what these install and verifier runs have no network — prepare the environment with the network (--setup-network on) so setup fills the cache they are served from`;
}

/**
 * Programs a verifier's Python files start: the first word of each argument list or command
 * string on a line that is not a message or docstring. Callers keep only the names they know.
 */
export function programsStarted(
  files: readonly SourceFile[],
): { program: string; file: string; line: number }[] {
  const found: { program: string; file: string; line: number }[] = [];
  const python = files.filter((candidate) => candidate.path.endsWith(".py"));
  const tests = python.filter((file) => /(^|\/)(test_[^/]*|[^/]*_test)\.py$/.test(file.path));
  for (const file of python) {
    let topLevel: string | undefined;
    for (const line of pythonLogicalLines(file.content)) {
      if (line.indent === 0) topLevel = /^(?:async\s+)?def\s+(\w+)/.exec(line.code)?.[1];
      // A helper module's function counts only when a test of this verifier names it.
      if (
        !tests.includes(file) &&
        (topLevel === undefined ||
          !tests.some((test) => new RegExp(`\\b${topLevel}\\b`).test(test.content)))
      ) {
        continue;
      }
      if (/^(?:""|assert\b|raise\b|print\(|pytest\.(?:skip|fail|xfail)\()/.test(line.code))
        continue;
      for (const command of commandsOf(line.text)) {
        const program = /^([\w.+-]+)(?:\s|$)/.exec(command)?.[1];
        if (program !== undefined) found.push({ program, file: file.path, line: line.line });
      }
    }
  }
  return found;
}
