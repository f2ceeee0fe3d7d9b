package events

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCanonicalCompact: whenever the fast path answers, it answers what
// CanonicalJSON answers, and for the compact form of any valid document it
// answers unless the document repeats a key.
func FuzzCanonicalCompact(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,null,{"d":"x","c":-1.5e3}]}`, `{}`, `[]`, `"a<b>&c"`, `{"k":"\u003c\u2028\ud800"}`,
		`{"a":1,"a":2}`, `{"x":"é\"\\\n"}`, `0`, `[1,2,[3,{"z":{}}]]`, `{"s":"` + "\x7f" + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		fast, err := canonicalCompact(doc)
		want, werr := CanonicalJSON(doc)
		if err == nil {
			if werr != nil {
				t.Fatalf("fast path accepted %q that CanonicalJSON refuses: %v", doc, werr)
			}
			if !bytes.Equal(fast, want) {
				t.Fatalf("%q: fast %s, want %s", doc, fast, want)
			}
		}
		if werr != nil {
			return
		}
		var compact bytes.Buffer
		if json.Compact(&compact, doc) != nil {
			return
		}
		got, err := canonicalCompact(compact.Bytes())
		if err != nil {
			if !hasDuplicateKey(compact.Bytes()) {
				t.Fatalf("fast path refused compact %q: %v", compact.Bytes(), err)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("compact %q: fast %s, want %s", compact.Bytes(), got, want)
		}
	})
}

// hasDuplicateKey reports whether some object in doc repeats a key. Numbers
// stay text (UseNumber), so one beyond float64 (1e555) does not end the
// walk before a repeated key is seen.
func hasDuplicateKey(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			dupe := false
			for dec.More() {
				k, _ := dec.Token()
				if seen[k.(string)] {
					dupe = true
				}
				seen[k.(string)] = true
				dupe = walk() || dupe
			}
			dec.Token()
			return dupe
		case json.Delim('['):
			dupe := false
			for dec.More() {
				dupe = walk() || dupe
			}
			dec.Token()
			return dupe
		}
		return false
	}
	return walk()
}

// Every payload of the recorded kinds encodes the same through the fast
// path as through CanonicalJSON.
func TestMarshalPayload_FastPathMatches(t *testing.T) {
	payloads := []any{
		CheckpointRecorded{CheckpointID: "c", SessionID: "s", Work: "T-1", Agent: "a<b>", Digest: "did x & y; \"quoted\" é \u2028", NextAction: "n", OpenLoops: []string{"l1", ""}},
		SourceIndexed{Path: "p.md", Adapter: "markdown_checklist", Items: []WorkItem{{Key: "T-1", Title: "t", DependsOn: []Dependency{{Key: "T-0", Required: true}}}}},
		SeatDeclared{Address: "a@b", Role: "a", Rig: "b", Runtime: "generic", Command: "x {seat} && y > z", Policy: "resume_if_possible"},
		RigSnapshotTaken{SnapshotID: "s", Rig: "r", Watermark: 12, Seats: []SnapshotSeat{{Address: "a@r", CheckpointSeq: 3}}},
	}
	for _, p := range payloads {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := canonicalCompact(raw)
		if err != nil {
			t.Fatalf("%T: fast path refused: %v", p, err)
		}
		want, err := CanonicalJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fast, want) {
			t.Fatalf("%T: fast %s, want %s", p, fast, want)
		}
	}
}
