// Command bench measures the client end to end: it sends -n track calls through the client
// into a running ingest as fast as the client takes them, closes it (so every call is sent
// and acknowledged), and prints one JSON line {"calls","seconds","callsPerSecond"}.
//
//	go run ./internal/bench -endpoint http://127.0.0.1:8080 -writekey KEY -n 100000
//
// -flushat and -concurrency change the client's FlushAt and MaxConcurrentRequests from
// their defaults.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	analytics "github.com/sluice-dev/sluice/libs/analytics-go/v2"
)

// counter counts the callback's outcomes.
type counter struct{ succeeded, failed atomic.Int64 }

func (c *counter) Success(analytics.Message)        { c.succeeded.Add(1) }
func (c *counter) Failure(analytics.Message, error) { c.failed.Add(1) }

func main() {
	endpoint := flag.String("endpoint", "", "base URL of the tracking API (required)")
	writeKey := flag.String("writekey", "", "the source's write key")
	n := flag.Int("n", 10_000, "track calls to send")
	flushAt := flag.Int("flushat", analytics.DefaultFlushAt, "calls per request")
	concurrency := flag.Int("concurrency", analytics.DefaultMaxConcurrentRequests, "requests in flight at once")
	flag.Parse()

	client := analytics.New(*writeKey)
	client.Endpoint = *endpoint
	client.FlushAt = *flushAt
	client.MaxConcurrentRequests = *concurrency
	outcomes := &counter{}
	client.Callback = outcomes
	properties := map[string]interface{}{"total": 12.5, "currency": "EUR", "items": 3}
	started := time.Now()
	waits := 0
	for i := 0; i < *n; i++ {
		m := &analytics.Track{UserId: fmt.Sprintf("bench-user-%d", i%1000), Event: "Order Completed", Properties: properties}
		for {
			err := client.Track(m)
			if err == nil {
				break
			}
			if !errors.Is(err, analytics.ErrQueueFull) {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			// The queue is full while requests are in flight: the producer waits, as a
			// program that must not lose calls would.
			waits++
			time.Sleep(100 * time.Microsecond)
		}
	}
	_ = client.Close()
	seconds := time.Since(started).Seconds()
	if failed := outcomes.failed.Load(); failed > 0 || outcomes.succeeded.Load() != int64(*n) {
		fmt.Fprintf(os.Stderr, "bench: %d of %d calls failed\n", failed, *n)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "bench: the queue was full %d times\n", waits)
	line, _ := json.Marshal(struct {
		Calls          int     `json:"calls"`
		Seconds        float64 `json:"seconds"`
		CallsPerSecond float64 `json:"callsPerSecond"`
	}{*n, seconds, float64(*n) / seconds})
	fmt.Println(string(line))
}
