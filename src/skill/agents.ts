/**
 * Where each coding agent discovers skills: a project folder (relative to the project root) and a
 * global one (below the user's home, or a folder the agent's own variable names). One entry for
 * every folder `cleanAgentSkillFolders` removes, so `clean` undoes every install.
 *
 * Sources, read 2026-11: the Claude Code docs (`.claude/skills`, `~/.claude/skills`, moved by
 * `CLAUDE_CONFIG_DIR`); the Codex docs and our machine notes (`.agents/skills`, `$CODEX_HOME/skills`);
 * the OpenCode, Cursor and Gemini CLI docs; and the agent table of the `skills` installer CLI
 * (vercel-labs/skills, `src/agents.ts`) for the rest. Where that table has changed a project
 * folder over time (Codex once read `.codex/skills`, Kilo `.kilocode/skills`), the older folder
 * is kept as its own entry, because agents in the field still read it.
 */
import { join } from "node:path";

export interface AgentSkillFolders {
  readonly id: string;
  readonly displayName: string;
  /** Relative to a project root, `/`-separated. */
  readonly project: string;
  /** Absolute, given the home folder and the environment; undefined when it has none. */
  readonly global: (home: string, env: Readonly<Record<string, string | undefined>>) => string;
}

type Env = Readonly<Record<string, string | undefined>>;

function set(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

const configHome = (home: string, env: Env): string =>
  set(env.XDG_CONFIG_HOME) ?? join(home, ".config");

/** Below the home folder. */
const inHome =
  (...segments: string[]) =>
  (home: string): string =>
    join(home, ...segments);

/** Below `$XDG_CONFIG_HOME` (default `~/.config`). */
const inConfig =
  (...segments: string[]) =>
  (home: string, env: Env): string =>
    join(configHome(home, env), ...segments);

export const AGENTS: readonly AgentSkillFolders[] = [
  {
    id: "claude-code",
    displayName: "Claude Code",
    project: ".claude/skills",
    global: (home, env) => join(set(env.CLAUDE_CONFIG_DIR) ?? join(home, ".claude"), "skills"),
  },
  {
    id: "codex",
    displayName: "Codex",
    project: ".agents/skills",
    global: (home, env) => join(set(env.CODEX_HOME) ?? join(home, ".codex"), "skills"),
  },
  {
    id: "agents",
    displayName: "Any agent reading .agents/skills (Amp, Kimi, Warp, Zed, …)",
    project: ".agents/skills",
    global: inHome(".agents", "skills"),
  },
  {
    id: "amp",
    displayName: "Amp",
    project: ".agents/skills",
    global: inConfig("agents", "skills"),
  },
  {
    id: "antigravity",
    displayName: "Antigravity",
    project: ".agent/skills",
    global: inHome(".gemini", "antigravity", "skills"),
  },
  {
    id: "codex-legacy",
    displayName: "Codex (releases reading .codex/skills)",
    project: ".codex/skills",
    global: (home, env) => join(set(env.CODEX_HOME) ?? join(home, ".codex"), "skills"),
  },
  {
    id: "cursor",
    displayName: "Cursor",
    project: ".cursor/skills",
    global: inHome(".cursor", "skills"),
  },
  {
    id: "github-copilot",
    displayName: "GitHub Copilot",
    project: ".github/skills",
    global: inHome(".copilot", "skills"),
  },
  {
    id: "opencode",
    displayName: "OpenCode",
    project: ".opencode/skills",
    global: inConfig("opencode", "skills"),
  },
  {
    id: "gemini-cli",
    displayName: "Gemini CLI",
    project: ".gemini/skills",
    global: inHome(".gemini", "skills"),
  },
  {
    id: "windsurf",
    displayName: "Windsurf",
    project: ".windsurf/skills",
    global: inHome(".codeium", "windsurf", "skills"),
  },
  {
    id: "goose",
    displayName: "Goose",
    project: ".goose/skills",
    global: inConfig("goose", "skills"),
  },
  {
    id: "droid",
    displayName: "Droid",
    project: ".factory/skills",
    global: inHome(".factory", "skills"),
  },
  {
    id: "cline",
    displayName: "Cline",
    project: ".cline/skills",
    global: inHome(".cline", "skills"),
  },
  {
    id: "codebuddy",
    displayName: "CodeBuddy",
    project: ".codebuddy/skills",
    global: inHome(".codebuddy", "skills"),
  },
  {
    id: "command-code",
    displayName: "Command Code",
    project: ".commandcode/skills",
    global: inHome(".commandcode", "skills"),
  },
  {
    id: "continue",
    displayName: "Continue",
    project: ".continue/skills",
    global: inHome(".continue", "skills"),
  },
  {
    id: "crush",
    displayName: "Crush",
    project: ".crush/skills",
    global: inConfig("crush", "skills"),
  },
  {
    id: "junie",
    displayName: "Junie",
    project: ".junie/skills",
    global: inHome(".junie", "skills"),
  },
  {
    id: "kilo",
    displayName: "Kilo Code",
    project: ".kilocode/skills",
    global: inHome(".kilocode", "skills"),
  },
  {
    id: "kiro-cli",
    displayName: "Kiro CLI",
    project: ".kiro/skills",
    global: inHome(".kiro", "skills"),
  },
  { id: "kode", displayName: "Kode", project: ".kode/skills", global: inHome(".kode", "skills") },
  {
    id: "mcpjam",
    displayName: "MCPJam",
    project: ".mcpjam/skills",
    global: inHome(".mcpjam", "skills"),
  },
  { id: "mux", displayName: "Mux", project: ".mux/skills", global: inHome(".mux", "skills") },
  {
    id: "neovate",
    displayName: "Neovate",
    project: ".neovate/skills",
    global: inHome(".neovate", "skills"),
  },
  {
    id: "openclaude",
    displayName: "OpenClaude",
    project: ".openclaude/skills",
    global: inHome(".openclaude", "skills"),
  },
  {
    id: "openhands",
    displayName: "OpenHands",
    project: ".openhands/skills",
    global: inHome(".openhands", "skills"),
  },
  { id: "pi", displayName: "Pi", project: ".pi/skills", global: inHome(".pi", "agent", "skills") },
  {
    id: "pochi",
    displayName: "Pochi",
    project: ".pochi/skills",
    global: inHome(".pochi", "skills"),
  },
  {
    id: "qoder",
    displayName: "Qoder",
    project: ".qoder/skills",
    global: inHome(".qoder", "skills"),
  },
  {
    id: "qwen-code",
    displayName: "Qwen Code",
    project: ".qwen/skills",
    global: inHome(".qwen", "skills"),
  },
  { id: "roo", displayName: "Roo Code", project: ".roo/skills", global: inHome(".roo", "skills") },
  { id: "trae", displayName: "Trae", project: ".trae/skills", global: inHome(".trae", "skills") },
  {
    id: "zencoder",
    displayName: "Zencoder",
    project: ".zencoder/skills",
    global: inHome(".zencoder", "skills"),
  },
];

const byId = new Map(AGENTS.map((agent) => [agent.id, agent]));

export function agentFolders(id: string): AgentSkillFolders | undefined {
  return byId.get(id);
}

/** The canonical copy in symlink mode: the folder most agents read. */
export const CANONICAL_PROJECT_FOLDER = ".agents/skills";
export const canonicalGlobalFolder = (home: string): string => join(home, ".agents", "skills");
