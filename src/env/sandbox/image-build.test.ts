import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { availableContainerSandbox } from "../../../test/support/sandboxes.js";
import { isSkillsmithError } from "../../core/errors.js";
import { DEFAULT_BASE_IMAGE } from "./container.js";
import { imageId } from "./image-build.js";

const engine = await availableContainerSandbox();

describe("imageId", () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "skillsmith-image-id-"));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it("raises an infrastructure error when the engine does not answer, instead of 'no image'", async () => {
    // A socket path with nothing listening: the engine is unreachable, which must not read as a
    // missing image (that would send prepare to fall back to another base image).
    const unreachable = new Docker({ socketPath: join(folder, "no-engine.sock") });
    const failure = await imageId(unreachable, DEFAULT_BASE_IMAGE).catch((error: unknown) => error);
    expect(isSkillsmithError(failure, "infrastructure")).toBe(true);
    expect((failure as Error).message).toContain(DEFAULT_BASE_IMAGE);
  });

  it.skipIf(engine === undefined)(
    "is undefined for an image the engine does not have, and an id for one it has (needs Podman/Docker)",
    async () => {
      const docker = engine?.docker;
      if (docker === undefined) throw new Error("no engine");
      expect(await imageId(docker, "localhost/skillsmith-no-such-image:never")).toBeUndefined();
      expect(await imageId(docker, DEFAULT_BASE_IMAGE)).toMatch(/^(sha256:)?[0-9a-f]{64}$/);
    },
  );
});
