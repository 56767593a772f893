package analytics

// The size limits of Sluice's tracking API, the same byte counts as libs/contracts/src/limits.ts
// (a test reads that file and checks they match).
const (
	// MaxCallBytes is the most bytes one call's JSON may have (32 KB). A larger call is
	// refused when it is queued, with ErrTooLarge.
	MaxCallBytes = 32_768

	// MaxRequestBytes is the most bytes one request body may have (500 KB). A batch is sent
	// before it would grow past this.
	MaxRequestBytes = 512_000
)
