package events_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// jsonText draws strings that need every kind of escape and encoding
// JSON has: quotes, backslashes, control characters, HTML characters
// (escaped by json.Marshal), U+2028, characters outside the BMP
// (surrogate pairs when escaped), and plain text.
func jsonText() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[a-zA-Z0-9 _.-]{0,12}`),
		rapid.String(),
		rapid.SampledFrom([]string{"", `"`, `\`, "a\nb\tc\r", "<tag> & co", "\u2028\u2029", "\x00\x01\x1f\x7f", "😀 émoji — dash", "\ufffd", "/"}),
	)
}

func drawStrings(t *rapid.T, label string) []string {
	switch rapid.IntRange(0, 2).Draw(t, label+"_shape") {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	return rapid.SliceOfN(jsonText(), 1, 4).Draw(t, label)
}

func drawWorkItem(t *rapid.T) events.WorkItem {
	w := events.WorkItem{
		Key: jsonText().Draw(t, "key"), Title: jsonText().Draw(t, "title"), Status: jsonText().Draw(t, "status"),
		RawStatus: jsonText().Draw(t, "raw_status"), Kind: jsonText().Draw(t, "kind"), Priority: jsonText().Draw(t, "priority"),
		Summary: jsonText().Draw(t, "summary"), NextAction: jsonText().Draw(t, "next_action"), Blocker: jsonText().Draw(t, "blocker"),
		Acceptance: drawStrings(t, "acceptance"),
		Goal:       jsonText().Draw(t, "goal"), Milestone: jsonText().Draw(t, "milestone"), Owner: jsonText().Draw(t, "owner"),
		Tags: drawStrings(t, "tags"), Paths: drawStrings(t, "paths"),
		Source: events.SourceRef{
			Path:        jsonText().Draw(t, "path"),
			LineStart:   rapid.IntRange(-1, 1<<40).Draw(t, "line_start"),
			LineEnd:     rapid.IntRange(-1, 1<<40).Draw(t, "line_end"),
			ContentHash: jsonText().Draw(t, "content_hash"),
		},
	}
	switch rapid.IntRange(0, 2).Draw(t, "deps_shape") {
	case 1:
		w.DependsOn = []events.Dependency{}
	case 2:
		for i := rapid.IntRange(1, 4).Draw(t, "deps"); i > 0; i-- {
			w.DependsOn = append(w.DependsOn, events.Dependency{Key: jsonText().Draw(t, "dep_key"), Required: rapid.Bool().Draw(t, "required")})
		}
	}
	return w
}

// decodeBoth decodes data with DecodeWorkItem and with json.Unmarshal
// and requires the same outcome: both fail, or both give the same item.
func decodeBoth(t require.TestingT, data []byte) {
	var fast, slow events.WorkItem
	errFast := events.DecodeWorkItem(data, &fast)
	errSlow := json.Unmarshal(data, &slow)
	if errSlow != nil {
		require.Error(t, errFast, "json.Unmarshal refuses %q", data)
		require.Equal(t, errSlow.Error(), errFast.Error())
		return
	}
	require.NoError(t, errFast, "%q", data)
	require.Equal(t, slow, fast, "%q", data)
}

// TestDecodeWorkItem_AsEncodingJSON: any work item, encoded as awr
// encodes it or without HTML escaping or indented, decodes to itself,
// exactly as json.Unmarshal decodes it (nil and empty lists kept apart).
func TestDecodeWorkItem_AsEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := drawWorkItem(t)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		switch rapid.IntRange(0, 2).Draw(t, "encoding") {
		case 1:
			enc.SetEscapeHTML(false)
		case 2:
			enc.SetIndent(" ", "\t")
		}
		require.NoError(t, enc.Encode(w))
		data := buf.Bytes()
		decodeBoth(t, data)
		var got events.WorkItem
		require.NoError(t, events.DecodeWorkItem(data, &got))
		var want events.WorkItem
		require.NoError(t, json.Unmarshal(data, &want)) // the round trip json.Marshal itself gives (invalid UTF-8 becomes U+FFFD)
		require.Equal(t, want, got)
	})
}

// TestDecodeWorkItem_Mutated: the encoding of a work item with bytes
// inserted, deleted or replaced, names respelled, members repeated,
// values made null or given another type: whatever json.Unmarshal makes
// of it, DecodeWorkItem makes of it too, error for error.
func TestDecodeWorkItem_Mutated(t *testing.T) {
	alphabet := []byte(`{}[]:,"\ u0123456789abcdefABCDEF-.eE+ntrulsfa` + "\n\t\x00\xff\xc3")
	rapid.Check(t, func(t *rapid.T) {
		data, err := json.Marshal(drawWorkItem(t))
		require.NoError(t, err)
		for n := rapid.IntRange(1, 4).Draw(t, "mutations"); n > 0; n-- {
			at := rapid.IntRange(0, len(data)).Draw(t, "at")
			switch rapid.IntRange(0, 4).Draw(t, "mutation") {
			case 0: // insert a byte
				c := rapid.SampledFrom(alphabet).Draw(t, "byte")
				data = append(data[:at], append([]byte{c}, data[at:]...)...)
			case 1: // delete a byte
				if at < len(data) {
					data = append(data[:at], data[at+1:]...)
				}
			case 2: // replace a byte
				if at < len(data) {
					data[at] = rapid.SampledFrom(alphabet).Draw(t, "byte")
				}
			case 3: // another member in front: a repeat, another spelling, null, another type
				member := rapid.SampledFrom([]string{
					`"key":"again",`, `"Key":"upper",`, `"title":null,`, `"tags":null,`, `"source":null,`,
					`"depends_on":[{"key":"a","required":1}],`, `"source":{"line_start":1.0},`, `"source":{"line_start":01},`,
					`"source":{"line_end":-0},`, `"source":{"LINE_END":7},`, `"extra":{"a":[1,2]},`, `"title":"\ud83d\ude00\ud800",`,
					`"title":"\u00e9\/\b\f",`, `"status":true,`, `"acceptance":[],`, `"acceptance":["a",null],`,
				}).Draw(t, "member")
				data = append([]byte("{"+member), data[1:]...)
			case 4: // white space somewhere
				data = append(data[:at], append([]byte(" \n\t\r"), data[at:]...)...)
			}
		}
		decodeBoth(t, data)
	})
}

func FuzzDecodeWorkItem(f *testing.F) {
	for _, seed := range []string{
		`{"key":"T-1","title":"One","status":"todo","source":{"path":"TASKS.md","line_start":3,"line_end":9}}`,
		`{"key":"T-2","title":"a\"b\\c\u003c\ud83d\ude00","status":"open","depends_on":[{"key":"T-1","required":true}],"tags":[],"acceptance":["x"]}`,
		`{"key":"T-3","Title":"case","status":null}`,
		`{"key":"T-4","source":{"line_start":1e2}}`,
		`null`, `{}`, ``, `{"key":"\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeBoth(t, data)
	})
}
