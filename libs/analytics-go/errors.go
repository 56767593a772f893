package analytics

import (
	"errors"
	"fmt"
)

// Errors returned when a call is made, before anything is queued. Test for them with
// errors.Is: the returned errors wrap them with details.
var (
	// ErrMissingField: a required field of the message is empty.
	ErrMissingField = errors.New("analytics: missing required field")
	// ErrTooLarge: the call's JSON is over MaxCallBytes.
	ErrTooLarge = errors.New("analytics: call too large")
	// ErrQueueFull: MaxQueuedCalls calls are waiting to be sent; the call was not queued.
	ErrQueueFull = errors.New("analytics: queue full")
	// ErrClosed: Close was called; the call was not queued.
	ErrClosed = errors.New("analytics: client closed")
	// ErrInvalidEndpoint: Endpoint is empty (it has no default) or not an absolute http(s) URL.
	ErrInvalidEndpoint = errors.New("analytics: invalid endpoint")
)

// RejectedError is passed to Callback.Failure for a call that the server refused on its own
// while accepting the rest of its batch (a 200 answer listing it as rejected).
type RejectedError struct {
	// Code is the server's reason code, for example "invalid_call" or "call_too_large".
	Code string
	// Reason is the server's explanation.
	Reason string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("analytics: call rejected by the server: %s: %s", e.Code, e.Reason)
}

// StatusError is passed to Callback.Failure for the calls of a request that the server
// answered with an error status: at once for a permanent one (400, 401, ...), after the last
// attempt for a retryable one (408, 429, 5xx).
type StatusError struct {
	StatusCode int
	// Code and Message come from the answer's JSON body `{"code","message"}`, when it has one.
	Code    string
	Message string
}

func (e *StatusError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("analytics: server answered %d", e.StatusCode)
	}
	return fmt.Sprintf("analytics: server answered %d %s: %s", e.StatusCode, e.Code, e.Message)
}

// missing builds the error for an empty required field, for example "Track.Event".
func missing(field string) error {
	return fmt.Errorf("%w: %s", ErrMissingField, field)
}
