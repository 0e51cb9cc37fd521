import type { SetupLanguage } from "./detect.js";
import {
  localIndexExists,
  localIndexPath,
  type PythonIndexConfiguration,
  pythonIndexLocations,
} from "./package-index.js";

/** How the caller wants setup to treat the network: `auto` asks the ecosystem's index. */
export type SetupNetworkChoice = "auto" | "on" | "off";

export interface NetworkProbe {
  readonly reachable: boolean;
  /** What was asked and what happened, for the setup log. */
  readonly detail: string;
}

/** The index each ecosystem installs from, honouring the variables its own tools read. */
export function packageIndexUrl(
  language: SetupLanguage,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  switch (language) {
    case "python":
      return env.PIP_INDEX_URL ?? env.UV_INDEX_URL ?? "https://pypi.org/simple/";
    case "node":
      return env.npm_config_registry ?? env.NPM_CONFIG_REGISTRY ?? "https://registry.npmjs.org/";
    case "go": {
      const first = (env.GOPROXY ?? "https://proxy.golang.org").split(/[,|]/)[0] ?? "";
      return /^https?:\/\//.test(first) ? first : undefined;
    }
    case "rust":
      return "https://index.crates.io/config.json";
    case "java":
      return "https://repo.maven.apache.org/maven2/";
    case "ruby":
      return "https://rubygems.org/";
    case "unknown":
      return undefined;
  }
}

/**
 * Whether `url` answers within `timeoutMs`: any HTTP response counts (a 401 from a private
 * mirror still means the network is there); a DNS failure, refusal or timeout does not.
 */
export async function probeUrl(url: string, timeoutMs = 4_000): Promise<NetworkProbe> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: "HEAD",
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel().catch(() => undefined);
    return {
      reachable: true,
      detail: `${url} answered HTTP ${response.status} in ${Math.round(performance.now() - started)} ms`,
    };
  } catch (error) {
    const cause =
      error instanceof Error
        ? ((error.cause as Error | undefined)?.message ?? error.message)
        : String(error);
    return { reachable: false, detail: `${url} did not answer (${cause})` };
  }
}

/**
 * The default probe: the detected ecosystem's index. Nothing to download means nothing to ask.
 * For Python, every place the user's pip configuration names is asked (a local mirror folder
 * answers by being there): setup is online when any of them answers, since pip reads them all.
 */
export async function probePackageIndex(
  language: SetupLanguage,
  options: { readonly pythonIndex?: PythonIndexConfiguration } = {},
): Promise<NetworkProbe> {
  if (language === "python" && options.pythonIndex !== undefined) {
    return probeLocations(pythonIndexLocations(options.pythonIndex));
  }
  const url = packageIndexUrl(language);
  if (url === undefined) {
    return {
      reachable: false,
      detail: `no package index to ask for ${language === "unknown" ? "a project of no known ecosystem" : `a ${language} project`}`,
    };
  }
  return probeUrl(url);
}

async function probeLocations(locations: readonly string[]): Promise<NetworkProbe> {
  const probes: NetworkProbe[] = [];
  for (const location of locations) {
    const folder = localIndexPath(location);
    if (folder === undefined) probes.push(await probeUrl(location));
    else {
      const reachable = await localIndexExists(folder);
      probes.push({
        reachable,
        detail: `${location} ${reachable ? "is a folder on this machine" : "is not there"}`,
      });
    }
  }
  return {
    reachable: probes.some((probe) => probe.reachable),
    detail: probes.map((probe) => probe.detail).join("; "),
  };
}
