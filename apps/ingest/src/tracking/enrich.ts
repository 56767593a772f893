// The enrichment is a pure function shared with the admin app (audience and computed-trait
// syncs publish identifies in the same shape); it lives in libs/contracts.
export { enrichCall, type EnrichContext } from '@app/contracts';
