import type { Command } from "commander";
import type { CommandContext } from "../context.js";

/** `skillsmith model ...`: model access and the scripted model server. */
export function registerModel(program: Command, _context: CommandContext): void {
  program.command("model").description("Model access and the scripted model server");
}
