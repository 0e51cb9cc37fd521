import { afterEach, describe, expect, it } from "vitest";
import { registerSandbox, UnsafeSandbox, unregisterSandbox } from "../src/env/index.js";
import { runInProcess } from "./support/cli.js";

/**
 * Every command taking `--sandbox` names the kinds of the sandbox registry in its help, so a
 * kind a program registered is offered where the built-in ones are, and no command's help can
 * fall behind the registry.
 */
describe("--sandbox help lists the registered kinds", () => {
  const kind = "sandbox-kinds-test-vm";
  afterEach(() => {
    unregisterSandbox(kind);
  });

  it.each(["bench run", "bench regrade", "bench check", "eval"])("%s --help", async (command) => {
    registerSandbox(kind, () => new UnsafeSandbox());
    const help = await runInProcess([...command.split(" "), "--help"]);
    expect(help.code).toBe(0);
    // The option's description, its wrapped lines joined: up to the next option.
    const start = help.stdout.indexOf("--sandbox <kind>");
    expect(start).toBeGreaterThanOrEqual(0);
    const end = help.stdout.indexOf("\n  -", start);
    const description = help.stdout.slice(start, end).replace(/\s+/g, " ");
    expect(description).toContain(`local (bubblewrap) | container | unsafe | ${kind}`);
  });
});
