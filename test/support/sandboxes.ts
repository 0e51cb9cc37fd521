import { ContainerSandbox, DEFAULT_BASE_IMAGE } from "../../src/env/sandbox/container.js";

/**
 * The container sandbox when a Docker/Podman API socket answers and skillsmith's base image
 * (python3, pytest, node; built by scripts/ci-containers.sh) exists; undefined otherwise, so
 * tests can `skipIf` naming what is missing.
 */
export async function availableContainerSandbox(): Promise<ContainerSandbox | undefined> {
  try {
    const sandbox = await ContainerSandbox.connect();
    return (await sandbox.imageId(DEFAULT_BASE_IMAGE)) === undefined ? undefined : sandbox;
  } catch {
    return undefined;
  }
}
