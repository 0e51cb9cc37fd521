import type { Finding } from "./types.js";

/** `file:line  code  message`, the one-line form used in messages and the CLI. */
export function formatFinding(finding: Finding): string {
  const where = finding.line === undefined ? finding.file : `${finding.file}:${finding.line}`;
  return `${where}  ${finding.code}  ${finding.message}`;
}

export function formatFindingList(findings: readonly Finding[]): string {
  return findings.map((finding) => `  ${formatFinding(finding)}`).join("\n");
}
