import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import { redactSecrets, secretsFromEnvironment } from "../../model/redact.js";
import { loadScript } from "../../model/scripted/script.js";
import { startScriptedServer } from "../../model/scripted/server.js";
import { type CommandContext, log, printJson, printLines } from "../context.js";
import { waitForTerminationSignal } from "../interrupt.js";

export interface ModelCommandOptions {
  /**
   * Resolves when a long-running command (the scripted server) should stop. The default waits
   * for SIGINT or SIGTERM; tests pass their own so no process handlers are involved.
   */
  readonly waitForStop?: () => Promise<void>;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError("cli.port", `--port: expected an integer from 0 to 65535, got "${value}"`);
  return port;
}

/** `skillsmith model ...`: model access and the scripted model server. */
export function registerModel(
  program: Command,
  context: CommandContext,
  options: ModelCommandOptions = {},
): void {
  const model = program.command("model").description("Model access and the scripted model server");

  model
    .command("serve-scripted")
    .description(
      "Serve the Anthropic Messages and OpenAI Chat/Responses APIs on a local port, answering from a script file",
    )
    .requiredOption("--script <file>", "script file (JSON or YAML): rules, turns, fallback, faults")
    .option("--port <n>", "port to listen on (0 picks a free one)", "0")
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option("--record <file.jsonl>", "append every request received to this JSONL file")
    .option("--json", 'print {"url": ...} as JSON')
    .action(
      async (flags: {
        script: string;
        port: string;
        host: string;
        record?: string;
        json?: boolean;
      }) => {
        const { io } = context;
        const script = await loadScript(resolve(io.cwd, flags.script));
        const recordPath = flags.record === undefined ? undefined : resolve(io.cwd, flags.record);
        if (recordPath !== undefined) mkdirSync(dirname(recordPath), { recursive: true });
        const knownSecrets = secretsFromEnvironment(io.env);
        const server = await startScriptedServer({
          script,
          port: parsePort(flags.port),
          host: flags.host,
          onRequest: (request) => {
            // Synchronous so lines land in arrival order; the file is a test aid, not a hot path.
            if (recordPath !== undefined)
              appendFileSync(
                recordPath,
                `${JSON.stringify(redactSecrets(request, knownSecrets))}\n`,
              );
          },
        });
        if (flags.json === true) printJson(io, { url: server.url });
        else printLines(io, [server.url]);
        log(io, `scripted model server listening on ${server.url} (Ctrl-C to stop)`);
        try {
          await (options.waitForStop ?? waitForTerminationSignal)();
        } finally {
          await server.close();
        }
        log(io, `served ${server.requests.length} request(s)`);
      },
    );
}
