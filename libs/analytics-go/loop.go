package analytics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

const (
	// sentAtLayout formats a request's sentAt in UTC with milliseconds, always 24 bytes.
	sentAtLayout = "2006-01-02T15:04:05.000Z07:00"
	sentAtBytes  = len("2026-01-02T03:04:05.000Z")
	// requestOverhead is the bytes of a request body other than its calls and the commas
	// between them: {"batch":[...],"sentAt":"..."}.
	requestOverhead = len(`{"batch":[],"sentAt":""}`) + sentAtBytes
	// maxAnswerBytes bounds how much of an answer is read.
	maxAnswerBytes = 1 << 20
	// maxRetryAfter caps the wait a 429 or 503 answer's Retry-After asks for.
	maxRetryAfter = time.Minute
	// Exponential backoff between attempts: 100 ms, 200 ms, 400 ms, ... up to 10 s, each
	// shortened by a random part of up to half so that clients do not retry in step.
	backoffBase = 100 * time.Millisecond
	backoffMax  = 10 * time.Second
)

// loop gathers queued calls into batches and hands them to send, until the queue is closed
// and drained and every request has finished. With one request in flight (the default) it
// sends itself, so calls leave in the order they came.
func (c *Client) loop() {
	defer close(c.done)
	s := &c.cfg
	inFlight := make(chan struct{}, s.maxInFlight)
	var senders sync.WaitGroup
	defer senders.Wait()
	dispatch := func(batch []queued) {
		if s.maxInFlight == 1 {
			c.send(batch)
			return
		}
		inFlight <- struct{}{} // waits while MaxConcurrentRequests are in flight
		senders.Add(1)
		go func() {
			defer senders.Done()
			defer func() { <-inFlight }()
			c.send(batch)
		}()
	}
	var items []queued
	size := 0 // the calls' bytes plus one separator each
	timer := time.NewTimer(s.flushAfter)
	defer timer.Stop()
	flush := func() {
		dispatch(items)
		items, size = make([]queued, 0, s.flushAt), 0 // a new array: the sent one may still be in use
		timer.Reset(s.flushAfter)
	}
	for {
		select {
		case q, ok := <-c.queue:
			if !ok {
				if len(items) > 0 {
					dispatch(items)
				}
				return
			}
			if len(items) > 0 && requestOverhead+size+len(q.data)+1 > MaxRequestBytes {
				flush()
			}
			items = append(items, q)
			size += len(q.data) + 1
			if len(items) >= s.flushAt {
				flush()
			}
		case <-timer.C:
			if len(items) > 0 {
				flush()
			} else {
				timer.Reset(s.flushAfter)
			}
		}
	}
}

// answer is what one attempt got: a status and body, or a transport error.
type answer struct {
	status     int
	body       []byte
	retryAfter time.Duration
	err        error
}

// retryable tells whether an attempt that got this answer is worth repeating.
func (a answer) retryable() bool {
	return a.err != nil || // no answer: connection refused or reset, timeout
		a.status == http.StatusRequestTimeout || // 408
		a.status == http.StatusTooManyRequests || // 429
		a.status >= 500 // the server failed, for example 503 kafka_unavailable
}

// send POSTs one batch, retrying with backoff, and tells the callback what became of each
// call. Each attempt carries a fresh sentAt.
func (c *Client) send(items []queued) {
	s := &c.cfg
	for attempt := 1; ; attempt++ {
		body := buildBody(items, s.now())
		a := c.post(body)
		if a.err == nil && a.status/100 == 2 {
			if s.debug {
				s.logger.Printf("sent %d call(s) (%d bytes) to %s: %d", len(items), len(body), s.url, a.status)
			}
			c.settle(items, a.body)
			return
		}
		err := a.err
		if err == nil {
			err = statusError(a.status, a.body)
		}
		if !a.retryable() {
			c.failAll(items, err)
			return
		}
		if attempt >= s.maxAttempts {
			c.failAll(items, fmt.Errorf("analytics: giving up after %d attempts: %w", attempt, err))
			return
		}
		delay := max(s.backoff(attempt), a.retryAfter)
		if s.debug {
			s.logger.Printf("attempt %d of %d call(s) failed (%v); retrying in %v", attempt, len(items), err, delay)
		}
		time.Sleep(delay)
	}
}

func (c *Client) post(body []byte) answer {
	req, err := http.NewRequest(http.MethodPost, c.cfg.url, bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", LibraryName+"/"+Version)
	req.SetBasicAuth(c.writeKey, "")
	res, err := c.cfg.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	// An unreadable body of a 2xx answer still means the calls were accepted.
	data, _ := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	return answer{status: res.StatusCode, body: data, retryAfter: retryAfter(res.Header.Get("Retry-After"), c.cfg.now())}
}

// settle reports each call of an accepted request: the ones the answer lists as rejected
// (`{"success":true,"rejected":[{"index","code","message"}]}`) failed, the others succeeded.
func (c *Client) settle(items []queued, body []byte) {
	var parsed struct {
		Rejected []struct {
			Index   int    `json:"index"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"rejected"`
	}
	// An answer that is not this JSON (another compatible server) rejects nothing.
	_ = json.Unmarshal(body, &parsed)
	rejected := make(map[int]error, len(parsed.Rejected))
	for _, r := range parsed.Rejected {
		if r.Index >= 0 && r.Index < len(items) {
			rejected[r.Index] = &RejectedError{Code: r.Code, Reason: r.Message}
		}
	}
	s := &c.cfg
	for i, q := range items {
		if err, ok := rejected[i]; ok {
			s.logger.Printf("%s %s rejected: %v", q.kind, q.id, err)
			if s.callback != nil {
				s.callback.Failure(q.msg, err)
			}
		} else if s.callback != nil {
			s.callback.Success(q.msg)
		}
	}
}

func (c *Client) failAll(items []queued, err error) {
	s := &c.cfg
	s.logger.Printf("%d call(s) not sent: %v", len(items), err)
	if s.callback == nil {
		return
	}
	for _, q := range items {
		s.callback.Failure(q.msg, err)
	}
}

// buildBody writes `{"batch":[call,...],"sentAt":"..."}` from the calls' JSON.
func buildBody(items []queued, now time.Time) []byte {
	n := requestOverhead
	for _, q := range items {
		n += len(q.data) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"batch":[`...)
	for i, q := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, q.data...)
	}
	b = append(b, `],"sentAt":"`...)
	b = now.UTC().AppendFormat(b, sentAtLayout)
	return append(b, `"}`...)
}

// statusError reads the `{"code","message"}` of an error answer, when it has one.
func statusError(status int, body []byte) error {
	e := &StatusError{StatusCode: status}
	var parsed struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &parsed) == nil {
		e.Code, e.Message = parsed.Code, parsed.Message
	}
	return e
}

// retryAfter reads a Retry-After header (seconds or an HTTP date), capped at maxRetryAfter.
func retryAfter(value string, now time.Time) time.Duration {
	if value == "" {
		return 0
	}
	var d time.Duration
	if seconds, err := strconv.Atoi(value); err == nil {
		d = time.Duration(seconds) * time.Second
	} else if at, err := http.ParseTime(value); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// exponentialBackoff is the wait after the attempt-th attempt failed.
func exponentialBackoff(attempt int) time.Duration {
	d := backoffMax
	if attempt < 8 {
		d = min(backoffBase<<(attempt-1), backoffMax)
	}
	return d - rand.N(d/2+1)
}
