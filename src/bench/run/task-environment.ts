/**
 * Environment-only skills (Harbor / SkillsBench tasks): no repository, an `environment/Dockerfile`
 * (or a ready image) instead. The image is built once per content hash through the container
 * backend (`buildTaskImage`); the task's working directory (its `WORKDIR`) is copied out of the
 * image once into the cache and becomes the prepared base every run's workspace is materialised
 * from, mounted back at the same path. Agent and verifier then run in the task's image, each in a
 * fresh container: only the working directory carries over from the agent to the verifier (files
 * the agent leaves elsewhere in its container are gone, unlike Harbor's one long-lived container).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UsageError } from "../../core/errors.js";
import {
  type BaseImageMap,
  buildTaskImage,
  ContainerSandbox,
  copyFolderFromImage,
  DEFAULT_BUILD_TIMEOUT_SECONDS,
  externalImages,
  type PreparedBase,
  type SandboxExecRequest,
  type SandboxV1,
  treeDigest,
} from "../../env/index.js";
import type { SuiteSkill } from "../suite/types.js";

export interface TaskBaseOptions {
  readonly skill: SuiteSkill;
  readonly sandbox: SandboxV1;
  readonly cacheDir: string;
  readonly baseImages?: BaseImageMap;
  readonly onLog?: (line: string) => void;
}

function requireContainer(skill: SuiteSkill, sandbox: SandboxV1): ContainerSandbox {
  if (sandbox instanceof ContainerSandbox) return sandbox;
  throw new UsageError(
    "bench.task-needs-container",
    `skill ${skill.id} is an environment-only task (no repository, an environment image or Dockerfile): run it with --sandbox container (Docker or Podman)`,
  );
}

async function imagePresent(sandbox: ContainerSandbox, image: string): Promise<boolean> {
  return (await sandbox.imageId(image)) !== undefined;
}

/** Build (or reuse) the task's image and its working directory as a prepared base. */
export async function prepareTaskBase(options: TaskBaseOptions): Promise<PreparedBase> {
  const { skill, cacheDir } = options;
  const sandbox = requireContainer(skill, options.sandbox);
  const environment = skill.environment;
  const notes: string[] = [];
  let image: string;
  let key: string;
  let baseImage: string;
  if (environment?.dockerfile !== undefined) {
    const built = await buildTaskImage({
      docker: sandbox.docker,
      contextDir: dirname(environment.dockerfile),
      dockerfile: await readFile(environment.dockerfile, "utf8"),
      taskName: skill.id,
      ...(options.baseImages === undefined ? {} : { baseImages: options.baseImages }),
      buildTimeoutMs: (environment.buildTimeoutSeconds ?? DEFAULT_BUILD_TIMEOUT_SECONDS) * 1000,
      ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
    });
    image = built.image;
    key = built.key.slice(0, 24);
    baseImage = built.fromImages.map((from) => built.mappedBaseImages[from] ?? from).join(", ");
    for (const [from, to] of Object.entries(built.mappedBaseImages)) {
      notes.push(`FROM ${from} built from ${to} (--base-image)`);
    }
    notes.push(`${built.reused ? "reused" : "built"} ${built.image} from environment/Dockerfile`);
  } else if (environment?.image !== undefined) {
    const wanted = environment.image;
    image = options.baseImages?.[wanted] ?? wanted;
    if (!(await imagePresent(sandbox, image))) {
      throw new UsageError(
        "env.task-base-image-missing",
        `task ${skill.id} runs in image ${image}, which is not present locally, and no registry is used; map it with --base-image ${wanted}=localhost/skillsmith-base:bookworm or load it first`,
        { data: { task: skill.id, missing: [image] } },
      );
    }
    if (image !== wanted) notes.push(`image ${wanted} replaced by ${image} (--base-image)`);
    key = ((await sandbox.imageId(image)) ?? image).replace(/^sha256:/, "").slice(0, 24);
    baseImage = image;
  } else {
    throw new UsageError(
      "bench.no-repository",
      `skill ${skill.id} has neither a repository nor an environment image or Dockerfile`,
    );
  }
  // What the task's task.toml set that is not carried out (bench import harbor), so the run's
  // manifest says so beside the image it ran in.
  const ignored = skill.source?.ignoredFields;
  if (Array.isArray(ignored)) {
    for (const field of ignored) notes.push(`task.toml field ignored: ${String(field)}`);
  }
  const workdir = environment.workdir ?? (await imageWorkdir(sandbox, image));
  if (workdir === undefined || workdir === "/" || !workdir.startsWith("/")) {
    throw new UsageError(
      "bench.task-workdir-missing",
      `task ${skill.id}: its image sets no working directory other than / (add a WORKDIR to environment/Dockerfile, or environment.workdir to skill.yaml)`,
    );
  }
  if (workdir === "/logs" || workdir.startsWith("/logs/") || workdir === "/tests") {
    // The reward folder and the tests are mounted fresh for the verifier only; a workspace
    // there would let the agent's files sit where the verifier's are expected.
    throw new UsageError(
      "bench.task-workdir-reserved",
      `task ${skill.id}: working directory ${workdir} overlaps /logs or /tests, which the verifier owns`,
    );
  }

  const root = join(cacheDir, "task-bases", `${key}-${workdir.replace(/[^A-Za-z0-9]+/g, "_")}`);
  const tree = join(root, "tree");
  const reused = await stat(tree).then(
    () => true,
    () => false,
  );
  if (!reused) {
    const temporary = join(cacheDir, "task-bases", `.tmp-${randomBytes(6).toString("hex")}`);
    try {
      await copyFolderFromImage(sandbox.docker, image, workdir, join(temporary, "tree"));
      await mkdir(dirname(root), { recursive: true });
      await rename(temporary, root).catch(async (error: unknown) => {
        // Another process published the same base first: theirs is identical.
        if ((error as { code?: string }).code !== "ENOTEMPTY" && !(await exists(tree))) throw error;
      });
    } finally {
      await rm(temporary, { recursive: true, force: true });
    }
  }
  return {
    key: `task-${key}`,
    root,
    tree,
    cacheDir,
    repositoryName: basename(workdir),
    source: `task ${skill.id} (${environment.dockerfile ?? image})`,
    requestedCommit: "",
    commit: "",
    workspaceMountPath: workdir,
    setup: undefined,
    environment: { image, baseImage, notes },
    digest: await treeDigest(tree),
    removedSkillFolders: [],
    preparedAt: new Date().toISOString(),
    reused,
  };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function imageWorkdir(sandbox: ContainerSandbox, image: string): Promise<string | undefined> {
  const info = await sandbox.docker.getImage(image).inspect();
  const workdir = info.Config?.WorkingDir;
  return typeof workdir === "string" && workdir !== "" ? workdir : undefined;
}

/**
 * The sandbox an environment-only task's agent runs in: the task's image by default, its
 * `[agent] user` (else the image's `USER`), and the task's memory, CPU and process limits
 * (task.toml) wherever the agent's configuration names none. Verifiers get the image, user and
 * limits from the runner directly.
 */
export function taskSandbox(sandbox: SandboxV1, base: PreparedBase, skill: SuiteSkill): SandboxV1 {
  const image = base.environment?.image;
  const limits = skill.environment?.limits;
  const user = skill.environment?.agentUser;
  const exec = (request: SandboxExecRequest) =>
    sandbox.exec({
      ...request,
      ...(request.image === undefined && image !== undefined ? { image } : {}),
      ...(request.user === undefined && user !== undefined ? { user } : {}),
      limits: {
        ...(limits?.memoryMb === undefined ? {} : { memoryBytes: limits.memoryMb * 1024 * 1024 }),
        ...(limits?.cpus === undefined ? {} : { cpus: limits.cpus }),
        ...(limits?.processes === undefined ? {} : { maxProcesses: limits.processes }),
        ...request.limits,
      },
    });
  const enforcement = sandbox.limitEnforcement?.bind(sandbox);
  return {
    specificationVersion: "v1",
    kind: sandbox.kind,
    exec,
    ...(enforcement === undefined ? {} : { limitEnforcement: enforcement }),
  };
}

/** One environment-only task whose images this machine cannot get. */
export interface MissingTaskImage {
  readonly skill: string;
  /** `FROM` images (or the task's image) not present locally, after `--base-image` mapping. */
  readonly images: readonly string[];
}

/**
 * Every environment-only task's images that are not present locally (after mapping), without
 * building anything: so a run stops once, naming every task and image, rather than at the first.
 */
export async function missingTaskImages(
  skills: readonly SuiteSkill[],
  sandbox: SandboxV1,
  baseImages: BaseImageMap = {},
): Promise<MissingTaskImage[]> {
  const tasks = skills.filter((skill) => skill.repository === undefined);
  if (tasks.length === 0 || !(sandbox instanceof ContainerSandbox)) return [];
  const missing: MissingTaskImage[] = [];
  for (const skill of tasks) {
    const environment = skill.environment;
    const wanted =
      environment?.dockerfile !== undefined
        ? externalImages(await readFile(environment.dockerfile, "utf8"))
        : environment?.image !== undefined
          ? [environment.image]
          : [];
    const absent: string[] = [];
    for (const image of wanted.map((from) => baseImages[from] ?? from)) {
      if (!(await imagePresent(sandbox, image))) absent.push(image);
    }
    if (absent.length > 0) missing.push({ skill: skill.id, images: absent });
  }
  return missing;
}

/** Throws one `UsageError` naming every task whose images are missing (see `missingTaskImages`). */
export async function requireTaskImages(
  skills: readonly SuiteSkill[],
  sandbox: SandboxV1,
  baseImages: BaseImageMap = {},
): Promise<void> {
  const missing = await missingTaskImages(skills, sandbox, baseImages);
  if (missing.length === 0) return;
  const images = [...new Set(missing.flatMap((task) => task.images))];
  const unmapped = images.filter((image) => !Object.values(baseImages).includes(image));
  throw new UsageError(
    "env.task-base-image-missing",
    `${missing.length} environment-only task${missing.length === 1 ? "" : "s"} cannot be built here: ${missing.map((task) => `${task.skill} starts FROM ${task.images.join(", ")}`).join("; ")}. These images are not present locally and no registry is used${unmapped.length > 0 ? `; map them to local images with ${unmapped.map((image) => `--base-image ${image}=localhost/skillsmith-base:bookworm`).join(" ")}` : ""}`,
    { data: { missing } },
  );
}
