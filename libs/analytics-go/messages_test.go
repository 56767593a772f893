package analytics

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenMessages fill every field of each type, so the golden files show the whole wire form.
var goldenMessages = map[string]Message{
	"identify": &Identify{
		UserId: "u-1", AnonymousId: "anon-1",
		Traits:       map[string]interface{}{"email": "ada@example.com", "plan": "pro"},
		Context:      map[string]interface{}{"ip": "203.0.113.7"},
		Integrations: map[string]interface{}{"All": false, "Webhooks": true},
		Timestamp:    "2026-01-02T03:04:05.000Z",
	},
	"track": &Track{
		Event: "Order Completed", UserId: "u-1", AnonymousId: "anon-1",
		Properties:   map[string]interface{}{"total": 12.5, "currency": "EUR"},
		Context:      map[string]interface{}{"locale": "fr-FR"},
		Integrations: map[string]interface{}{"Webhooks": false},
		Timestamp:    "2026-01-02T03:04:05+07:00",
	},
	"page": &Page{
		UserId: "u-1", AnonymousId: "anon-1", Category: "Docs", Name: "Pricing",
		Traits: map[string]interface{}{
			"url": "https://example.com/pricing?a=1&b=2", "title": "Pricing",
			"referrer": "https://example.com/", "path": "/pricing", "search": "?a=1&b=2",
		},
		Context:      map[string]interface{}{"userAgent": "Mozilla/5.0"},
		Integrations: map[string]interface{}{"Webhooks": true},
		Timestamp:    "2026-01-02T03:04:05Z",
	},
	"screen": &Screen{
		UserId: "u-1", AnonymousId: "anon-1", Category: "Onboarding", Name: "Home",
		Properties:   map[string]interface{}{"variant": "b"},
		Context:      map[string]interface{}{"app": map[string]interface{}{"name": "Demo"}},
		Integrations: map[string]interface{}{"All": true},
		Timestamp:    "2026-01-02T03:04:05Z",
	},
	"group": &Group{
		GroupId: "g-1", UserId: "u-1", AnonymousId: "anon-1",
		Traits:       map[string]interface{}{"name": "Acme", "seats": 3},
		Context:      map[string]interface{}{"groupId": "g-1"},
		Integrations: map[string]interface{}{"Webhooks": true},
		Timestamp:    "2026-01-02T03:04:05Z",
	},
	"alias": &Alias{
		PreviousId: "anon-1", UserId: "u-1",
		Context:      map[string]interface{}{"source": "sign-up"},
		Integrations: map[string]interface{}{"Webhooks": true},
		Timestamp:    "2026-01-02T03:04:05Z",
	},
}

// TestWireGolden sends each type through a client and compares the call's bytes, as the
// server received them, with testdata/golden/<type>.json (compacted): field names, order
// and values.
func TestWireGolden(t *testing.T) {
	for kind, msg := range goldenMessages {
		t.Run(kind, func(t *testing.T) {
			s := newServer(t, nil)
			c, _, _ := testClient(t, s)
			c.FlushAt = 1
			if err := queue(c, msg); err != nil {
				t.Fatal(err)
			}
			got := s.waitRequests(t, 1)[0].batch[0]
			path := filepath.Join("testdata", "golden", kind+".json")
			if *update {
				var pretty bytes.Buffer
				_ = json.Indent(&pretty, got, "", "  ")
				pretty.WriteByte('\n')
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, compact.Bytes()) {
				t.Errorf("wire form of %s:\n got %s\nwant %s", kind, got, compact.Bytes())
			}
		})
	}
}

func TestPageTraitsAreSentAsProperties(t *testing.T) {
	data, _, _, err := encodeCall(&Page{UserId: "u", Traits: map[string]interface{}{"path": "/a"}}, newUUID)
	if err != nil {
		t.Fatal(err)
	}
	var call map[string]interface{}
	_ = json.Unmarshal(data, &call)
	if _, ok := call["traits"]; ok {
		t.Errorf("page has traits: %s", data)
	}
	if props, _ := call["properties"].(map[string]interface{}); props["path"] != "/a" {
		t.Errorf("page properties = %v, want path /a", call["properties"])
	}
}

func TestEncodingLeavesTheMessageAlone(t *testing.T) {
	ctx := map[string]interface{}{"ip": "203.0.113.7"}
	m := &Track{Event: "E", UserId: "u", Context: ctx}
	if _, _, _, err := encodeCall(m, newUUID); err != nil {
		t.Fatal(err)
	}
	if m.MessageId != "" || len(ctx) != 1 {
		t.Errorf("the message was changed: %+v, context %v", m, ctx)
	}
}

func TestRequiredFields(t *testing.T) {
	cases := []struct {
		name  string
		msg   Message
		field string
	}{
		{"identify without ids", &Identify{Traits: map[string]interface{}{"a": 1}}, "Identify.UserId or Identify.AnonymousId"},
		{"track without event", &Track{UserId: "u"}, "Track.Event"},
		{"track without ids", &Track{Event: "E"}, "Track.UserId or Track.AnonymousId"},
		{"page without user id", &Page{AnonymousId: "a", Name: "Home"}, "Page.UserId"},
		{"screen without ids", &Screen{Name: "Home"}, "Screen.UserId or Screen.AnonymousId"},
		{"group without group id", &Group{UserId: "u"}, "Group.GroupId"},
		{"group without ids", &Group{GroupId: "g"}, "Group.UserId or Group.AnonymousId"},
		{"alias without user id", &Alias{PreviousId: "p"}, "Alias.UserId"},
		{"alias without previous id", &Alias{UserId: "u"}, "Alias.PreviousId"},
		{"nil track", (*Track)(nil), "the message is nil"},
	}
	s := newServer(t, nil)
	c, _, _ := testClient(t, s)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := queue(c, tc.msg)
			if !errors.Is(err, ErrMissingField) {
				t.Fatalf("err = %v, want ErrMissingField", err)
			}
			if want := "analytics: missing required field: " + tc.field; err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
		})
	}
	valid := []Message{
		&Identify{AnonymousId: "a"}, &Track{Event: "E", AnonymousId: "a"}, &Page{UserId: "u"},
		&Screen{AnonymousId: "a"}, &Group{GroupId: "g", AnonymousId: "a"},
		&Alias{UserId: "u", PreviousId: "p"},
	}
	for _, m := range valid {
		if err := queue(c, m); err != nil {
			t.Errorf("%T: %v", m, err)
		}
	}
	_ = c.Close()
	if got := len(s.calls(t)); got != len(valid) {
		t.Errorf("sent %d calls, want only the %d valid ones", got, len(valid))
	}
}

// queue calls the client's method for the message's type.
func queue(c *Client, m Message) error {
	switch v := m.(type) {
	case *Identify:
		return c.Identify(v)
	case *Track:
		return c.Track(v)
	case *Page:
		return c.Page(v)
	case *Screen:
		return c.Screen(v)
	case *Group:
		return c.Group(v)
	case *Alias:
		return c.Alias(v)
	}
	panic("unknown message type")
}
