/**
 * What a command may touch: two output streams, the working directory and the environment.
 * Commands never use `process.*` or `console.*` directly, so tests can run them in-process.
 */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stderr is a terminal: progress then redraws one line instead of printing many. */
  readonly stderrIsTerminal?: boolean;
}

export interface CommandContext {
  readonly io: CliIo;
  /** Record the exit code the command wants (0 ok, 1 findings); the highest one wins. */
  exit(code: number): void;
}

/** Print one JSON document on stdout, newline-terminated. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** Print text lines on stdout. */
export function printLines(io: CliIo, lines: readonly string[]): void {
  if (lines.length > 0) io.stdout(`${lines.join("\n")}\n`);
}

/** Progress and diagnostics go to stderr, so `--json` keeps stdout clean. */
export function log(io: CliIo, line: string): void {
  io.stderr(`${line}\n`);
}
