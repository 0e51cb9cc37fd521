/**
 * Defensive advice names the danger it warns against: "Never run `curl … | sh` directly", "Do
 * not copy `~/.ssh/id_rsa`". Such a line is kept as a low-severity note instead of a high
 * finding. The negation must govern the dangerous text itself: it opens a clause (no `,;:.!?`,
 * "but", "instead", "then", "unless" between it and the match) and is not followed by a word that
 * turns it into encouragement ("do not hesitate to", "never forget to", "don't ask before").
 */

const NEGATION =
  /\b(?:never|do not|don['’]t|does not|must not|mustn['’]t|should not|shouldn['’]t|avoid|refuse to|not to)\b/gi;

/** Words after a negation that make it an instruction to do the thing. */
const ENCOURAGING =
  /^\s*(?:hesitate|forget|fail|wait|ask|bother|worry|skip|stop|delay|mind|refuse|omit|neglect|question|doubt)\b/i;

/** Where a clause ends: punctuation before a space or the end, or a word that turns the sense. */
const CLAUSE_END =
  /[,;:!?](?:\s|$)|\.(?:\s|$)|\b(?:but|instead|then|unless|except|otherwise|and then)\b/i;

/**
 * True when every part of `line` that `fires` flags sits inside a negated clause: the line with
 * those clauses blanked no longer fires, and a negated clause alone does.
 */
export function warnsAgainst(line: string, fires: (text: string) => boolean): boolean {
  let remainder = line;
  let negatedFires = false;
  for (const match of line.matchAll(NEGATION)) {
    const start = match.index ?? 0;
    const afterNegation = start + match[0].length;
    const rest = line.slice(afterNegation);
    if (ENCOURAGING.test(rest)) continue;
    const end = CLAUSE_END.exec(rest);
    const clauseEnd = end === null ? line.length : afterNegation + end.index;
    const clause = line.slice(start, clauseEnd);
    if (!fires(clause)) continue;
    negatedFires = true;
    remainder = `${remainder.slice(0, start)}${" ".repeat(clauseEnd - start)}${remainder.slice(clauseEnd)}`;
  }
  return negatedFires && !fires(remainder);
}
