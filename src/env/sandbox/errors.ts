import { type ErrorCode, type ErrorOptions, InfrastructureError } from "../../core/errors.js";

/**
 * The requested isolation backend cannot run on this machine (tool missing, engine unreachable,
 * kernel refuses namespaces). Never silently downgraded: the message says what is missing, how
 * to get it, and that `--unsafe-no-sandbox` is the explicit way to run without isolation.
 */
export class SandboxUnavailableError extends InfrastructureError {
  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(code, message, options);
  }
}
