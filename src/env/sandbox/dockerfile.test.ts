import { describe, expect, it } from "vitest";
import { InputError } from "../../core/errors.js";
import { environmentKey, generateDockerfile } from "./dockerfile.js";

describe("generateDockerfile", () => {
  it("copies the workspace to its fixed path and runs each command in exec form", () => {
    const text = generateDockerfile({
      baseImage: "localhost/skillsmith-base:bookworm",
      workspaceMountPath: "/workspace/calc/",
      commands: ["pip install -e .", 'echo "a\\b" $X'],
    });
    expect(text).toBe(
      [
        "FROM localhost/skillsmith-base:bookworm",
        'COPY ["workspace/","/workspace/calc/"]',
        "WORKDIR /workspace/calc",
        'RUN ["/bin/sh","-c","pip install -e ."]',
        'RUN ["/bin/sh","-c","echo \\"a\\\\b\\" $X"]',
        "",
      ].join("\n"),
    );
  });

  it("sets the recipe's variables in one ENV instruction before the commands", () => {
    const text = generateDockerfile({
      baseImage: "b",
      workspaceMountPath: "/workspace/calc",
      commands: ["true"],
      env: { PATH: "/skillsmith-env/bin:/usr/bin", PIP_NO_INDEX: "1" },
    });
    expect(text.split("\n").slice(3, 5)).toEqual([
      'ENV PATH="/skillsmith-env/bin:/usr/bin" PIP_NO_INDEX="1"',
      'RUN ["/bin/sh","-c","true"]',
    ]);
    expect(() =>
      generateDockerfile({
        baseImage: "b",
        workspaceMountPath: "/w",
        commands: [],
        env: { "A B": "x" },
      }),
    ).toThrow(InputError);
  });

  it("refuses a relative mount path or one with blanks", () => {
    for (const workspaceMountPath of ["workspace/calc", "/workspace/my repo"]) {
      expect(() =>
        generateDockerfile({ baseImage: "x", workspaceMountPath, commands: [] }),
      ).toThrow(InputError);
    }
  });
});

describe("environmentKey", () => {
  const parts = {
    cacheKey: "https://example.test/calc.git@0123abcd",
    baseImageId: "sha256:aaaa",
    workspaceMountPath: "/workspace/calc",
    commands: ["npm ci"],
  };

  it("is a sha256 hex digest that changes with every input", () => {
    const key = environmentKey(parts);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(environmentKey({ ...parts })).toBe(key);
    expect(
      environmentKey({ ...parts, cacheKey: "https://example.test/calc.git@0123abce" }),
    ).not.toBe(key);
    expect(environmentKey({ ...parts, baseImageId: "sha256:bbbb" })).not.toBe(key);
    expect(environmentKey({ ...parts, workspaceMountPath: "/workspace/other" })).not.toBe(key);
    expect(environmentKey({ ...parts, commands: ["npm ci", "npm run build"] })).not.toBe(key);
    // Command boundaries matter: ["a b"] and ["a", "b"] are different recipes.
    expect(environmentKey({ ...parts, commands: ["a b"] })).not.toBe(
      environmentKey({ ...parts, commands: ["a", "b"] }),
    );
  });
});
