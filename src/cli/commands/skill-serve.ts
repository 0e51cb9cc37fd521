/** `skillsmith skill serve-mcp`: skills offered to an agent over MCP (stdio or HTTP). */
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import type { AuditSeverity } from "../../skill/index.js";
import { type CommandContext, log, printJson } from "../context.js";
import { waitForTerminationSignal } from "../interrupt.js";

import { display, expandAll, failOnOption, plural } from "./skill-shared.js";

/** Resolves when `serve-mcp --http` should stop; the default waits for SIGINT or SIGTERM. */
let waitForStop: (() => Promise<void>) | undefined;

/** For tests: how `skill serve-mcp --http` waits before it stops. */
export function setSkillServeStop(wait: (() => Promise<void>) | undefined): void {
  waitForStop = wait;
}

export function registerSkillServe(skill: Command, context: CommandContext): void {
  skill
    .command("serve-mcp")
    .description("Serve skill folders over MCP by the Skills extension (SEP-2640)")
    .addHelpText(
      "after",
      "\nskills/list, skills/get, resources/read of skill://<name>/<file> and resources/directory/read,\nwith a SHA-256 digest and size for every file. Invalid skills, skills failing their audit\n(unless --allow-findings) and skills over the extension's limits (512 files, 16 MiB) are not\nserved; stderr says why. stdio by default; with --http, streamable HTTP on 127.0.0.1 at /mcp\nwith a bearer token (URL and token printed on stdout as JSON).",
    )
    .argument("<dir...>", "skill folders, or folders holding skill folders")
    .option("--http", "serve streamable HTTP on loopback instead of stdio")
    .option("--port <n>", "port for --http (0 picks a free one)", "0")
    .addOption(failOnOption())
    .option("--allow-findings", "serve skills whose audit fails too")
    .action(
      async (
        directories: string[],
        options: { http?: boolean; port: string; failOn: AuditSeverity; allowFindings?: boolean },
      ) => {
        const { io } = context;
        const { createSkillsMcpServer, loadSkillsToServe, serveMcpHttp, serveMcpStdio } =
          await import("../../skill/mcp-server.js");
        const loaded = await loadSkillsToServe(await expandAll(directories, io), {
          failOn: options.failOn,
          allowFindings: options.allowFindings === true,
        });
        for (const skipped of loaded.skipped)
          log(io, `not served: ${display(skipped.path, io)}: ${skipped.reason}`);
        if (loaded.skills.length === 0)
          throw new UsageError("cli.skill-nothing-to-serve", "no skill can be served (see above)");
        if (options.http !== true) {
          log(io, `serving ${plural(loaded.skills.length, "skill")} over MCP on stdio`);
          await serveMcpStdio(() => createSkillsMcpServer(loaded.skills));
          return;
        }
        const port = Number(options.port);
        if (!Number.isInteger(port) || port < 0 || port > 65_535)
          throw new UsageError("cli.port", `--port: expected 0 to 65535, got ${options.port}`);
        const server = await serveMcpHttp(() => createSkillsMcpServer(loaded.skills), { port });
        printJson(io, { url: server.url, token: server.token });
        log(
          io,
          `serving ${plural(loaded.skills.length, "skill")} at ${server.url} (bearer token on stdout)`,
        );
        await (waitForStop ?? waitForTerminationSignal)();
        await server.close();
      },
    );
}
