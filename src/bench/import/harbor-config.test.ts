import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { environmentPrefix, readHarborSettings } from "./harbor-config.js";
import { parseToml } from "./toml.js";

describe("what a Harbor task.toml says, field by field", () => {
  it("honours the users, the task's name and the schema version", () => {
    const settings = readHarborSettings(
      parseToml(
        [
          'schema_version = "1.1"',
          "[task]",
          'name = "acme/greet"',
          "[agent]",
          'user = "app"',
          "timeout_sec = 60",
          "[verifier]",
          'user = "root"',
          "[environment]",
          "cpus = 1",
          "memory_mb = 512",
          "allow_internet = false",
        ].join("\n"),
      ),
    );
    expect(settings).toEqual({
      name: "acme/greet",
      schemaVersion: "1.1",
      agentUser: "app",
      verifierUser: "root",
      verifierEnv: {},
      ignored: [],
    });
  });

  it("names every field it does not carry out, and keys Harbor does not define", () => {
    const settings = readHarborSettings(
      parseToml(
        [
          'version = "2.0"',
          "[environment]",
          "storage_mb = 10240",
          "gpus = 1",
          "gpus_are_neutral_when_zero = 0",
          "memroy_mb = 512",
          "[environment.env]",
          'DEBUG = "1"',
          "[solution.env]",
          'TOKEN = "x"',
          "[verifier.env]",
          'MODE = "strict"',
          `API_KEY = "${"$"}{ANTHROPIC_API_KEY}"`,
          "[extras]",
          "anything = true",
        ].join("\n"),
      ),
    );
    expect(settings.verifierEnv).toEqual({ MODE: "strict" });
    expect(settings.ignored.map((line) => line.split(":")[0])).toEqual([
      'schema_version = "2.0"',
      "[environment] storage_mb = 10240",
      "[environment] gpus = 1",
      "[environment] memroy_mb = 512",
      '[environment] env = {"DEBUG"',
      '[solution] env = {"TOKEN"',
      `[verifier] env.API_KEY = "${"$"}{ANTHROPIC_API_KEY}"`,
      'extras = {"anything"',
    ]);
    expect(settings.ignored.find((line) => line.includes("memroy_mb"))).toMatch(
      /not a field Harbor defines/,
    );
  });

  it("passes [verifier] env to test.sh as literal text: a value cannot run a command", () => {
    // The attack: a value that closes the quote and runs a command of its own.
    const hostile = "x'; echo INJECTED; '";
    const prefix = environmentPrefix({ MODE: hostile, PLAIN: "a b" });
    const output = execFileSync("sh", ["-c", `${prefix}sh -c 'printf "%s|%s" "$MODE" "$PLAIN"'`], {
      encoding: "utf8",
    });
    expect(output).toBe(`${hostile}|a b`);
  });

  it("a [verifier] env name that is not a shell variable name is reported, not set", () => {
    const settings = readHarborSettings(
      parseToml(["[verifier.env]", '"BAD NAME" = "1"', 'GOOD = "2"'].join("\n")),
    );
    expect(settings.verifierEnv).toEqual({ GOOD: "2" });
    expect(settings.ignored).toEqual([
      "[verifier] env.BAD NAME: not a variable name a shell accepts",
    ]);
  });
});
