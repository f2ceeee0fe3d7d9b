package replay_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/replay"
)

const seedLine = `{"seq":1,"id":"01KQ0000000000000000000000","kind":"project_initialized","stream":"project","stream_version":1,"occurred_at":1793523600000,"actor":"awr","request_id":null,"payload":{"name":"x","project_id":"p"},"prev_hash":"0000000000000000000000000000000000000000000000000000000000000000","hash":"00"}`

// FuzzDecodeEnvelopeLine: any line either decodes to an event whose JSON
// form decodes back to the same event, or is refused with an error.
func FuzzDecodeEnvelopeLine(f *testing.F) {
	f.Add([]byte(seedLine))
	f.Add([]byte(`{"seq":-1}`))
	f.Add([]byte(`{"seq":1,"payload":[1]}`))
	f.Add([]byte(`{}` + "\n" + `{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := replay.DecodeEnvelopeLine(line)
		if err != nil {
			return
		}
		b, err := events.EncodeJSON(e.ToEnvelope())
		if err != nil {
			t.Fatal(err)
		}
		back, err := replay.DecodeEnvelopeLine(b)
		if err != nil {
			t.Fatalf("re-encoded envelope refused: %v\n%s", err, b)
		}
		b2, err := events.EncodeJSON(back.ToEnvelope())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip changed the event:\n%s\n%s", b, b2)
		}
	})
}

// FuzzImport: importing arbitrary bytes into an empty project either
// succeeds with a log that verifies, or fails and leaves the project empty.
func FuzzImport(f *testing.F) {
	f.Add([]byte(seedLine + "\n"))
	f.Add([]byte("\n\n{\n"))
	if b, err := os.ReadFile(testkit.Path("fixtures", "logs", "handoff.jsonl")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		st := openProject(t, t.TempDir())
		defer st.Close()
		_, err := replay.Import(ctx, st, bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			if rerr := st.Read(ctx, func(r *events.Reader) error {
				if r.Head != 0 {
					t.Fatalf("failed import left %d events", r.Head)
				}
				return nil
			}); rerr != nil {
				t.Fatal(rerr)
			}
			return
		}
		res, err := replay.Verify(ctx, st, nil)
		if err != nil || !res.OK {
			t.Fatalf("imported log does not verify: %v", err)
		}
	})
}
