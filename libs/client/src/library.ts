/**
 * The library's name and version, sent in every call's `context.library`. Kept equal to
 * package.json by a unit test (reading package.json at runtime would tie the code to where
 * the build output lands).
 */
export const LIBRARY = { name: '@sluice/analytics', version: '0.1.0' } as const;
