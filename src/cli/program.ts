import { Command, CommanderError } from "commander";
import { isSkillsmithError } from "../core/errors.js";
import { packageVersion } from "../core/paths.js";
import { redactKnownSecrets, registerEnvironmentSecrets } from "../model/redact.js";
import type { CliIo, CommandContext } from "./context.js";

/** Exit codes, documented in the README. */
export const ExitCode = {
  ok: 0,
  findings: 1,
  usage: 2,
  failure: 3,
} as const;

export type Register = (program: Command, context: CommandContext) => void;

/** A top-level command group: its name and how to load the module that registers it. */
export interface CommandGroup {
  readonly name: string;
  readonly load: () => Promise<Register>;
}

/**
 * Every top-level command group, in the order `--help` lists them. Adding a command = adding a
 * line here (and its register function in `commands/<name>.ts`). Modules are imported on
 * demand: a command line naming one group loads only that group's module and what it imports,
 * which keeps `skillsmith --version` and `skill validate` at Node's own start-up cost instead
 * of every dependency of every command (see `groupsToLoad`).
 */
export const commandGroups: readonly CommandGroup[] = [
  {
    name: "quickstart",
    load: async () => (await import("./commands/quickstart.js")).registerQuickstart,
  },
  { name: "skill", load: async () => (await import("./commands/skill.js")).registerSkill },
  { name: "stats", load: async () => (await import("./commands/stats.js")).registerStats },
  { name: "model", load: async () => (await import("./commands/model.js")).registerModel },
  { name: "bench", load: async () => (await import("./commands/bench.js")).registerBench },
  { name: "synth", load: async () => (await import("./commands/synth.js")).registerSynth },
  { name: "wiki", load: async () => (await import("./commands/wiki.js")).registerWiki },
  { name: "view", load: async () => (await import("./commands/view.js")).registerView },
  { name: "worker", load: async () => (await import("./commands/worker.js")).registerWorker },
];

const versionFlags: ReadonlySet<string> = new Set(["-V", "--version"]);

/**
 * The groups a command line needs registered for commander to behave exactly as with all of
 * them: the one group it names (`skill …`, `help skill …`); none for a leading `--version`
 * (commander prints it while parsing, before any command matters); every group otherwise — the
 * top-level help, an unknown command (its "did you mean") and anything this scan does not
 * recognise, so an unforeseen command line costs time, never a different output.
 */
export function groupsToLoad(
  argv: readonly string[],
  groups: readonly CommandGroup[] = commandGroups,
): readonly CommandGroup[] {
  const named = (name: string | undefined): CommandGroup | undefined =>
    groups.find((group) => group.name === name);
  const first = argv[0];
  if (first !== undefined && versionFlags.has(first)) return [];
  // The top level has no options taking a value, so the first argument that is not a flag is
  // the command name. A flag before it (help, or an unknown one) is answered at the top level.
  if (first === undefined || first.startsWith("-")) return groups;
  if (first === "help") {
    const second = argv[1];
    const group = second === undefined || second.startsWith("-") ? undefined : named(second);
    return group === undefined ? groups : [group];
  }
  const group = named(first);
  return group === undefined ? groups : [group];
}

function defaultIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    env: process.env,
    stderrIsTerminal: process.stderr.isTTY === true,
  };
}

/**
 * Run the CLI in-process and return its exit code. Never calls `process.exit`; the binary's
 * entry point does that with the returned code. `groups` are the command groups registered
 * (by default those the command line needs; tests pass all of them to compare).
 */
export async function runCli(
  argv: readonly string[],
  ioOverrides: Partial<CliIo> = {},
  groups: readonly CommandGroup[] = groupsToLoad(argv),
): Promise<number> {
  const given: CliIo = { ...defaultIo(), ...ioOverrides };
  // The command's environment may not be this process's (tests, embedders): its keys are known
  // secrets for every store boundary too, not only for what is printed.
  registerEnvironmentSecrets(given.env);
  // The output boundary: whatever a command prints (reports, progress, errors) loses known keys.
  const io: CliIo = {
    ...given,
    stdout: (text) => given.stdout(redactKnownSecrets(text, given.env)),
    stderr: (text) => given.stderr(redactKnownSecrets(text, given.env)),
  };
  let exitCode: number = ExitCode.ok;
  const context: CommandContext = {
    io,
    exit(code) {
      exitCode = Math.max(exitCode, code);
    },
  };
  const program = await buildProgram(context, groups);
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    return exitCodeFor(error, io);
  }
  return exitCode;
}

/** The commander program with `groups` registered (all of them by default), ready to parse. */
export async function buildProgram(
  context: CommandContext,
  groups: readonly CommandGroup[] = commandGroups,
): Promise<Command> {
  const { io } = context;
  const program = new Command("skillsmith")
    .description("Evaluate, build and synthesise agent skills (SKILL.md packages).")
    .version(packageVersion(), "-V, --version")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
    });
  // Settings above are copied to subcommands created afterwards, so every level behaves alike.
  // Modules load in parallel; registration keeps the listed order, so help reads the same.
  const registers = await Promise.all(groups.map((group) => group.load()));
  for (const register of registers) register(program, context);
  return program;
}

/**
 * A file-system failure the user can fix (full disk, read-only or unwritable folder) as one
 * sentence naming the file; undefined for anything else, which stays an internal error.
 */
function fileSystemFailure(error: unknown): string | undefined {
  const { code, path } = (error ?? {}) as { code?: unknown; path?: unknown };
  const file = typeof path === "string" ? path : "a file";
  switch (code) {
    case "ENOSPC":
    case "EDQUOT":
      return `cannot write ${file}: no space left on the device; free space and run again (results stored so far are kept)`;
    case "EROFS":
      return `cannot write ${file}: the file system is read-only; choose another --out folder`;
    case "EACCES":
    case "EPERM":
      return `cannot write ${file}: permission denied; make the folder writable or choose another --out folder`;
    default:
      return undefined;
  }
}

function exitCodeFor(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // Help and version requested explicitly are successes; commander has already printed them.
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version")
      return ExitCode.ok;
    return ExitCode.usage;
  }
  if (isSkillsmithError(error)) {
    if (error.family === "usage" || error.family === "input") {
      io.stderr(`error: ${error.message}\n`);
      return ExitCode.usage;
    }
    io.stderr(`error [${error.code}]: ${error.message}\n`);
    if (error.cause instanceof Error && !error.message.includes(error.cause.message)) {
      io.stderr(`  caused by: ${error.cause.message}\n`);
    }
    return ExitCode.failure;
  }
  const fileFailure = fileSystemFailure(error);
  if (fileFailure !== undefined) {
    io.stderr(`error: ${fileFailure}\n`);
    return ExitCode.failure;
  }
  // A bug: show the stack, since the user cannot have caused it.
  io.stderr(
    `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return ExitCode.failure;
}
