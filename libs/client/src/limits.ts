// The same byte counts as ingest's limits (libs/contracts/src/limits.ts). They are repeated
// here, not imported, so the package has no runtime dependency on the rest of the project;
// limits.spec.ts fails when the two drift apart.

/** The most bytes one call's UTF-8 JSON may have (32 KB); larger calls are refused. */
export const MAX_CALL_BYTES = 32_768;

/** The most bytes one request body may have (500 KB); batches are cut to stay within it. */
export const MAX_REQUEST_BYTES = 512_000;
