/** `value` as a JSON object (not null, not an array), or undefined when it is something else. */
export function asJsonObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * Whether parsed JSON nests objects and arrays more than `maxDepth` levels (`{}` and `[]` are
 * level 1, a scalar level 0). Stops at the first container past the limit, so the recursion
 * is never deeper than `maxDepth + 1` frames, whatever the input.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (maxDepth <= 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, maxDepth - 1)) return true;
    return false;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) if (nestsDeeperThan(object[key], maxDepth - 1)) return true;
  return false;
}
