package hosts

import (
	"encoding/json"
	"testing"
)

// FuzzParse: no payload makes Parse panic; an accepted payload gives an
// event awr handles, with a key, and every answer to it renders as the
// host's format requires (one JSON object or nothing; always JSON for
// Gemini) with exit code 0.
func FuzzParse(f *testing.F) {
	for _, h := range Hosts() {
		for _, file := range payloads(f, h) {
			f.Add(string(h), fixture(f, h, file))
		}
	}
	f.Add("claude", []byte(`{"session_id":"s","cwd":"/p","hook_event_name":"Stop","stop_hook_active":true}`))
	f.Add("gemini", []byte(`{"session_id":"s","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}{}`))
	f.Add("codex", []byte("\xff{\"session_id\":1}"))
	f.Add("nobody", []byte(`{}`))
	f.Fuzz(func(t *testing.T, host string, payload []byte) {
		h := Host(host)
		e, err := Parse(h, payload)
		if err != nil {
			// What a diagnostic names, nothing more.
			if e.Name != "" || e.Fields != nil || e.Cwd != "" || e.TranscriptPath != "" || e.Source != "" || e.Prompt != "" || e.ForkContext != "" {
				t.Fatalf("an error with more than the event's names: %+v", e)
			}
			return
		}
		if _, ok := lookup(e.Host, e.HostEvent); !ok || e.ConversationID == "" || e.Cwd == "" {
			t.Fatalf("accepted an event awr does not handle: %+v", e)
		}
		if e.Key() == "" {
			t.Fatal("no key")
		}
		for _, a := range []Answer{{}, {Context: string(payload), Reminder: string(payload)}, {Block: true, Reason: string(payload)}} {
			out := Render(e, a)
			if out.ExitCode != 0 {
				t.Fatalf("exit %d", out.ExitCode)
			}
			if len(out.Stdout) == 0 {
				if h == Gemini {
					t.Fatal("empty stdout for Gemini")
				}
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(out.Stdout, &obj); err != nil {
				t.Fatalf("stdout is not one JSON object: %q", out.Stdout)
			}
		}
	})
}

// FuzzInstall: whatever a settings file holds, Install either refuses it or
// returns valid JSON that a second install leaves byte for byte and that
// Uninstall accepts.
func FuzzInstall(f *testing.F) {
	for _, h := range jsonHosts() {
		f.Add(string(h), raw(f, h, otherTool(h)))
		f.Add(string(h), raw(f, h, broken(h)))
	}
	f.Add("claude", []byte(`{"hooks":{"Stop":[{"hooks":[{"command":"awr client hook"}]},1,"x"]}}`))
	f.Add("codex", []byte(`{"a":1,"a":2,"hooks":{}, "hooks":{"Stop":[]}}`))
	f.Fuzz(func(t *testing.T, host string, existing []byte) {
		h := Host(host)
		if !h.valid() || h == OpenCode {
			h = Claude
		}
		out, err := Install(h, existing, command(h))
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON out: %q", out)
		}
		again, err := Install(h, out, command(h))
		if err != nil || string(again) != string(out) {
			t.Fatalf("second install differs (%v):\n%s\n---\n%s", err, out, again)
		}
		back, err := Uninstall(h, out)
		if err != nil || !json.Valid(back) {
			t.Fatalf("uninstall: %v %q", err, back)
		}
	})
}
