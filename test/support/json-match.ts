/** Deep JSON equality for documentation examples: the expected string "…" matches any value. */
export function matchesJson(actual: unknown, expected: unknown): boolean {
  if (expected === '…') return actual !== undefined;
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matchesJson(actual[i], e));
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
    const keys = Object.keys(expected);
    return (
      keys.length === Object.keys(actual).length &&
      keys.every((k) => matchesJson((actual as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k]))
    );
  }
  return Object.is(actual, expected);
}
