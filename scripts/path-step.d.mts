// Types of scripts/path-step.mjs for the tests that call it.
export interface PutOnPathOptions {
  /** The clone (where `npm link` runs). */
  readonly root: string;
  /** The clone's built CLI, dist/cli/main.js. */
  readonly main: string;
  /** npm's global prefix; `npm prefix -g` when absent. */
  readonly prefix?: string;
  /** Receives what a person should read (default: stderr). */
  readonly write?: (text: string) => void;
}

export function putOnPath(options: PutOnPathOptions): boolean;
