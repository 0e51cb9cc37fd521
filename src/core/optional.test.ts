import { describe, expect, it } from "vitest";
import { InfrastructureError, isSkillsmithError } from "./errors.js";
import {
  assertInstalled,
  DependencyMissingError,
  importOptional,
  isPackageMissing,
  packageOf,
  requireOptional,
  resolveOptional,
} from "./optional.js";

const ABSENT = "skillsmith-test-package-that-is-not-installed";

describe("optional packages", () => {
  it("names the package of a specifier, scoped or not", () => {
    expect(packageOf("@modelcontextprotocol/sdk/server/mcp.js")).toBe("@modelcontextprotocol/sdk");
    expect(packageOf("tree-sitter-wasms/package.json")).toBe("tree-sitter-wasms");
    expect(packageOf("vega")).toBe("vega");
  });

  it("loads an installed package by require, import and path", async () => {
    expect(typeof requireOptional<{ parse: unknown }>("yaml", "a test").parse).toBe("function");
    expect(typeof (await importOptional<{ z: unknown }>("zod", "a test")).z).toBe("object");
    expect(resolveOptional("yaml", "a test")).toMatch(/node_modules\/yaml\//);
  });

  it("turns a missing package into a typed error naming package, feature and command", async () => {
    const caught = (() => {
      try {
        requireOptional(ABSENT, "the test feature");
      } catch (error) {
        return error;
      }
    })();
    expect(caught).toBeInstanceOf(DependencyMissingError);
    expect(isSkillsmithError(caught, "infrastructure")).toBe(true);
    expect(InfrastructureError.isInstance(caught)).toBe(true);
    expect((caught as DependencyMissingError).code).toBe("core.dependency-missing");
    expect((caught as Error).message).toBe(
      `install ${ABSENT} to use the test feature (npm install ${ABSENT})`,
    );
    await expect(importOptional(`${ABSENT}/sub.js`, "x")).rejects.toBeInstanceOf(
      DependencyMissingError,
    );
    expect(() => resolveOptional(ABSENT, "x")).toThrow(DependencyMissingError);
  });

  it("puts skillsmith's own peer range into the install command", () => {
    // vega is installed here; the message is built the same way for a package that is absent.
    const error = new DependencyMissingError(["vega", "vega-lite"], "charts");
    expect(error.message).toMatch(
      /^install vega and vega-lite to use charts \(npm install vega@"\^\d+\.\d+\.\d+" vega-lite@"\^\d+\.\d+\.\d+"\)$/,
    );
  });

  it("lists every missing package of a feature at once", () => {
    expect(() => assertInstalled(["yaml", ABSENT, `${ABSENT}-two/package.json`], "both")).toThrow(
      `install ${ABSENT} and ${ABSENT}-two to use both`,
    );
    expect(() => assertInstalled(["yaml", "zod"], "none missing")).not.toThrow();
  });

  it("leaves a broken install alone: a missing file inside a package is not a missing package", () => {
    const error = Object.assign(new Error("Cannot find module 'yaml/no-such-file.js'"), {
      code: "MODULE_NOT_FOUND",
    });
    expect(isPackageMissing(error, "yaml")).toBe(true);
    // A package the optional one depends on is missing: not the optional package's absence.
    const nested = Object.assign(new Error("Cannot find package 'luxon' imported from /x/bullmq"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    expect(isPackageMissing(nested, "bullmq")).toBe(false);
    // yaml is installed: a file it does not have is a broken call, not a missing package.
    expect(() => requireOptional("yaml/dist/no-such-file.js", "x")).toThrow();
    expect(() => requireOptional("yaml/dist/no-such-file.js", "x")).not.toThrow(
      DependencyMissingError,
    );
    expect(isPackageMissing(new Error("Cannot find module 'yaml'"), "yaml")).toBe(false);
  });
});
