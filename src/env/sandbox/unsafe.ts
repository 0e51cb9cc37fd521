import { runProcess } from "../../core/process.js";
import type { SandboxExecRequest, SandboxExecResult, SandboxV1 } from "./types.js";

/**
 * No isolation at all: runs the command on the host in the workspace folder. Only for users who
 * pass `--unsafe-no-sandbox` where no real sandbox is available. The fixed workspace mount path
 * cannot be honoured without a mount namespace, so `SKILLSMITH_WORKSPACE` names the real folder.
 */
export class UnsafeSandbox implements SandboxV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "unsafe" as const;

  async exec(request: SandboxExecRequest): Promise<SandboxExecResult> {
    const [program, ...args] = request.command;
    if (program === undefined) throw new TypeError("empty command");
    const result = await runProcess(program, args, {
      cwd: request.cwd ?? request.workspace,
      env: { ...process.env, ...request.env, SKILLSMITH_WORKSPACE: request.workspace },
      timeoutMs: request.limits.timeoutMs,
      ...(request.input === undefined ? {} : { input: request.input }),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
      ...(request.onStdout === undefined ? {} : { onStdout: request.onStdout }),
      ...(request.onStderr === undefined ? {} : { onStderr: request.onStderr }),
    });
    return {
      exitCode: result.spawnError === undefined ? result.exitCode : 127,
      stdout: result.stdout,
      stderr: result.spawnError === undefined ? result.stderr : `${result.spawnError.message}\n`,
      timedOut: result.timedOut,
      oomKilled: false,
      durationMs: result.durationMs,
    };
  }
}
