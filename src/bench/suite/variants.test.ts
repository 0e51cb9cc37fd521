import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../../test/support/temporary.js";
import { checkVariantFolder } from "./variants.js";

const cleanups = cleanupsAfterEach();

describe("checkVariantFolder", () => {
  it("says a missing variant folder is not a folder", async () => {
    const root = await temporaryDirectoryIn(cleanups, "variant-");
    await expect(checkVariantFolder(join(root, "absent"), "--variant v")).rejects.toMatchObject({
      code: "bench.variant-folder-missing",
    });
  });

  it("refuses an unreadable variant folder naming it, not as a missing one", async () => {
    const root = await temporaryDirectoryIn(cleanups, "variant-");
    const loop = await selfLoopingLink(root, "variant");
    await expect(checkVariantFolder(loop, "--variant v")).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: loop },
    });
  });
});
