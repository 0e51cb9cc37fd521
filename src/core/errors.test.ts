import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../test/support/temporary.js";
import {
  InfrastructureError,
  InputError,
  isSkillsmithError,
  SkillsmithError,
  UsageError,
} from "./errors.js";

const cleanups = cleanupsAfterEach();

describe("typed errors", () => {
  it("names file, line and field in an input error's message and data", () => {
    const error = new InputError("cli.option-invalid", "expected a number", {
      file: "suite.yaml",
      line: 7,
      field: "limits.timeoutSeconds",
    });
    expect(error.message).toBe(
      'suite.yaml, line 7, field "limits.timeoutSeconds": expected a number',
    );
    expect(error.data).toMatchObject({ file: "suite.yaml", line: 7 });
    expect(error.family).toBe("input");
    expect(error.name).toBe("InputError");
  });

  it("keeps the cause and the retryable flag", () => {
    const cause = new Error("ECONNRESET");
    const error = new InfrastructureError("model.request-failed", "model endpoint failed", {
      cause,
      retryable: true,
    });
    expect(error.cause).toBe(cause);
    expect(error.retryable).toBe(true);
    expect(isSkillsmithError(error)).toBe(true);
    expect(isSkillsmithError(new Error("plain"))).toBe(false);
  });

  it("defaults to not retryable with a message left as given", () => {
    const error = new UsageError("cli.option-missing", "--deltas is required");
    expect(error.retryable).toBe(false);
    expect(error.message).toBe("--deltas is required");
  });
});

describe("errors recognised across copies of the package", () => {
  /** A second, independent copy of this module (its own classes), as a second install has. */
  async function secondCopy(): Promise<typeof import("./errors.js")> {
    const folder = await mkdtemp(join(tmpdir(), "skillsmith-errors-copy-"));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const copy = join(folder, "errors.ts");
    await copyFile(join(import.meta.dirname, "errors.ts"), copy);
    return (await import(pathToFileURL(copy).href)) as typeof import("./errors.js");
  }

  it("is a different class to instanceof, the same family to isInstance", async () => {
    const other = await secondCopy();
    expect(other.InputError).not.toBe(InputError);
    const foreign = new other.InputError("cli.option-invalid", "expected a number", {
      file: "a.yaml",
    });
    // The failure the markers exist for: instanceof does not see the other copy's classes.
    expect(foreign instanceof InputError).toBe(false);
    expect(foreign instanceof SkillsmithError).toBe(false);
    expect(SkillsmithError.isInstance(foreign)).toBe(true);
    expect(InputError.isInstance(foreign)).toBe(true);
    expect(UsageError.isInstance(foreign)).toBe(false);
    expect(isSkillsmithError(foreign)).toBe(true);
    expect(isSkillsmithError(foreign, "input")).toBe(true);
    expect(isSkillsmithError(foreign, "usage")).toBe(false);
    // And the other way round: this copy's errors seen by the other copy's checks.
    const ours = new UsageError("cli.option-missing", "--deltas is required");
    expect(other.UsageError.isInstance(ours)).toBe(true);
    expect(other.InputError.isInstance(ours)).toBe(false);
    expect(other.isSkillsmithError(ours, "usage")).toBe(true);
  });

  it("recognises subclasses by every class of their chain", () => {
    class SuiteBrokenError extends InputError {}
    const error = new SuiteBrokenError("bench.suite-invalid", "broken");
    expect(SuiteBrokenError.isInstance(error)).toBe(true);
    expect(InputError.isInstance(error)).toBe(true);
    expect(SkillsmithError.isInstance(error)).toBe(true);
    expect(SuiteBrokenError.isInstance(new InputError("model.config-invalid", "other"))).toBe(
      false,
    );
    expect(InfrastructureError.isInstance(error)).toBe(false);
  });

  it("does not take look-alikes for skillsmith errors", () => {
    const lookalike = Object.assign(new Error("x"), { family: "usage", code: "x" });
    expect(isSkillsmithError(lookalike)).toBe(false);
    expect(UsageError.isInstance(lookalike)).toBe(false);
    // A truthy marker that is not exactly `true` (e.g. from JSON or a proxy) is not enough.
    expect(SkillsmithError.isInstance({ [Symbol.for("skillsmith.error")]: 1 })).toBe(false);
    for (const value of [null, undefined, 0, "UsageError", {}]) {
      expect(SkillsmithError.isInstance(value)).toBe(false);
    }
  });

  it("keeps the markers out of the error's enumerable properties", () => {
    const error = new InputError("cli.option-invalid", "expected a number", { line: 3 });
    expect(Object.getOwnPropertySymbols(error).length).toBeGreaterThan(0);
    expect(
      Object.getOwnPropertySymbols(error).filter((symbol) =>
        Object.prototype.propertyIsEnumerable.call(error, symbol),
      ),
    ).toEqual([]);
  });
});
