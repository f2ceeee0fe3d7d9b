package events_test

import (
	"bytes"
	"testing"

	"github.com/awr-dev/awr/events"
)

// FuzzDecodePayload feeds arbitrary bytes to every kind's payload decoder
// and to the canonicalizer: they must return an error or a value, never
// panic, and canonical JSON must be a fixed point.
func FuzzDecodePayload(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","work":"W-1","agent":"a"}`), uint8(2))
	f.Add([]byte(`{"items":[{"key":"K","depends_on":[{"key":"J","required":true}],"source":{"path":"p","line_start":1}}]}`), uint8(1))
	f.Add([]byte(`{"path":"p","delta":true,"items":[{"key":"K","source":{"path":"p"}}],"item_repeats":[1],"dropped":{"items":[{"key":"J","repeat":2}],"goals":["G"],"rules":["R"]},"part":2,"parts":3}`), uint8(27)) // source_indexed
	f.Add([]byte(`{"open_loops":["a",null],"digest":"\u00e9\ud83d\ude00"}`), uint8(9))
	f.Add([]byte(`{"expires_at":1e400}`), uint8(3))
	f.Add([]byte(`[]`), uint8(0))
	kinds := events.Kinds()
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		kind := kinds[int(k)%len(kinds)]
		_, _ = events.DecodePayload(kind, data)
		canon, err := events.CanonicalJSON(data)
		if err != nil {
			return
		}
		again, err := events.CanonicalJSON(canon)
		if err != nil {
			t.Fatalf("canonical form does not parse: %v", err)
		}
		if !bytes.Equal(canon, again) {
			t.Fatalf("canonical form is not a fixed point:\n%s\n%s", canon, again)
		}
	})
}
