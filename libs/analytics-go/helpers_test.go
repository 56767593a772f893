package analytics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// request is one request a test server received.
type request struct {
	header http.Header
	path   string
	body   []byte
	batch  []json.RawMessage
	sentAt string
}

// server is a test tracking API that records requests; respond decides each answer (the
// n-th request, from 1), 200 {"success":true} when nil.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []request
	respond  func(n int, w http.ResponseWriter, r *request)
}

func newServer(t *testing.T, respond func(n int, w http.ResponseWriter, r *request)) *server {
	t.Helper()
	s := &server{respond: respond}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := request{header: r.Header.Clone(), path: r.URL.Path, body: body}
	var parsed struct {
		Batch  []json.RawMessage `json:"batch"`
		SentAt string            `json:"sentAt"`
	}
	if err := json.Unmarshal(body, &parsed); err == nil {
		req.batch, req.sentAt = parsed.Batch, parsed.SentAt
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	s.mu.Unlock()
	if s.respond != nil {
		s.respond(n, w, &req)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"success":true}`))
}

// received returns a copy of the requests so far.
func (s *server) received() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.requests...)
}

// waitRequests polls until at least n requests arrived, or fails after a deadline.
func (s *server) waitRequests(t *testing.T, n int) []request {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := s.received()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d request(s); got %d", n, len(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// calls returns every call received, in order, decoded.
func (s *server) calls(t *testing.T) []map[string]interface{} {
	t.Helper()
	var out []map[string]interface{}
	for _, r := range s.received() {
		for _, raw := range r.batch {
			var call map[string]interface{}
			if err := json.Unmarshal(raw, &call); err != nil {
				t.Fatalf("a call is not JSON: %v", err)
			}
			out = append(out, call)
		}
	}
	return out
}

// outcomes records what the Callback was told.
type outcomes struct {
	mu        sync.Mutex
	successes []Message
	failures  []failure
}

type failure struct {
	msg Message
	err error
}

func (o *outcomes) Success(m Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.successes = append(o.successes, m)
}

func (o *outcomes) Failure(m Message, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failures = append(o.failures, failure{m, err})
}

func (o *outcomes) counts() (successes, failures int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.successes), len(o.failures)
}

// syncBuffer is a log destination safe to write from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testClient is a client of s with numbered message ids, a fixed clock, 1 ms retry delays,
// a callback recorder and a log buffer.
func testClient(t *testing.T, s *server) (*Client, *outcomes, *syncBuffer) {
	t.Helper()
	c := New("test-write-key")
	c.Endpoint = s.URL
	var ids atomic.Int64
	c.newID = func() string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", ids.Add(1)) }
	c.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC) }
	c.backoff = func(int) time.Duration { return time.Millisecond }
	o := &outcomes{}
	c.Callback = o
	logs := &syncBuffer{}
	c.Logger = log.New(logs, "", 0)
	t.Cleanup(func() { _ = c.Close() })
	return c, o, logs
}
