import type { Command } from "commander";
import type { CommandContext } from "../context.js";

/** `skillsmith quickstart`: the README's main job on the embedded default. */
export function registerQuickstart(program: Command, context: CommandContext): void {
  program
    .command("quickstart")
    .description("Run the main job on the bundled examples, offline")
    .option("--json", "print a JSON document instead of text")
    .action(() => {
      context.io.stdout("quickstart: not wired yet\n");
    });
}
