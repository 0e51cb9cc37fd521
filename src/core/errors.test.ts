import { describe, expect, it } from "vitest";
import { InfrastructureError, InputError, isSkillsmithError, UsageError } from "./errors.js";

describe("typed errors", () => {
  it("names file, line and field in an input error's message and data", () => {
    const error = new InputError("bad-value", "expected a number", {
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
    const error = new InfrastructureError("endpoint-unreachable", "model endpoint failed", {
      cause,
      retryable: true,
    });
    expect(error.cause).toBe(cause);
    expect(error.retryable).toBe(true);
    expect(isSkillsmithError(error)).toBe(true);
    expect(isSkillsmithError(new Error("plain"))).toBe(false);
  });

  it("defaults to not retryable with a message left as given", () => {
    const error = new UsageError("missing-flag", "--deltas is required");
    expect(error.retryable).toBe(false);
    expect(error.message).toBe("--deltas is required");
  });
});
