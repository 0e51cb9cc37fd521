import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import {
  DEFAULT_DASHBOARD_HOST,
  generateAccessToken,
  isLoopbackHost,
  startDashboard,
} from "../../report/index.js";
import { type CommandContext, log, printJson } from "../context.js";
import { waitForTerminationSignal } from "../interrupt.js";

function parsePort(text: string): number {
  if (!/^[0-9]+$/.test(text) || Number(text) > 65_535) {
    throw new UsageError(
      "cli.view-port",
      `--port ${text}: expected a port number from 0 to 65535 (0 picks a free port)`,
    );
  }
  return Number(text);
}

export function registerView(program: Command, context: CommandContext): void {
  const { io } = context;
  program
    .command("view")
    .description(
      "Serve a run directory's report and trajectory viewer as a live local dashboard (Ctrl-C stops)",
    )
    .argument("<run-dir>", "a run directory written by `bench run` (may still be running)")
    .option("--port <n>", "port to listen on; 0 picks a free port", "0")
    .option(
      "--host <host>",
      "address to bind; anything but loopback generates an access token (printed once on stderr)",
      DEFAULT_DASHBOARD_HOST,
    )
    .option("--json", 'print {"url": ...} on stdout once listening')
    .action(async (runDir: string, options: { port: string; host: string; json?: boolean }) => {
      const port = parsePort(options.port);
      const token = isLoopbackHost(options.host) ? undefined : generateAccessToken();
      const dashboard = await startDashboard({
        runDir: resolve(io.cwd, runDir),
        host: options.host,
        port,
        ...(token === undefined ? {} : { token }),
      });
      // The first Ctrl-C (SIGINT) or SIGTERM closes the dashboard cleanly.
      const stopped = waitForTerminationSignal();
      if (options.json === true) printJson(io, { url: dashboard.url });
      if (token === undefined) {
        if (options.json !== true) log(io, `dashboard: ${dashboard.url}`);
      } else {
        log(
          io,
          `dashboard: ${dashboard.url}?token=${token}\n(bound to ${options.host}: every request needs this access token; it is not shown again)`,
        );
      }
      log(io, "press Ctrl-C to stop");
      await stopped;
      await dashboard.close();
      log(io, "dashboard stopped");
    });
}
