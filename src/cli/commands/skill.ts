import type { Command } from "commander";
import type { CommandContext } from "../context.js";

/** `skillsmith skill ...`: validate, inspect, install, clean, audit. */
export function registerSkill(program: Command, _context: CommandContext): void {
  program.command("skill").description("Work with Agent Skills folders (SKILL.md packages)");
}
