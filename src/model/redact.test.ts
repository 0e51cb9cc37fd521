import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  appendRedactedJsonLine,
  knownSecrets,
  redactedJson,
  redactedJsonFile,
  redactFileContent,
  redactKnownSecrets,
  redactSecrets,
  registerEnvironmentSecrets,
  registerSecret,
  secretsFromEnvironment,
  writeRedactedFile,
} from "./redact.js";

describe("redactSecrets", () => {
  it("removes known values wherever they occur", () => {
    expect(redactSecrets("key=abcdef123 and again abcdef123.", ["abcdef123"])).toBe(
      "key=[REDACTED] and again [REDACTED].",
    );
  });

  it("removes common key shapes without being told", () => {
    const text =
      "anthropic sk-ant-api03-AbCdEf_123456 openai sk-proj-ZYXWVU987654 header Authorization: Bearer eyJhbGciOi.payload.sig";
    const redacted = redactSecrets(text);
    expect(redacted).toBe(
      "anthropic [REDACTED] openai [REDACTED] header Authorization: Bearer [REDACTED]",
    );
  });

  it("walks objects and arrays, keys included, without touching the input", () => {
    const input = {
      headers: { "x-api-key": "sk-ant-secretsecret" },
      list: ["ok", "Bearer abcdefghijkl"],
      n: 3,
    };
    const output = redactSecrets(input);
    expect(output).toEqual({
      headers: { "x-api-key": "[REDACTED]" },
      list: ["ok", "Bearer [REDACTED]"],
      n: 3,
    });
    expect(input.headers["x-api-key"]).toBe("sk-ant-secretsecret");
  });

  it("leaves ordinary words alone", () => {
    const text = "a risk-assessment task-list for the desk-top (skills are fine)";
    expect(redactSecrets(text)).toBe(text);
  });

  it("redacts api_key assignments and error messages", () => {
    expect(redactSecrets('{"api_key": "abcdefghijklmnop"}')).toBe('{"api_key": "[REDACTED]"}');
    const error = redactSecrets(new Error("401 for key topsecret-value"), ["topsecret-value"]);
    expect(error.message).toBe("401 for key [REDACTED]");
  });

  it("collects secrets from key-like environment variables", () => {
    expect(
      secretsFromEnvironment({ OPENAI_API_KEY: "a", GITHUB_TOKEN: "b", HOME: "/root" }).sort(),
    ).toEqual(["a", "b"]);
  });
});

describe("redaction at the boundaries", () => {
  it("removes other providers' token shapes without being told", () => {
    // Each token below is written by hand in its provider's documented shape.
    const github = `ghp_${"a1B2".repeat(9)}`;
    const aws = "AKIAIOSFODNN7EXAMPLE";
    const slack = "xoxb-1234567890-abcdefghij";
    const text = `github ${github} aws ${aws} slack ${slack}`;
    expect(redactSecrets(text)).toBe("github [REDACTED] aws [REDACTED] slack [REDACTED]");
  });

  it("removes registered secrets and key-like variables of the environment everywhere", () => {
    registerSecret("registered-value-7d1c");
    const stored = redactKnownSecrets(
      { message: "saw registered-value-7d1c and env-value-91ab", nested: ["env-value-91ab"] },
      { MY_SERVICE_KEY: "env-value-91ab" },
    );
    expect(stored).toEqual({ message: "saw [REDACTED] and [REDACTED]", nested: ["[REDACTED]"] });
    expect(knownSecrets({})).toContain("registered-value-7d1c");
  });

  it("ignores values too short to be keys when registering", () => {
    registerSecret("abc");
    expect(knownSecrets({})).not.toContain("abc");
  });
});

describe("the redacting writers", () => {
  const key = "writer-key-3e9d1c7b";

  it("redacts JSON values before serialising, so an escape cannot split a key from its shape", () => {
    // As text, `"\nsk-…"` serialises to `\\nsk-…`: no word boundary before `sk-`, so a pass
    // over the serialised text would miss it; the value-level pass sees the newline.
    const value = { note: "line\nsk-ant-api03-AbCdEfGh123", [key]: [key] };
    const text = redactedJson(value, { environment: { SERVICE_KEY: key } });
    expect(JSON.parse(text)).toEqual({
      note: "line\n[REDACTED]",
      "[REDACTED]": ["[REDACTED]"],
    });
  });

  it("takes class instances and toJSON results through JSON first, so no field escapes", () => {
    class Holder {
      readonly secret = key;
      toJSON() {
        return { exported: `value ${this.secret}` };
      }
    }
    expect(redactedJsonFile({ holder: new Holder() }, { SERVICE_KEY: key })).toBe(
      '{\n  "holder": {\n    "exported": "value [REDACTED]"\n  }\n}\n',
    );
  });

  it("redacts UTF-8 bytes as text and overwrites known keys in binary in place", () => {
    const environment = { SERVICE_KEY: key };
    const text = Buffer.from(`token ghp_${"a1B2".repeat(9)} and ${key}\n`, "utf8");
    expect(Buffer.from(redactFileContent(text, environment)).toString("utf8")).toBe(
      "token [REDACTED] and [REDACTED]\n",
    );
    // 0xff never occurs in UTF-8: these bytes are binary. Same length, key bytes replaced by `*`.
    const binary = Buffer.concat([
      Buffer.from([0xff, 0x00]),
      Buffer.from(key),
      Buffer.from([0xfe]),
    ]);
    const redacted = Buffer.from(redactFileContent(binary, environment));
    expect(redacted.length).toBe(binary.length);
    expect(redacted.includes(key)).toBe(false);
    expect(redacted.subarray(2, 2 + key.length).toString()).toBe("*".repeat(key.length));
    // Unchanged content is returned as it is (no copy).
    const plain = Buffer.from([0xff, 0x01, 0x02]);
    expect(redactFileContent(plain, environment)).toBe(plain);
  });

  it("does not take a word in a key-like variable for a secret", () => {
    // `CACHE_KEY=default` would otherwise rewrite every "default" in every store.
    const environment = { CACHE_KEY: "default", FLAG_TOKEN: "enabled1", DEPLOY_TOKEN: "d3ploy-9f" };
    expect(knownSecrets(environment)).not.toContain("default");
    expect(knownSecrets(environment)).toContain("enabled1");
    expect(knownSecrets(environment)).toContain("d3ploy-9f");
    expect(redactedJson({ source: "default" }, { environment })).toBe('{"source":"default"}');
  });

  it("registers the credential-like values of a command's environment", () => {
    registerEnvironmentSecrets({ OTHER_TOKEN: "other-env-value-5c1a", PLAIN_KEY: "plainword" });
    expect(knownSecrets({})).toContain("other-env-value-5c1a");
    expect(knownSecrets({})).not.toContain("plainword");
  });

  it("writes files and JSON lines redacted", async () => {
    const folder = await mkdtemp(join(tmpdir(), "skillsmith-redact-"));
    try {
      registerSecret(key);
      await writeRedactedFile(join(folder, "a", "file.txt"), `x ${key}\n`);
      await appendRedactedJsonLine(join(folder, "b", "log.jsonl"), { line: key });
      await appendRedactedJsonLine(join(folder, "b", "log.jsonl"), { line: 2 });
      expect(await readFile(join(folder, "a", "file.txt"), "utf8")).toBe("x [REDACTED]\n");
      expect(await readFile(join(folder, "b", "log.jsonl"), "utf8")).toBe(
        '{"line":"[REDACTED]"}\n{"line":2}\n',
      );
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
