import { Command, CommanderError } from "commander";
import { isSkillsmithError } from "../core/errors.js";
import { packageVersion } from "../core/paths.js";
import { redactKnownSecrets } from "../model/redact.js";
import { registerBench } from "./commands/bench.js";
import { registerModel } from "./commands/model.js";
import { registerQuickstart } from "./commands/quickstart.js";
import { registerSkill } from "./commands/skill.js";
import { registerStats } from "./commands/stats.js";
import { registerSynth } from "./commands/synth.js";
import { registerView } from "./commands/view.js";
import { registerWiki } from "./commands/wiki.js";
import { registerWorker } from "./commands/worker.js";
import type { CliIo, CommandContext } from "./context.js";

/** Exit codes, documented in the README. */
export const ExitCode = {
  ok: 0,
  findings: 1,
  usage: 2,
  failure: 3,
} as const;

export type Register = (program: Command, context: CommandContext) => void;

/** Every top-level command group. Adding a command = adding a register function here. */
const registrations: readonly Register[] = [
  registerQuickstart,
  registerSkill,
  registerStats,
  registerModel,
  registerBench,
  registerSynth,
  registerWiki,
  registerView,
  registerWorker,
];

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
 * entry point does that with the returned code.
 */
export async function runCli(
  argv: readonly string[],
  ioOverrides: Partial<CliIo> = {},
): Promise<number> {
  const given: CliIo = { ...defaultIo(), ...ioOverrides };
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
  for (const register of registrations) register(program, context);

  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    return exitCodeFor(error, io);
  }
  return exitCode;
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
