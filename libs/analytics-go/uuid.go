package analytics

import (
	"crypto/rand"
	"encoding/hex"
)

// newUUID returns a random UUID version 4 (RFC 9562) in its 36-character text form.
func newUUID() string {
	var b [16]byte
	// crypto/rand.Read never returns an error (Go 1.24 and later abort the program instead).
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10 (RFC 9562)
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
