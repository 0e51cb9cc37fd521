import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import type { CommandContext } from "./context.js";
import { buildProgram, type CommandGroup, commandGroups, groupsToLoad, runCli } from "./program.js";

interface Captured {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The CLI with `groups` registered: by default only those `groupsToLoad` picks for this command
 * line, as the binary runs it; the reference passes every group, as before lazy loading.
 */
async function run(
  argv: readonly string[],
  groups: readonly CommandGroup[] = groupsToLoad(argv),
): Promise<Captured> {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: (text: string) => {
      stdout += text;
    },
    stderr: (text: string) => {
      stderr += text;
    },
    env: {},
  };
  const code = await runCli(argv, io, groups);
  return { code, stdout, stderr };
}

const lazy = (argv: readonly string[]): Promise<Captured> => run(argv);
const eager = (argv: readonly string[]): Promise<Captured> => run(argv, commandGroups);

function commandPaths(command: Command, prefix: readonly string[] = []): string[][] {
  return command.commands.flatMap((child) => {
    const path = [...prefix, child.name()];
    return [path, ...commandPaths(child, path)];
  });
}

const noop: CommandContext = {
  io: { stdout: () => {}, stderr: () => {}, cwd: process.cwd(), env: {} },
  exit() {},
};

describe("groupsToLoad", () => {
  const names = (argv: string[]): string[] => groupsToLoad(argv).map((group) => group.name);
  const all = commandGroups.map((group) => group.name);

  it("loads only the group named first, or after `help`", () => {
    expect(names(["skill", "validate", "x"])).toEqual(["skill"]);
    expect(names(["stats", "test", "--deltas", "1,2"])).toEqual(["stats"]);
    expect(names(["help", "bench", "run"])).toEqual(["bench"]);
  });

  it("loads nothing for a leading --version and everything where the top level answers", () => {
    expect(names(["--version"])).toEqual([]);
    expect(names(["-V", "skill"])).toEqual([]);
    for (const argv of [[], ["--help"], ["-h", "skill"], ["help"], ["skil"], ["--nope", "skill"]]) {
      expect(names(argv)).toEqual(all);
    }
  });
});

describe("lazy command loading", () => {
  it("every registry entry registers exactly the one top-level command it is named after", async () => {
    for (const group of commandGroups) {
      const program = await buildProgram(noop, [group]);
      expect(program.commands.map((command) => command.name())).toEqual([group.name]);
    }
  });

  it("registers the groups in registry order whatever order their modules finish loading", async () => {
    // The first group's module resolves last: registration must still follow the list.
    const delayed: CommandGroup[] = commandGroups.map((group, index) => ({
      name: group.name,
      load: async () => {
        await new Promise((resolve) => setTimeout(resolve, index === 0 ? 30 : 0));
        return group.load();
      },
    }));
    const program = await buildProgram(noop, delayed);
    expect(program.commands.map((command) => command.name())).toEqual(
      commandGroups.map((group) => group.name),
    );
  });

  it("prints the same help for every command as with every group loaded", async () => {
    const full = await buildProgram(noop, commandGroups);
    const paths = [[], ...commandPaths(full)];
    // 9 groups and their subcommands; a walk that found almost nothing would prove nothing.
    expect(paths.length).toBeGreaterThan(25);
    for (const path of paths) {
      const argv = [...path, "--help"];
      const got = await lazy(argv);
      const expected = await eager(argv);
      expect({ argv, ...got }).toEqual({ argv, ...expected });
      expect(got.stdout).toContain(`Usage: skillsmith ${path.join(" ")}`.trimEnd());
      expect(got.code).toBe(0);
    }
  });

  it("answers version, help commands and mistakes as with every group loaded", async () => {
    const lines = [
      ["--version"],
      ["-V", "skill"],
      ["-h", "-V"],
      ["-h", "skill"],
      ["help"],
      ["help", "skill"],
      ["help", "nothing"],
      ["bench", "help", "run"],
      [],
      ["skill"],
      ["skil"],
      ["bench", "rn"],
      ["--nope"],
      ["stats", "test"],
      ["stats", "test", "--deltas", "10,-5,20"],
    ];
    for (const argv of lines) {
      const got = await lazy(argv);
      const expected = await eager(argv);
      expect({ argv, ...got }).toEqual({ argv, ...expected });
    }
    expect((await lazy(["skil"])).stderr).toContain("(Did you mean skill?)");
  });
});
