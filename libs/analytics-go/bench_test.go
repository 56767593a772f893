package analytics

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// accepting answers every request with 200 {"success":true} without a network, so the
// benchmark measures the client and not a server.
type accepting struct{}

func (accepting) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	return &http.Response{
		StatusCode: http.StatusOK,
		Body:       io.NopCloser(strings.NewReader(`{"success":true}`)),
		Header:     http.Header{},
		Request:    r,
	}, nil
}

// BenchmarkEnqueue is the cost of one Track call to its caller: checking, encoding and
// queuing. The background goroutine batches and "sends" meanwhile.
func BenchmarkEnqueue(b *testing.B) {
	c := New("bench-write-key")
	c.Endpoint = "http://sluice.invalid" // never dialled: the transport answers
	c.Client = &http.Client{Transport: accepting{}}
	c.FlushAt = 100
	c.FlushAfter = time.Second
	m := benchTrack()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for {
			err := c.Track(m)
			if err == nil {
				break
			}
			if !errors.Is(err, ErrQueueFull) {
				b.Fatal(err)
			}
			runtime.Gosched() // the sender is behind: let it catch up
		}
	}
	b.StopTimer()
	_ = c.Close()
}

// BenchmarkEncode is the share of BenchmarkEnqueue spent turning the message into JSON.
func BenchmarkEncode(b *testing.B) {
	m := benchTrack()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, _, err := encodeCall(m, newUUID); err != nil {
			b.Fatal(err)
		}
	}
}

// benchTrack is a typical track call: about 250 bytes of JSON.
func benchTrack() *Track {
	return &Track{
		Event: "Order Completed", UserId: "user-123456",
		Properties: map[string]interface{}{"total": 12.5, "currency": "EUR", "items": 3, "coupon": "SPRING"},
		Context:    map[string]interface{}{"ip": "203.0.113.7", "locale": "fr-FR"},
	}
}
