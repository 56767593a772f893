/**
 * `make` of each item, made once for each run of consecutive items that `same` finds alike:
 * every item of a run gets the run's first value, the same object. A batch's calls mostly form
 * one run, so what they share is made (and compared) once.
 */
export function madePerRun<T, R>(
  items: readonly T[],
  same: (item: T, previous: T) => boolean,
  make: (item: T) => R,
): R[] {
  const made: R[] = [];
  for (let i = 0; i < items.length; i += 1) {
    made.push(i > 0 && same(items[i], items[i - 1]) ? made[i - 1] : make(items[i]));
  }
  return made;
}
