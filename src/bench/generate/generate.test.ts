import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import type { SandboxV1 } from "../../env/index.js";
import type { ModelClient } from "../../model/index.js";
import { generateSuite } from "./generate.js";

const cleanups = cleanupsAfterEach();

describe("generateSuite's --out check", () => {
  it("refuses an --out that is a file as an input error naming it", async () => {
    const root = await temporaryDirectoryIn(cleanups, "generate-out-");
    const out = join(root, "suite");
    await writeFile(out, "not a folder");
    await expect(
      generateSuite({
        skill: join(root, "skill"),
        repository: join(root, "repository"),
        commit: "0000000",
        out,
        // Never reached: the --out check runs before the skill, repository or model is used.
        model: undefined as unknown as ModelClient,
        sandbox: undefined as unknown as SandboxV1,
      }),
    ).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: out, errno: "ENOTDIR" },
    });
  });
});
