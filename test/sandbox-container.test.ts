/**
 * Container-specific behaviour over the real Docker Engine API (Podman here): connecting and
 * failing to connect, building an environment once per (repository, commit, recipe) from a
 * generated Dockerfile, falling back to the local base image, and reusing the build.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ContainerSandbox,
  candidateEndpoints,
  connectDocker,
  DEFAULT_BASE_IMAGE,
  importRootFilesystem,
} from "../src/env/sandbox/container.js";
import { SandboxUnavailableError } from "../src/env/sandbox/errors.js";
import { createSandbox } from "../src/env/sandbox/factory.js";

const engine = await connectDocker({ timeoutMs: 2_000 }).catch(() => undefined);
const baseImagePresent =
  engine !== undefined &&
  (await engine.docker
    .getImage(DEFAULT_BASE_IMAGE)
    .inspect()
    .then(() => true)
    .catch(() => false));

describe("connecting to a Docker/Podman API", () => {
  it("tries DOCKER_HOST first, then Docker's socket, then Podman's", () => {
    const endpoints = candidateEndpoints({ DOCKER_HOST: "tcp://127.0.0.1:2375" });
    expect(endpoints.slice(0, 3)).toEqual([
      "tcp://127.0.0.1:2375",
      "unix:///var/run/docker.sock",
      "unix:///run/podman/podman.sock",
    ]);
  });

  it("names every endpoint it tried when none answers", async () => {
    // A TCP port that is bound but never speaks HTTP: the ping must time out, not hang.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    const missingSocket = join(
      tmpdir(),
      `skillsmith-no-engine-${randomBytes(4).toString("hex")}.sock`,
    );
    try {
      const failure = await connectDocker({
        endpoints: [`unix://${missingSocket}`, `tcp://127.0.0.1:${port}`],
        timeoutMs: 300,
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SandboxUnavailableError);
      const error = failure as SandboxUnavailableError;
      expect(error.code).toBe("env.container-engine-unreachable");
      expect(error.family).toBe("infrastructure");
      expect(error.message).toContain(`unix://${missingSocket}`);
      expect(error.message).toContain(`tcp://127.0.0.1:${port}`);
      expect(error.message).toContain("--unsafe-no-sandbox");
      expect(error.data.tried).toEqual([`unix://${missingSocket}`, `tcp://127.0.0.1:${port}`]);
    } finally {
      silent.close();
    }
  });

  it.skipIf(engine === undefined)(
    "createSandbox({kind: 'container'}) connects (skipped: no Docker/Podman API socket)",
    async () => {
      const sandbox = await createSandbox({ kind: "container" });
      expect(sandbox.kind).toBe("container");
      expect(sandbox.specificationVersion).toBe("v1");
    },
  );
});

describe(`running a missing image${engine === undefined ? " (skipped: no Docker/Podman API socket)" : ""}`, () => {
  it.skipIf(engine === undefined)(
    "fails with a typed error that says how to get the image",
    async () => {
      if (engine === undefined) throw new Error("unreachable: guarded by skipIf");
      const sandbox = new ContainerSandbox({ docker: engine.docker });
      const failure = await sandbox
        .exec({
          image: `localhost/skillsmith-never-built:${randomBytes(4).toString("hex")}`,
          command: ["true"],
          workspace: tmpdir(),
          workspaceMountPath: "/workspace/none",
          network: "none",
          limits: { timeoutMs: 10_000 },
        })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SandboxUnavailableError);
      expect((failure as SandboxUnavailableError).code).toBe("env.container-image-missing");
      expect((failure as Error).message).toContain("scripts/ci-containers.sh");
    },
  );
});

describe(`importing a root file system${engine === undefined ? " (skipped: no Docker/Podman API socket)" : ""}`, () => {
  it.skipIf(engine === undefined)("imports a folder as an image through the API", async () => {
    if (engine === undefined) throw new Error("unreachable: guarded by skipIf");
    const folder = join(tmpdir(), `skillsmith-rootfs-${randomBytes(4).toString("hex")}`);
    mkdirSync(join(folder, "etc"), { recursive: true });
    writeFileSync(join(folder, "etc", "marker"), "imported\n");
    const tag = `localhost/skillsmith-import-test:${randomBytes(4).toString("hex")}`;
    try {
      await importRootFilesystem(engine.docker, folder, tag);
      const info = await engine.docker.getImage(tag).inspect();
      expect(info.RepoTags ?? []).toContain(tag);
      // One layer holding exactly what we put in (a folder and a file, no base underneath).
      expect(info.RootFS.Layers?.length).toBe(1);
    } finally {
      rmSync(folder, { recursive: true, force: true });
      await engine.docker
        .getImage(tag)
        .remove()
        .catch(() => undefined);
    }
  });
});

describe(`preparing environments${baseImagePresent ? "" : " (skipped: no Docker/Podman API socket or no base image)"}`, () => {
  let workspace: string;
  const built: string[] = [];

  beforeAll(() => {
    workspace = join(tmpdir(), `skillsmith-prepare-${randomBytes(4).toString("hex")}`, "shop");
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, "README.md"), "# shop\n");
  });

  afterAll(async () => {
    rmSync(join(workspace, ".."), { recursive: true, force: true });
    for (const image of built)
      await engine?.docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
  });

  it.skipIf(!baseImagePresent)(
    "builds once from a generated Dockerfile, falls back to the local base, then reuses",
    async () => {
      if (engine === undefined) throw new Error("unreachable: guarded by skipIf");
      const sandbox = new ContainerSandbox({ docker: engine.docker });
      const request = {
        workspace,
        workspaceMountPath: "/workspace/shop",
        // Unique per test run, so the first prepare really builds.
        cacheKey: `file:///shop@${randomBytes(8).toString("hex")}`,
        recipe: {
          baseImage: "docker.io/library/python:3.11-slim-not-present",
          commands: [
            "echo ready > /opt/setup-marker",
            `printf '%s\\n' "it's \\"quoted\\" \\$HOME" > /opt/quoted`,
          ],
        },
        network: "none" as const,
      };
      const first = await sandbox.prepare(request);
      built.push(first.image);
      expect(first.reused).toBe(false);
      expect(first.baseImage).toBe(DEFAULT_BASE_IMAGE);
      expect(first.notes.join("\n")).toContain(
        "docker.io/library/python:3.11-slim-not-present is not present",
      );
      expect(first.image).toMatch(/^localhost\/skillsmith-env:[0-9a-f]{24}$/);

      const second = await sandbox.prepare(request);
      expect(second.reused).toBe(true);
      expect(second.image).toBe(first.image);

      // Setup products live in the image; the workspace copy sits at the fixed path (visible
      // here through a scratch workspace mounted elsewhere).
      const scratch = join(workspace, "..", "scratch");
      mkdirSync(scratch, { recursive: true });
      const result = await sandbox.exec({
        image: first.image,
        command: ["sh", "-c", "cat /opt/setup-marker /opt/quoted /workspace/shop/README.md"],
        workspace: scratch,
        workspaceMountPath: "/scratch",
        network: "none",
        limits: { timeoutMs: 20_000 },
      });
      expect(result.stderr).toBe("");
      expect(result.stdout).toBe('ready\nit\'s "quoted" $HOME\n# shop\n');
    },
  );
});
