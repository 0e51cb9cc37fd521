/** Ranks with ties resolved to the mean of the positions they share ("mid-ranks"). */
export interface MidRanks {
  /** 1-based rank of each input value, in input order; tied values share their mean rank. */
  readonly ranks: Float64Array;
  /** Size of every group of tied values (groups of one are omitted). */
  readonly tieGroups: readonly number[];
}

/**
 * @param tolerance values within this absolute distance of the first value of a tie group join
 *   the group. Wilcoxon passes a small tolerance because deltas such as 100·(7/12 − 5/12) and
 *   100·(3/12 − 1/12) are equal on paper but can differ in the last bit.
 */
export function midRanks(values: readonly number[], tolerance = 0): MidRanks {
  const order = values
    .map((_, index) => index)
    .sort((left, right) => {
      return (values[left] as number) - (values[right] as number);
    });
  const ranks = new Float64Array(values.length);
  const tieGroups: number[] = [];
  let start = 0;
  while (start < order.length) {
    let end = start + 1;
    const value = values[order[start] as number];
    while (
      end < order.length &&
      (values[order[end] as number] as number) - (value as number) <= tolerance
    )
      end++;
    // Positions start..end-1 (0-based) hold ranks start+1..end; their mean is (start+1+end)/2.
    const rank = (start + 1 + end) / 2;
    for (let position = start; position < end; position++) ranks[order[position] as number] = rank;
    if (end - start > 1) tieGroups.push(end - start);
    start = end;
  }
  return { ranks, tieGroups };
}
