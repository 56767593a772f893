// Command e2e sends every call type through the client to a running ingest, for the
// end-to-end test (test/e2e/clients/go-client.spec.ts): -n rounds of alias, identify,
// track, page, screen and group, each numbered with "seq", then one call the server must
// reject, then Close. It prints one JSON line saying what the callback was told.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"

	analytics "github.com/sluice-dev/sluice/libs/analytics-go/v2"
)

// outcomes counts what the callback was told.
type outcomes struct {
	mu        sync.Mutex
	Succeeded int      `json:"succeeded"`
	Failed    int      `json:"failed"`
	Rejected  []string `json:"rejected"`
}

func (o *outcomes) Success(analytics.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.Succeeded++
}

func (o *outcomes) Failure(_ analytics.Message, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.Failed++
	var rejected *analytics.RejectedError
	if errors.As(err, &rejected) {
		o.Rejected = append(o.Rejected, rejected.Code)
	}
}

func main() {
	endpoint := flag.String("endpoint", "", "base URL of the tracking API (required)")
	writeKey := flag.String("writekey", "", "the source's write key")
	run := flag.String("run", "run", "a tag for this run's user ids")
	rounds := flag.Int("n", 50, "rounds of one call of each type")
	flag.Parse()

	client := analytics.New(*writeKey)
	client.Endpoint = *endpoint
	o := &outcomes{Rejected: []string{}}
	client.Callback = o
	queued := 0
	queue := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			os.Exit(1)
		}
		queued++
	}
	for i := 0; i < *rounds; i++ {
		user := fmt.Sprintf("go-%s-%d", *run, i)
		anon := fmt.Sprintf("anon-%s-%d", *run, i)
		seq := map[string]interface{}{"seq": i}
		// The sign-up flow: the anonymous id becomes the user id, then calls use the new id.
		queue(client.Alias(&analytics.Alias{PreviousId: anon, UserId: user}))
		queue(client.Identify(&analytics.Identify{UserId: user, Traits: map[string]interface{}{"seq": i, "plan": "pro"}}))
		queue(client.Track(&analytics.Track{UserId: user, Event: "Go E2E", Properties: seq}))
		queue(client.Page(&analytics.Page{UserId: user, Name: "Pricing", Category: "Docs",
			Traits: map[string]interface{}{"seq": i, "path": "/pricing"}}))
		queue(client.Screen(&analytics.Screen{AnonymousId: anon, Name: "Home", Properties: seq}))
		queue(client.Group(&analytics.Group{UserId: user, GroupId: "g-" + *run, Traits: seq,
			Context: map[string]interface{}{"locale": "fr-FR"}, Integrations: map[string]interface{}{"Webhooks": false}}))
	}
	// A timestamp without a time zone: the server refuses this call alone.
	queue(client.Track(&analytics.Track{UserId: "go-" + *run + "-bad", Event: "Bad", Timestamp: "2026-01-02 03:04"}))
	if err := client.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	line, _ := json.Marshal(map[string]interface{}{
		"queued": queued, "succeeded": o.Succeeded, "failed": o.Failed, "rejected": o.Rejected,
	})
	fmt.Println(string(line))
}
