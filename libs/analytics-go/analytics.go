// Package analytics queues analytics calls in memory and sends them in batches to Sluice's
// tracking API, or to any endpoint that speaks the same wire format.
//
// This is the version 2 API. It is kept for compatibility with programs written against it,
// and it is deprecated: new programs should expect its successor.
//
//	client := analytics.New(writeKey)
//	client.Endpoint = "https://ingest.example.com" // required: there is no default
//	defer client.Close()
//	err := client.Track(&analytics.Track{UserId: "u-1", Event: "Signed Up"})
//
// Endpoint has no default and is read from no environment variable: a client whose Endpoint
// is empty (or not an absolute http(s) URL) refuses its first call and every later one with
// an error that wraps ErrInvalidEndpoint and names the field, and logs that error once, so
// a program that forgot to set it finds out at its first call rather than losing calls to
// an address it never meant.
//
// A method call checks the message's required fields, encodes it and queues it; it makes no
// HTTP request. A background goroutine sends the queue as a POST to /v1/batch when FlushAt
// calls are waiting or FlushAfter has passed since the last send, and Close sends what is
// left. Calls are sent in the order they were queued, one request at a time unless
// MaxConcurrentRequests allows more.
package analytics

import (
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// The library's name and version, sent as context.library in every call.
const (
	LibraryName = "analytics-go"
	Version     = "2.0.0"
)

// Defaults of the Client's settings.
const (
	// DefaultFlushAt is how many queued calls make a batch.
	DefaultFlushAt = 20
	// DefaultFlushAfter is the longest a queued call waits for a batch to fill up.
	DefaultFlushAfter = 5 * time.Second
	// DefaultMaxConcurrentRequests keeps calls in order: one request in flight at a time.
	DefaultMaxConcurrentRequests = 1
	// DefaultMaxQueuedCalls bounds the calls waiting to be sent.
	DefaultMaxQueuedCalls = 10_000
	// defaultMaxAttempts bounds the attempts of one request (the first one included).
	defaultMaxAttempts = 8
	// defaultHTTPTimeout bounds one attempt of the default HTTP client.
	defaultHTTPTimeout = 10 * time.Second
)

// Callback is told what became of each queued call. Its methods run on the client's
// background goroutine, one at a time (concurrently when MaxConcurrentRequests is above 1):
// a slow callback delays the sending.
type Callback interface {
	// Success: the server accepted the call.
	Success(m Message)
	// Failure: the call was not accepted: the server rejected it (*RejectedError), answered
	// its request with an error status (*StatusError), or could not be reached after the
	// last attempt (the transport's error).
	Failure(m Message, err error)
}

// Logger receives the client's log lines; *log.Logger is one.
type Logger interface {
	Printf(format string, args ...interface{})
}

// Client queues calls and sends them in batches. Create it with New, change its exported
// fields before the first call is queued (they are read then, once), and Close it before
// the program exits, or the calls still queued are lost. Its methods are safe for
// concurrent use.
type Client struct {
	// Endpoint is the base URL of the tracking API, for example "https://ingest.example.com";
	// required, there is no default. "/v1/batch" is appended to its path unless the path
	// already ends in "/v1/batch" or "/v1/import".
	Endpoint string
	// FlushAt is how many queued calls are sent together; 1 sends each call at once (for
	// development and short-lived programs).
	FlushAt int
	// Size is the older name of FlushAt. The one changed from its default is used; when both
	// were changed, FlushAt is.
	Size int
	// FlushAfter is the longest time between two sends while calls are waiting.
	FlushAfter time.Duration
	// MaxConcurrentRequests is how many requests may be in flight at once. With 1, the
	// default, calls arrive in the order they were queued; more raises the throughput when
	// the server's latency is the limit, but batches may then arrive out of order and
	// Callback methods may run concurrently.
	MaxConcurrentRequests int
	// MaxQueuedCalls bounds the calls waiting to be sent; past it a call is refused with
	// ErrQueueFull (for example while the server is unreachable and requests are retried).
	MaxQueuedCalls int
	// Logger receives failures, and with Verbose or DEBUG=analytics, what is queued and sent.
	Logger Logger
	// Verbose logs what is queued and sent, as DEBUG=analytics in the environment does.
	Verbose bool
	// Callback, when set, is told the outcome of every call.
	Callback Callback
	// Client sends the requests; replace it to set timeouts, proxies or TLS settings.
	Client *http.Client

	writeKey string
	// Replaced by tests: the source of message ids, the clock, the retry delays.
	newID       func() string
	now         func() time.Time
	backoff     func(attempt int) time.Duration
	maxAttempts int

	startOnce sync.Once
	startErr  error
	cfg       settings // written once, in start
	queue     chan queued
	done      chan struct{}

	mu     sync.RWMutex // guards closed, and sending on queue against its closing
	closed bool
}

// settings are the Client's fields as read when the first call is queued.
type settings struct {
	url         string
	flushAt     int
	flushAfter  time.Duration
	maxQueued   int
	maxInFlight int
	logger      Logger
	debug       bool
	callback    Callback
	http        *http.Client
	newID       func() string
	now         func() time.Time
	backoff     func(attempt int) time.Duration
	maxAttempts int
}

// queued is a call waiting to be sent: the message for the callback, its JSON, and its type
// and messageId for the logs.
type queued struct {
	msg      Message
	data     []byte
	kind, id string
}

// New returns a client that sends calls with writeKey (the source's write key, sent as the
// HTTP Basic user name). Set its Endpoint before the first call: it has no default, and
// until it is set every call is refused with an error wrapping ErrInvalidEndpoint. Nothing
// starts until the first call is queued.
//
// Deprecated: the version 2 API is kept for compatibility.
func New(writeKey string) *Client {
	return &Client{
		FlushAt:               DefaultFlushAt,
		Size:                  DefaultFlushAt,
		FlushAfter:            DefaultFlushAfter,
		MaxQueuedCalls:        DefaultMaxQueuedCalls,
		MaxConcurrentRequests: DefaultMaxConcurrentRequests,
		Logger:                log.New(os.Stderr, "analytics: ", log.LstdFlags),
		writeKey:              writeKey,
		newID:                 newUUID,
		now:                   time.Now,
		backoff:               exponentialBackoff,
		maxAttempts:           defaultMaxAttempts,
	}
}

// Identify queues an identify call.
func (c *Client) Identify(m *Identify) error { return c.enqueue(m) }

// Track queues a track call.
func (c *Client) Track(m *Track) error { return c.enqueue(m) }

// Page queues a page call.
func (c *Client) Page(m *Page) error { return c.enqueue(m) }

// Screen queues a screen call.
func (c *Client) Screen(m *Screen) error { return c.enqueue(m) }

// Group queues a group call.
func (c *Client) Group(m *Group) error { return c.enqueue(m) }

// Alias queues an alias call.
func (c *Client) Alias(m *Alias) error { return c.enqueue(m) }

// Close sends the calls still queued (retrying as usual), waits until that is done and stops
// the background goroutine. Calls queued afterwards are refused with ErrClosed. Closing
// again waits for the first Close and returns nil.
func (c *Client) Close() error {
	c.startOnce.Do(func() {}) // a client closed before its first call never starts
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		if c.queue != nil {
			close(c.queue)
		}
	}
	c.mu.Unlock()
	if c.done != nil {
		<-c.done
	}
	return nil
}

func (c *Client) enqueue(m Message) error {
	if isNil(m) {
		return fmt.Errorf("%w: the message is nil", ErrMissingField)
	}
	if err := m.Validate(); err != nil {
		return err
	}
	c.startOnce.Do(c.start)
	if c.startErr != nil {
		return c.startErr
	}
	if c.queue == nil {
		return ErrClosed // closed before its first call: it never started
	}
	data, kind, id, err := encodeCall(m, c.cfg.newID)
	if err != nil {
		return fmt.Errorf("analytics: encoding the call: %w", err)
	}
	if len(data) > MaxCallBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(data), MaxCallBytes)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return ErrClosed
	}
	select {
	case c.queue <- queued{msg: m, data: data, kind: kind, id: id}:
	default:
		return fmt.Errorf("%w: %d calls are waiting to be sent", ErrQueueFull, c.cfg.maxQueued)
	}
	if c.cfg.debug {
		c.cfg.logger.Printf("queued %s %s (%d bytes)", kind, id, len(data))
	}
	return nil
}

// start reads the settings and starts the background goroutine; it runs once, when the
// first call is queued.
func (c *Client) start() {
	s, err := c.settings()
	if err != nil {
		c.startErr = err
		// Logged as well as returned: a program that ignores the methods' errors still sees it.
		logger := c.Logger
		if logger == nil {
			logger = log.New(os.Stderr, "analytics: ", log.LstdFlags)
		}
		logger.Printf("%v", err)
		return
	}
	c.cfg = s
	c.queue = make(chan queued, s.maxQueued)
	c.done = make(chan struct{})
	go c.loop()
}

func (c *Client) settings() (settings, error) {
	u, err := batchURL(c.Endpoint)
	if err != nil {
		return settings{}, err
	}
	s := settings{
		url:         u,
		flushAt:     resolveFlushAt(c.FlushAt, c.Size),
		flushAfter:  c.FlushAfter,
		maxQueued:   c.MaxQueuedCalls,
		maxInFlight: c.MaxConcurrentRequests,
		logger:      c.Logger,
		debug:       c.Verbose || debugEnabled(os.Getenv("DEBUG")),
		callback:    c.Callback,
		http:        c.Client,
		newID:       c.newID,
		now:         c.now,
		backoff:     c.backoff,
		maxAttempts: c.maxAttempts,
	}
	if s.flushAfter <= 0 {
		s.flushAfter = DefaultFlushAfter
	}
	if s.maxQueued <= 0 {
		s.maxQueued = DefaultMaxQueuedCalls
	}
	if s.maxInFlight <= 0 {
		s.maxInFlight = DefaultMaxConcurrentRequests
	}
	if s.logger == nil {
		s.logger = log.New(os.Stderr, "analytics: ", log.LstdFlags)
	}
	if s.http == nil {
		s.http = &http.Client{Timeout: defaultHTTPTimeout}
	}
	// A Client built as a literal rather than by New gets the same defaults.
	if s.newID == nil {
		s.newID = newUUID
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.backoff == nil {
		s.backoff = exponentialBackoff
	}
	if s.maxAttempts <= 0 {
		s.maxAttempts = defaultMaxAttempts
	}
	return s, nil
}

// resolveFlushAt picks the batch size from FlushAt and its older name Size: the one changed
// from the default wins, FlushAt when both were; values below 1 count as unset.
func resolveFlushAt(flushAt, size int) int {
	n := DefaultFlushAt
	if size > 0 && size != DefaultFlushAt {
		n = size
	}
	if flushAt > 0 && flushAt != DefaultFlushAt {
		n = flushAt
	}
	return n
}

// batchURL is the URL requests are POSTed to: the endpoint with "/v1/batch" appended unless
// its path already ends in "/v1/batch" or "/v1/import".
func batchURL(endpoint string) (string, error) {
	if endpoint == "" {
		return "", fmt.Errorf("%w: Endpoint is not set; set it to the tracking API's base URL "+
			"(for example \"https://ingest.example.com\") before the first call", ErrInvalidEndpoint)
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrInvalidEndpoint, endpoint)
	}
	p := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(p, "/v1/batch") && !strings.HasSuffix(p, "/v1/import") {
		p += "/v1/batch"
	}
	u.Path, u.RawPath = p, ""
	return u.String(), nil
}

// debugEnabled reads DEBUG as a list of names separated by commas or spaces: "analytics",
// "analytics*", "analytics:*" or "*" turn the client's debug logging on.
func debugEnabled(value string) bool {
	names := strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' })
	for _, name := range names {
		switch name {
		case "*", "analytics", "analytics*", "analytics:*":
			return true
		}
	}
	return false
}

func isNil(m Message) bool {
	switch v := m.(type) {
	case nil:
		return true
	case *Identify:
		return v == nil
	case *Track:
		return v == nil
	case *Page:
		return v == nil
	case *Screen:
		return v == nil
	case *Group:
		return v == nil
	case *Alias:
		return v == nil
	}
	return false
}
