import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cleanupsAfterEach,
  selfLoopingLink,
  temporaryDirectoryIn,
} from "../../../test/support/temporary.js";
import { importHarbor } from "./harbor.js";

const cleanups = cleanupsAfterEach();

describe("importHarbor on a task path that is there but unreadable", () => {
  it("is refused naming the path, not reported as no Harbor task folder", async () => {
    const root = await temporaryDirectoryIn(cleanups, "harbor-unreadable-");
    const loop = await selfLoopingLink(root, "task");
    await expect(importHarbor([loop], { out: join(root, "suite") })).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: loop },
    });
  });
});
