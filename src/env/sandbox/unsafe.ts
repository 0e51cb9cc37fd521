import { runProcess } from "../../core/process.js";
import type {
  LimitEnforcement,
  SandboxExecRequest,
  SandboxExecResult,
  SandboxV1,
} from "./types.js";

/**
 * Variables whose names say they hold credentials. Even without isolation they are not handed
 * on: an agent or a verifier gets the keys its request names (an agent's per-run dummy key),
 * never the caller's.
 */
const CREDENTIAL_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|PASSPHRASE|AUTH/i;

/** The caller's environment without credential variables: what an unsandboxed command inherits. */
export function environmentWithoutCredentials(
  environment: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (value !== undefined && !CREDENTIAL_NAME.test(name)) kept[name] = value;
  }
  return kept;
}

/**
 * No isolation at all: runs the command on the host in the workspace folder. Only for users who
 * pass `--unsafe-no-sandbox` where no real sandbox is available. The fixed workspace mount path
 * cannot be honoured without a mount namespace, so `SKILLSMITH_WORKSPACE` names the real folder
 * (and agents are given the host path instead). Only the wall clock is enforced: no memory or
 * process limit, and nothing of the host is hidden; credential variables are not passed on.
 */
export class UnsafeSandbox implements SandboxV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "unsafe" as const;

  limitEnforcement(): LimitEnforcement {
    return {
      mechanism: "none",
      memory: false,
      processes: false,
      cpu: false,
      detectsHits: false,
      notes: [
        "unsafe: no isolation; only the wall-time limit is enforced (memory, processes and CPU are NOT limited)",
      ],
    };
  }

  async exec(request: SandboxExecRequest): Promise<SandboxExecResult> {
    const [program, ...args] = request.command;
    if (program === undefined) throw new TypeError("empty command");
    const result = await runProcess(program, args, {
      cwd: request.cwd ?? request.workspace,
      env: {
        ...environmentWithoutCredentials(process.env),
        ...request.env,
        SKILLSMITH_WORKSPACE: request.workspace,
      },
      timeoutMs: request.limits.timeoutMs,
      ...(request.input === undefined ? {} : { input: request.input }),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
      ...(request.onStdout === undefined ? {} : { onStdout: request.onStdout }),
      ...(request.onStderr === undefined ? {} : { onStderr: request.onStderr }),
    });
    return {
      exitCode: result.spawnError === undefined ? result.exitCode : 127,
      stdout: result.stdout,
      stderr:
        result.stderr + (result.spawnError === undefined ? "" : `${result.spawnError.message}\n`),
      timedOut: result.timedOut,
      oomKilled: false,
      durationMs: result.durationMs,
      ...(result.timedOut
        ? {
            limitHit: {
              limit: "time" as const,
              detail: `wall-time limit of ${request.limits.timeoutMs} ms reached: the process tree was killed`,
            },
          }
        : {}),
    };
  }
}
