package analytics

import (
	"bytes"
	"encoding/json"
)

// Message is one of the call types: *Identify, *Track, *Page, *Screen, *Group or *Alias.
// Callback receives the pointer that was passed to the method that queued it.
type Message interface {
	// Validate reports an empty required field, wrapping ErrMissingField.
	Validate() error
	// toWire fills the fields of the call's JSON object.
	toWire(w *wireCall)
}

// Identify says who a user is and what their traits are. UserId or AnonymousId is required.
type Identify struct {
	// MessageId identifies the call for de-duplication; a random UUID is used when empty.
	MessageId   string
	UserId      string
	AnonymousId string
	Traits      map[string]interface{}
	// Context is sent as the call's context; the library adds `library` to a copy of it.
	Context      map[string]interface{}
	Integrations map[string]interface{}
	// Timestamp is an ISO 8601 date-time with a time zone. When empty the server's time of
	// receipt is used; the library never fills it in.
	Timestamp string
}

// Track records that a user did something. Event and UserId or AnonymousId are required.
type Track struct {
	MessageId    string
	Event        string
	UserId       string
	AnonymousId  string
	Properties   map[string]interface{}
	Context      map[string]interface{}
	Integrations map[string]interface{}
	Timestamp    string
}

// Page records that a user viewed a web page. UserId is required. Traits (url, title,
// referrer, path and any others) are sent as the call's `properties`.
type Page struct {
	MessageId    string
	UserId       string
	AnonymousId  string
	Category     string
	Name         string
	Traits       map[string]interface{}
	Context      map[string]interface{}
	Integrations map[string]interface{}
	Timestamp    string
}

// Screen records that a user viewed a screen of a mobile app. UserId or AnonymousId is
// required.
type Screen struct {
	MessageId    string
	UserId       string
	AnonymousId  string
	Category     string
	Name         string
	Properties   map[string]interface{}
	Context      map[string]interface{}
	Integrations map[string]interface{}
	Timestamp    string
}

// Group associates a user with a group (a company, a team). GroupId and UserId or
// AnonymousId are required.
type Group struct {
	MessageId    string
	GroupId      string
	UserId       string
	AnonymousId  string
	Traits       map[string]interface{}
	Context      map[string]interface{}
	Integrations map[string]interface{}
	Timestamp    string
}

// Alias says that PreviousId (for example an anonymous id) and UserId (the new identity) are
// the same user. Both are required.
type Alias struct {
	MessageId    string
	PreviousId   string
	UserId       string
	Context      map[string]interface{}
	Integrations map[string]interface{}
	Timestamp    string
}

// Validate implements Message.
func (m *Identify) Validate() error { return needUser("Identify", m.UserId, m.AnonymousId) }

// Validate implements Message.
func (m *Track) Validate() error {
	if m.Event == "" {
		return missing("Track.Event")
	}
	return needUser("Track", m.UserId, m.AnonymousId)
}

// Validate implements Message.
func (m *Page) Validate() error {
	if m.UserId == "" {
		return missing("Page.UserId")
	}
	return nil
}

// Validate implements Message.
func (m *Screen) Validate() error { return needUser("Screen", m.UserId, m.AnonymousId) }

// Validate implements Message.
func (m *Group) Validate() error {
	if m.GroupId == "" {
		return missing("Group.GroupId")
	}
	return needUser("Group", m.UserId, m.AnonymousId)
}

// Validate implements Message.
func (m *Alias) Validate() error {
	if m.UserId == "" {
		return missing("Alias.UserId")
	}
	if m.PreviousId == "" {
		return missing("Alias.PreviousId")
	}
	return nil
}

func needUser(kind, userID, anonymousID string) error {
	if userID == "" && anonymousID == "" {
		return missing(kind + ".UserId or " + kind + ".AnonymousId")
	}
	return nil
}

// wireCall is a call as JSON, its fields in the order they are written.
type wireCall struct {
	Type         string                 `json:"type"`
	MessageId    string                 `json:"messageId"`
	UserId       string                 `json:"userId,omitempty"`
	AnonymousId  string                 `json:"anonymousId,omitempty"`
	PreviousId   string                 `json:"previousId,omitempty"`
	GroupId      string                 `json:"groupId,omitempty"`
	Event        string                 `json:"event,omitempty"`
	Name         string                 `json:"name,omitempty"`
	Category     string                 `json:"category,omitempty"`
	Properties   map[string]interface{} `json:"properties,omitempty"`
	Traits       map[string]interface{} `json:"traits,omitempty"`
	Context      map[string]interface{} `json:"context"`
	Integrations map[string]interface{} `json:"integrations,omitempty"`
	Timestamp    string                 `json:"timestamp,omitempty"`
}

func (m *Identify) toWire(w *wireCall) {
	*w = wireCall{Type: "identify", MessageId: m.MessageId, UserId: m.UserId,
		AnonymousId: m.AnonymousId, Traits: m.Traits, Context: m.Context,
		Integrations: m.Integrations, Timestamp: m.Timestamp}
}

func (m *Track) toWire(w *wireCall) {
	*w = wireCall{Type: "track", MessageId: m.MessageId, UserId: m.UserId,
		AnonymousId: m.AnonymousId, Event: m.Event, Properties: m.Properties,
		Context: m.Context, Integrations: m.Integrations, Timestamp: m.Timestamp}
}

func (m *Page) toWire(w *wireCall) {
	*w = wireCall{Type: "page", MessageId: m.MessageId, UserId: m.UserId,
		AnonymousId: m.AnonymousId, Name: m.Name, Category: m.Category,
		Properties: m.Traits, Context: m.Context, Integrations: m.Integrations,
		Timestamp: m.Timestamp}
}

func (m *Screen) toWire(w *wireCall) {
	*w = wireCall{Type: "screen", MessageId: m.MessageId, UserId: m.UserId,
		AnonymousId: m.AnonymousId, Name: m.Name, Category: m.Category,
		Properties: m.Properties, Context: m.Context, Integrations: m.Integrations,
		Timestamp: m.Timestamp}
}

func (m *Group) toWire(w *wireCall) {
	*w = wireCall{Type: "group", MessageId: m.MessageId, UserId: m.UserId,
		AnonymousId: m.AnonymousId, GroupId: m.GroupId, Traits: m.Traits,
		Context: m.Context, Integrations: m.Integrations, Timestamp: m.Timestamp}
}

func (m *Alias) toWire(w *wireCall) {
	*w = wireCall{Type: "alias", MessageId: m.MessageId, UserId: m.UserId,
		PreviousId: m.PreviousId, Context: m.Context, Integrations: m.Integrations,
		Timestamp: m.Timestamp}
}

// libraryInfo is the value of context.library in every call.
var libraryInfo = map[string]interface{}{"name": LibraryName, "version": Version}

// encodeCall returns a message's JSON, type and messageId: messageId is newID() when the
// message has none, and context is a copy of the message's with `library` set. The message
// is not changed.
func encodeCall(m Message, newID func() string) (data []byte, kind, id string, err error) {
	var w wireCall
	m.toWire(&w)
	if w.MessageId == "" {
		w.MessageId = newID()
	}
	ctx := make(map[string]interface{}, len(w.Context)+1)
	for k, v := range w.Context {
		ctx[k] = v
	}
	ctx["library"] = libraryInfo
	w.Context = ctx
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// URLs in properties stay readable: no \u0026 for '&'.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&w); err != nil {
		return nil, "", "", err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), w.Type, w.MessageId, nil
}
