import { constants } from "node:fs";
import { access, readdir, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, delimiter, dirname, join } from "node:path";
import { InfrastructureError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { packageRoot } from "../core/paths.js";
import type { Mount } from "../env/sandbox/types.js";

/** The agent CLIs we drive, with the versions our tests pin. */
export const AGENT_CLIS = {
  claude: { packageName: "@anthropic-ai/claude-code", version: "2.1.328" },
  codex: { packageName: "@openai/codex", version: "0.169.0" },
} as const;

export type AgentCliName = keyof typeof AGENT_CLIS;

/**
 * Where pinned agent CLIs are installed on first use (`npm run agent-clis`, which the test
 * command runs): outside any clone, so that eight checkouts share one 760 MB copy and a user
 * who only reads or validates never downloads it. `SKILLSMITH_AGENT_CLI_DIR` moves it.
 */
export function agentCliCacheDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  const explicit = environment.SKILLSMITH_AGENT_CLI_DIR;
  if (explicit !== undefined && explicit !== "") return explicit;
  const cacheHome = environment.XDG_CACHE_HOME;
  const base = cacheHome !== undefined && cacheHome !== "" ? cacheHome : join(homedir(), ".cache");
  return join(base, "skillsmith", "agent-clis");
}

/** The folder one pinned CLI is installed into inside the cache (an npm prefix of its own). */
export function agentCliCachePrefix(
  binary: AgentCliName,
  environment: NodeJS.ProcessEnv = process.env,
): string {
  const { packageName, version } = AGENT_CLIS[binary];
  return join(agentCliCacheDirectory(environment), `${packageName.replace("/", "+")}@${version}`);
}

/** An agent CLI is not installed; the message says how to install the pinned version. */
export class AgentCliMissingError extends InfrastructureError {
  constructor(binary: AgentCliName) {
    const { packageName, version } = AGENT_CLIS[binary];
    super(
      "agents.agent-cli-missing",
      `the "${binary}" CLI was not found on PATH, in node_modules/.bin or in ${agentCliCacheDirectory()}; install it with: npm install -g ${packageName}@${version} (or, in a skillsmith clone, npm run agent-clis)`,
      { data: { binary, packageName, version } },
    );
  }
}

function isPinnedCli(binary: string): binary is AgentCliName {
  return Object.hasOwn(AGENT_CLIS, binary);
}

async function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

const located = new Map<string, string | undefined>();

/**
 * Finds an agent CLI once per process: skillsmith's own `node_modules/.bin` first (a pinned copy
 * someone installed there), then the pinned copy in the cache (`npm run agent-clis`), then the
 * working directory's `node_modules/.bin`, then PATH (the CLI a user already has). Returns
 * undefined when absent.
 */
export async function findAgentCli(binary: AgentCliName | string): Promise<string | undefined> {
  if (located.has(binary)) return located.get(binary);
  const candidates: string[] = [];
  try {
    candidates.push(join(packageRoot(), "node_modules", ".bin", binary));
  } catch {
    // Running outside the package (bundled); PATH still works.
  }
  // Only the CLIs we pin have a cached copy; a harness registered by a user names its own binary.
  if (isPinnedCli(binary)) {
    candidates.push(join(agentCliCachePrefix(binary), "node_modules", ".bin", binary));
  }
  candidates.push(join(process.cwd(), "node_modules", ".bin", binary));
  for (const directory of (process.env.PATH ?? "").split(delimiter)) {
    if (directory !== "") candidates.push(join(directory, binary));
  }
  let found: string | undefined;
  for (const candidate of candidates) {
    if (await executable(candidate)) {
      found = candidate;
      break;
    }
  }
  located.set(binary, found);
  return found;
}

export async function requireAgentCli(binary: AgentCliName): Promise<string> {
  const found = await findAgentCli(binary);
  if (found === undefined) throw new AgentCliMissingError(binary);
  return found;
}

/**
 * What a sandbox needs to run a located CLI: the resolved program path, and read-only mounts of
 * the package holding it and of its platform packages (`@openai/codex-linux-x64` beside
 * `@openai/codex`), each at its own path so the CLI's module resolution works unchanged. Only
 * those packages: a sandbox shows nothing else of the checkout the CLI was installed in (not its
 * sources, tests or fixtures), wherever that is (`/tmp`, which sandboxes replace, included).
 * A program outside any `node_modules` gets its own folder mounted.
 */
export async function sandboxedCli(binary: string): Promise<{ program: string; mounts: Mount[] }> {
  const program = await realpath(binary);
  const inPackage = /^(.*\/node_modules)\/((?:@[^/]+\/)?[^/]+)\//.exec(program);
  if (inPackage?.[1] === undefined || inPackage[2] === undefined) {
    const folder = dirname(program);
    return { program, mounts: [{ hostPath: folder, sandboxPath: folder, readOnly: true }] };
  }
  const modules = inPackage[1];
  const name = inPackage[2];
  const scopeFolder = dirname(join(modules, name));
  const siblings = (await unlessMissing(scopeFolder, readdir(scopeFolder))) ?? [];
  const packages = [
    join(modules, name),
    ...siblings
      .filter((entry) => entry.startsWith(`${basename(name)}-`))
      .map((entry) => join(scopeFolder, entry)),
  ];
  return {
    program,
    mounts: packages.map((folder) => ({ hostPath: folder, sandboxPath: folder, readOnly: true })),
  };
}
