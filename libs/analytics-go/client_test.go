package analytics

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func track(i int) *Track {
	return &Track{Event: "E", UserId: "u", Properties: map[string]interface{}{"i": i}}
}

// indexes lists properties.i of each call of a request.
func indexes(t *testing.T, r request) []int {
	t.Helper()
	var out []int
	for _, raw := range r.batch {
		var call struct {
			Properties struct{ I int } `json:"properties"`
		}
		if err := json.Unmarshal(raw, &call); err != nil {
			t.Fatal(err)
		}
		out = append(out, call.Properties.I)
	}
	return out
}

func TestRequestShape(t *testing.T) {
	s := newServer(t, nil)
	c := New("wk-123")
	c.Endpoint = s.URL
	c.FlushAt = 2
	if err := c.Track(&Track{Event: "E", UserId: "u"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Identify(&Identify{UserId: "u"}); err != nil {
		t.Fatal(err)
	}
	r := s.waitRequests(t, 1)[0]
	if r.path != "/v1/batch" {
		t.Errorf("path = %q, want /v1/batch", r.path)
	}
	if got, want := r.header.Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte("wk-123:")); got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	sentAt, err := time.Parse(time.RFC3339Nano, r.sentAt)
	if err != nil || time.Since(sentAt).Abs() > time.Minute || !strings.HasSuffix(r.sentAt, "Z") {
		t.Errorf("sentAt = %q (%v), want the time of sending in UTC", r.sentAt, err)
	}
	ids := map[string]bool{}
	for _, call := range s.calls(t) {
		id, _ := call["messageId"].(string)
		if !uuidV4.MatchString(id) || ids[id] {
			t.Errorf("messageId %q is not a fresh UUID v4", id)
		}
		ids[id] = true
		lib := call["context"].(map[string]interface{})["library"]
		if lib.(map[string]interface{})["name"] != "analytics-go" || lib.(map[string]interface{})["version"] != Version {
			t.Errorf("context.library = %v", lib)
		}
		if _, ok := call["timestamp"]; ok {
			t.Errorf("the library filled in a timestamp: %v", call)
		}
	}
	if len(ids) != 2 {
		t.Errorf("got %d calls, want 2", len(ids))
	}
}

func TestEndpoint(t *testing.T) {
	cases := map[string]string{
		"http://127.0.0.1:8080":              "http://127.0.0.1:8080/v1/batch",
		"http://127.0.0.1:8080/":             "http://127.0.0.1:8080/v1/batch",
		"https://in.example.com/sluice":      "https://in.example.com/sluice/v1/batch",
		"https://in.example.com/v1/batch":    "https://in.example.com/v1/batch",
		"https://in.example.com/x/v1/import": "https://in.example.com/x/v1/import",
		"https://in.example.com/v1/batch/":   "https://in.example.com/v1/batch",
	}
	for endpoint, want := range cases {
		if got, err := batchURL(endpoint); err != nil || got != want {
			t.Errorf("batchURL(%q) = %q, %v; want %q", endpoint, got, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://h/", "http://"} {
		if _, err := batchURL(bad); !errors.Is(err, ErrInvalidEndpoint) {
			t.Errorf("batchURL(%q) err = %v, want ErrInvalidEndpoint", bad, err)
		}
	}
	c := New("k")
	c.Endpoint = "not a url"
	if err := c.Track(track(0)); !errors.Is(err, ErrInvalidEndpoint) {
		t.Errorf("Track with a bad endpoint: %v", err)
	}
}

// An Endpoint left unset is refused at the first call and every later one, named in the
// error and logged once (for programs that ignore the methods' errors); nothing is sent.
func TestEndpointRequired(t *testing.T) {
	t.Setenv("SLUICE_ENDPOINT", "http://127.0.0.1:8080") // read from nowhere but the field
	c := New("k")
	if c.Endpoint != "" {
		t.Fatalf("New set Endpoint to %q, want no default", c.Endpoint)
	}
	logs := &syncBuffer{}
	c.Logger = log.New(logs, "", 0)
	var sent atomic.Int64
	c.Client = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent.Add(1)
		return nil, errors.New("no request should be made")
	})}
	for i := 0; i < 3; i++ {
		err := c.Track(track(i))
		if !errors.Is(err, ErrInvalidEndpoint) || !strings.Contains(err.Error(), "Endpoint is not set") {
			t.Fatalf("call %d: err = %v, want ErrInvalidEndpoint naming Endpoint", i, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(logs.String(), "Endpoint is not set"); got != 1 {
		t.Errorf("the error was logged %d times, want once: %q", got, logs.String())
	}
	if sent.Load() != 0 {
		t.Errorf("%d requests sent without an endpoint", sent.Load())
	}
}

func TestBatchesByCount(t *testing.T) {
	s := newServer(t, nil)
	c, _, _ := testClient(t, s)
	c.FlushAt = 3
	c.FlushAfter = time.Hour
	for i := 0; i < 7; i++ {
		if err := c.Track(track(i)); err != nil {
			t.Fatal(err)
		}
	}
	got := s.waitRequests(t, 2)
	if len(got) != 2 {
		t.Fatalf("%d requests before Close, want 2 full batches", len(got))
	}
	_ = c.Close()
	got = s.received()
	want := [][]int{{0, 1, 2}, {3, 4, 5}, {6}}
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d", len(got), len(want))
	}
	for i := range want {
		if g := indexes(t, got[i]); !equal(g, want[i]) {
			t.Errorf("request %d carried %v, want %v", i, g, want[i])
		}
	}
}

func TestBatchesByTime(t *testing.T) {
	s := newServer(t, nil)
	c, _, _ := testClient(t, s)
	c.FlushAfter = 100 * time.Millisecond
	queuedAt := time.Now()
	_ = c.Track(track(0))
	_ = c.Track(track(1))
	r := s.waitRequests(t, 1)[0]
	if waited := time.Since(queuedAt); waited < 100*time.Millisecond {
		t.Errorf("sent after %v, before FlushAfter", waited)
	}
	if g := indexes(t, r); !equal(g, []int{0, 1}) {
		t.Errorf("the timed batch carried %v", g)
	}
	// The timer runs again after a send: a later call goes out on its own too.
	_ = c.Track(track(2))
	if g := indexes(t, s.waitRequests(t, 2)[1]); !equal(g, []int{2}) {
		t.Errorf("the second timed batch carried %v", g)
	}
}

// FlushAt and its older name Size are read when the first call is queued, so setting them
// after New works; with FlushAfter an hour away, only the count can send.
func TestFlushAtOneSetAfterNew(t *testing.T) {
	for _, field := range []string{"FlushAt", "Size"} {
		t.Run(field, func(t *testing.T) {
			s := newServer(t, nil)
			c, _, _ := testClient(t, s)
			c.FlushAfter = time.Hour
			if field == "FlushAt" {
				c.FlushAt = 1
			} else {
				c.Size = 1
			}
			for i := 0; i < 3; i++ {
				_ = c.Track(track(i))
			}
			got := s.waitRequests(t, 3)
			for i, r := range got {
				if g := indexes(t, r); !equal(g, []int{i}) {
					t.Errorf("request %d carried %v", i, g)
				}
			}
		})
	}
}

func TestFlushAtAndSizePrecedence(t *testing.T) {
	cases := []struct{ flushAt, size, want int }{
		{DefaultFlushAt, DefaultFlushAt, DefaultFlushAt},
		{5, DefaultFlushAt, 5},
		{DefaultFlushAt, 7, 7},
		{5, 7, 5},
		{0, 0, DefaultFlushAt},
		{0, 3, 3},
	}
	for _, tc := range cases {
		if got := resolveFlushAt(tc.flushAt, tc.size); got != tc.want {
			t.Errorf("FlushAt %d, Size %d: %d, want %d", tc.flushAt, tc.size, got, tc.want)
		}
	}
}

func TestCallSizeLimit(t *testing.T) {
	s := newServer(t, nil)
	c, _, _ := testClient(t, s)
	c.FlushAt = 1
	padded := func(n int) *Track {
		return &Track{Event: "E", UserId: "u", MessageId: "m", Properties: map[string]interface{}{"pad": strings.Repeat("x", n)}}
	}
	base, _, _, _ := encodeCall(padded(0), newUUID)
	exact := MaxCallBytes - len(base)
	if err := c.Track(padded(exact)); err != nil {
		t.Errorf("a call of exactly %d bytes was refused: %v", MaxCallBytes, err)
	}
	err := c.Track(padded(exact + 1))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a call of %d bytes: err = %v, want ErrTooLarge", MaxCallBytes+1, err)
	}
	_ = c.Close()
	if calls := s.calls(t); len(calls) != 1 {
		t.Errorf("%d calls sent, want the 1 within the limit", len(calls))
	}
}

func TestRequestSizeLimit(t *testing.T) {
	s := newServer(t, nil)
	c, o, _ := testClient(t, s)
	c.FlushAt = 1000
	c.FlushAfter = time.Hour
	const n = 40 // 40 calls of about 30 KB: at least three requests
	for i := 0; i < n; i++ {
		m := track(i)
		m.Properties["pad"] = strings.Repeat("x", 30_000)
		if err := c.Track(m); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.Close()
	got := s.received()
	total := 0
	for i, r := range got {
		if len(r.body) > MaxRequestBytes {
			t.Errorf("request %d has %d bytes, over %d", i, len(r.body), MaxRequestBytes)
		}
		// A request is only cut short when the next call would not fit.
		if i < len(got)-1 && len(r.body)+30_100 <= MaxRequestBytes {
			t.Errorf("request %d has only %d bytes", i, len(r.body))
		}
		total += len(r.batch)
	}
	if total != n || len(got) < 3 {
		t.Errorf("%d calls in %d requests, want %d calls in 3 or more", total, len(got), n)
	}
	if ok, failed := o.counts(); ok != n || failed != 0 {
		t.Errorf("callback: %d successes, %d failures", ok, failed)
	}
}

func TestRetriesNetworkErrors5xxAnd429(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter, _ *request) {
		switch n {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"code":"kafka_unavailable","message":"later"}`))
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		case 3:
			// A dropped connection: the client sees a network error.
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
		default:
			_, _ = w.Write([]byte(`{"success":true}`))
		}
	})
	c, o, _ := testClient(t, s)
	c.FlushAt = 2
	_ = c.Track(track(0))
	_ = c.Track(track(1))
	got := s.waitRequests(t, 4)
	_ = c.Close()
	if len(s.received()) != 4 {
		t.Errorf("%d requests, want 4 (3 failed attempts, then success)", len(s.received()))
	}
	for i, r := range got {
		if string(r.batch[0]) != string(got[0].batch[0]) || len(r.batch) != 2 {
			t.Errorf("attempt %d did not repeat the same calls", i+1)
		}
	}
	if ok, failed := o.counts(); ok != 2 || failed != 0 {
		t.Errorf("callback: %d successes, %d failures; want 2, 0", ok, failed)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter, _ *request) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	c, o, logs := testClient(t, s)
	c.maxAttempts = 3
	c.FlushAt = 1
	_ = c.Track(track(0))
	_ = c.Close()
	if n := len(s.received()); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	if ok, failed := o.counts(); ok != 0 || failed != 1 {
		t.Fatalf("callback: %d successes, %d failures; want 0, 1", ok, failed)
	}
	var status *StatusError
	if err := o.failures[0].err; !errors.As(err, &status) || status.StatusCode != 500 {
		t.Errorf("failure error = %v, want a StatusError 500", err)
	}
	if !strings.Contains(logs.String(), "1 call(s) not sent") {
		t.Errorf("the failure was not logged: %q", logs.String())
	}
}

func TestNoRetryOnPermanentErrors(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter, _ *request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":"unauthorized","message":"unknown or disabled write key"}`))
	})
	c, o, _ := testClient(t, s)
	c.FlushAt = 1
	_ = c.Track(track(0))
	_ = c.Close()
	if n := len(s.received()); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
	var status *StatusError
	if len(o.failures) != 1 || !errors.As(o.failures[0].err, &status) || status.Code != "unauthorized" {
		t.Errorf("failures = %v, want one StatusError unauthorized", o.failures)
	}
}

func TestRejectedCallsReachTheCallback(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter, _ *request) {
		_, _ = w.Write([]byte(`{"success":true,"rejected":[{"index":1,"code":"invalid_call","message":"timestamp must be an ISO 8601 date-time with a time zone"}]}`))
	})
	c, o, _ := testClient(t, s)
	c.FlushAt = 3
	first, bad, last := track(0), track(1), track(2)
	bad.Timestamp = "yesterday"
	for _, m := range []*Track{first, bad, last} {
		_ = c.Track(m)
	}
	_ = c.Close()
	if len(o.successes) != 2 || o.successes[0] != first || o.successes[1] != last {
		t.Errorf("successes = %v, want the first and last calls", o.successes)
	}
	var rejected *RejectedError
	if len(o.failures) != 1 || o.failures[0].msg != bad || !errors.As(o.failures[0].err, &rejected) || rejected.Code != "invalid_call" {
		t.Errorf("failures = %+v, want the second call, rejected as invalid_call", o.failures)
	}
}

func TestCloseDrainsTheQueue(t *testing.T) {
	s := newServer(t, nil)
	c, o, _ := testClient(t, s)
	c.FlushAt = 100
	c.FlushAfter = time.Hour
	const n = 250
	for i := 0; i < n; i++ {
		if err := c.Track(track(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returned: every call was sent, in order.
	calls := 0
	for _, r := range s.received() {
		for _, i := range indexes(t, r) {
			if i != calls {
				t.Fatalf("call %d arrived at position %d", i, calls)
			}
			calls++
		}
	}
	if calls != n {
		t.Errorf("%d calls sent before Close returned, want %d", calls, n)
	}
	if ok, _ := o.counts(); ok != n {
		t.Errorf("%d successes, want %d", ok, n)
	}
	if err := c.Track(track(n)); !errors.Is(err, ErrClosed) {
		t.Errorf("Track after Close: %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseBeforeAnyCall(t *testing.T) {
	s := newServer(t, nil)
	c, _, _ := testClient(t, s)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Track(track(0)); !errors.Is(err, ErrClosed) {
		t.Errorf("Track after Close: %v, want ErrClosed", err)
	}
	if n := len(s.received()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestFullQueueIsReported(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(_ int, w http.ResponseWriter, _ *request) {
		<-release // hold the request in flight, so that the queue fills behind it
		_, _ = w.Write([]byte(`{"success":true}`))
	})
	c, o, _ := testClient(t, s)
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // runs before the client's Close, even when the test fails early
	c.FlushAt = 1
	c.MaxQueuedCalls = 5
	accepted := 0
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		if err = c.Track(track(i)); err == nil {
			accepted++
		}
		if i == 0 {
			s.waitRequests(t, 1) // the first call is in flight, out of the queue
		}
	}
	if !errors.Is(err, ErrQueueFull) {
		t.Fatalf("err = %v, want ErrQueueFull", err)
	}
	if accepted != 6 {
		t.Errorf("%d calls accepted, want 6 (1 in flight and 5 queued)", accepted)
	}
	unblock()
	_ = c.Close()
	if n := len(s.calls(t)); n != accepted {
		t.Errorf("%d calls sent, want all %d accepted ones", n, accepted)
	}
	if ok, failed := o.counts(); ok != accepted || failed != 0 {
		t.Errorf("callback: %d successes, %d failures", ok, failed)
	}
}

func TestConcurrentRequestsAreBounded(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, most := 0, 0
	s := newServer(t, func(_ int, w http.ResponseWriter, _ *request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		_, _ = w.Write([]byte(`{"success":true}`))
	})
	c, o, _ := testClient(t, s)
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	c.FlushAt = 1
	c.MaxConcurrentRequests = 3
	for i := 0; i < 5; i++ {
		_ = c.Track(track(i))
	}
	s.waitRequests(t, 3) // three requests in flight at once, none answered yet
	unblock()
	_ = c.Close()
	if n := len(s.calls(t)); n != 5 {
		t.Errorf("%d calls sent, want 5", n)
	}
	if ok, _ := o.counts(); ok != 5 {
		t.Errorf("%d successes, want 5", ok)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 3 {
		t.Errorf("at most %d requests were in flight at once, want 3", most)
	}
}

func TestConcurrentCalls(t *testing.T) {
	s := newServer(t, nil)
	c, _, _ := testClient(t, s)
	c.FlushAfter = 10 * time.Millisecond
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := c.Track(track(i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	_ = c.Close()
	if n := len(s.calls(t)); n != goroutines*each {
		t.Errorf("%d calls sent, want %d", n, goroutines*each)
	}
}

func TestDebugLogsWhatIsQueuedAndSent(t *testing.T) {
	t.Setenv("DEBUG", "analytics")
	s := newServer(t, nil)
	c, _, logs := testClient(t, s)
	c.FlushAt = 1
	_ = c.Track(&Track{Event: "E", UserId: "u", Properties: map[string]interface{}{"secret": "s3cr3t"}})
	_ = c.Close()
	out := logs.String()
	for _, want := range []string{
		"queued track 00000000-0000-4000-8000-000000000001 (",
		"sent 1 call(s) (",
		" to " + s.URL + "/v1/batch: 200",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the debug log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cr3t") || strings.Contains(out, "test-write-key") {
		t.Errorf("the debug log shows a payload or the write key:\n%s", out)
	}
}

func TestNoLogsWithoutDebug(t *testing.T) {
	t.Setenv("DEBUG", "other,router")
	s := newServer(t, nil)
	c, _, logs := testClient(t, s)
	c.FlushAt = 1
	_ = c.Track(track(0))
	_ = c.Close()
	if out := logs.String(); out != "" {
		t.Errorf("logged without DEBUG=analytics:\n%s", out)
	}
}

func TestDebugEnabled(t *testing.T) {
	for value, want := range map[string]bool{
		"": false, "analytics": true, "router,analytics": true, "x analytics": true,
		"*": true, "analytics:*": true, "analyticsx": false, "sluice": false,
	} {
		if got := debugEnabled(value); got != want {
			t.Errorf("debugEnabled(%q) = %v, want %v", value, got, want)
		}
	}
}

func TestUUID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := newUUID()
		if !uuidV4.MatchString(id) || seen[id] {
			t.Fatalf("%q is not a fresh UUID v4", id)
		}
		seen[id] = true
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := map[string]time.Duration{
		"": 0, "2": 2 * time.Second, "-1": 0, "3600": maxRetryAfter, "soon": 0,
		now.Add(3 * time.Second).Format(http.TimeFormat): 3 * time.Second,
	}
	for value, want := range cases {
		if got := retryAfter(value, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", value, got, want)
		}
	}
}

func TestExponentialBackoff(t *testing.T) {
	for attempt, ceiling := range map[int]time.Duration{1: 100 * time.Millisecond, 3: 400 * time.Millisecond, 20: backoffMax} {
		for i := 0; i < 100; i++ {
			if d := exponentialBackoff(attempt); d < ceiling/2 || d > ceiling {
				t.Fatalf("backoff after attempt %d = %v, want within [%v, %v]", attempt, d, ceiling/2, ceiling)
			}
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
