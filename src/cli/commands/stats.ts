import type { Command } from "commander";
import type { CommandContext } from "../context.js";

/** `skillsmith stats ...`: the statistics behind every verdict. */
export function registerStats(program: Command, _context: CommandContext): void {
  program.command("stats").description("Statistical tests behind skill verdicts");
}
