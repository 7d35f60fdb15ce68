/**
 * A sort that can stop and resume: whole-store orderings (the groups of GET /alerts/groups, the
 * alerts of one group, the fingerprints a journal compaction writes) done a bounded number of
 * comparisons at a time, so that none holds the event loop every API shares for the whole sort
 * (Array.prototype.sort of 100,000 label sets: 1.8 s in one turn).
 *
 * A stable merge sort: runs of RUN elements put in order by insertion, then merged pairwise. A
 * stable sort's result is fully determined by the comparator (elements that compare equal keep
 * their order), so it is the order Array.prototype.sort (stable since V8 7.0) gives.
 */

const RUN = 16;

/**
 * Sort `items` (left as it was or used as scratch space; the sorted array is the generator's
 * return value) by `cmp`, yielding `pause` after every `every` comparisons or so. Run it with
 * `yield*` from another generator, or call next() until done.
 */
export function* sortInSteps<T, P>(items: T[], cmp: (a: T, b: T) => number, pause: P, every = 512): Generator<P, T[], unknown> {
  const n = items.length;
  let src = items;
  let budget = every;
  // Runs of RUN by insertion (stable: an element moves left past strictly greater ones only).
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(lo + RUN, n);
    for (let i = lo + 1; i < hi; i++) {
      const x = src[i]!;
      let j = i - 1;
      while (j >= lo) {
        budget--;
        if (cmp(src[j]!, x) <= 0) break;
        src[j + 1] = src[j]!;
        j--;
      }
      src[j + 1] = x;
    }
    if (budget <= 0) {
      budget = every;
      yield pause;
    }
  }
  if (n <= RUN) return src;
  let dst: T[] = new Array<T>(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      // Already in order (input that is mostly sorted): one comparison, then a copy.
      if (mid < hi) budget--;
      if (mid >= hi || cmp(src[mid - 1]!, src[mid]!) <= 0) {
        while (k < hi) dst[k++] = src[i++]!;
      } else {
        while (i < mid && j < hi) {
          budget--;
          dst[k++] = cmp(src[i]!, src[j]!) <= 0 ? src[i++]! : src[j++]!;
          if (budget <= 0) {
            budget = every;
            yield pause;
          }
        }
        while (i < mid) dst[k++] = src[i++]!;
        while (j < hi) dst[k++] = src[j++]!;
      }
      if (budget <= 0) {
        budget = every;
        yield pause;
      }
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/** Run a stepped sort to its end at once (for callers that need no pauses). */
export function finishSort<T>(steps: Generator<unknown, T[], unknown>): T[] {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}
