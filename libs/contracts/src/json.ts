/** `value` as a JSON object (not null, not an array), or undefined when it is something else. */
export function asJsonObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
