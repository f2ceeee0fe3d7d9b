package hosts

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// answers are the answers every fixture is rendered with for the goldens.
var answers = []struct {
	name string
	a    Answer
}{
	{"empty", Answer{}},
	{"context", Answer{
		Context:  "awr: goal G-1 Ship the cart. You hold W-2 (claim until 10:30).\nNext action: run the cart store tests.",
		Reminder: "awr recorded this compaction;\nthe checkpoint survives it.",
	}},
	{"block", Answer{Block: true, Reason: "Record a checkpoint first: awr session checkpoint --next 'run the cart store tests'"}},
}

// TestRender_Golden renders each fixture event with each answer and compares
// with testdata/render_HOST.golden.
func TestRender_Golden(t *testing.T) {
	t.Parallel()
	for _, h := range Hosts() {
		t.Run(string(h), func(t *testing.T) {
			var b strings.Builder
			for _, file := range payloads(t, h) {
				e, err := Parse(h, fixture(t, h, file))
				if err != nil {
					continue
				}
				for _, an := range answers {
					out := Render(e, an.a)
					fmt.Fprintf(&b, "== %s %s\nexit %d\n", file, an.name, out.ExitCode)
					for _, d := range out.Dropped {
						fmt.Fprintf(&b, "dropped: %s\n", d)
					}
					if len(out.Stdout) == 0 {
						b.WriteString("stdout: (empty)\n\n")
					} else {
						fmt.Fprintf(&b, "stdout: %s\n", out.Stdout)
					}
				}
			}
			golden(t, "render_"+string(h)+".golden", []byte(b.String()))
		})
	}
}

// codexOutput lists the top-level keys each Codex output schema allows
// (their "additionalProperties" is false): anything else fails the hook.
var codexOutput = map[string][]string{
	"SessionStart":     {"continue", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"},
	"UserPromptSubmit": {"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput"},
	"PreCompact":       {"continue", "stopReason", "suppressOutput", "systemMessage"},
	"PostCompact":      {"continue", "stopReason", "suppressOutput", "systemMessage"},
	"Stop":             {"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason"},
	"SessionEnd":       {},
}

// TestRender_Rules pins each host's output rules on every fixture and
// answer.
func TestRender_Rules(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxContext) // 2 bytes each: twice the limit
	all := append([]Answer{}, answers[1].a, answers[2].a,
		Answer{Context: long, Block: true, Reason: "checkpoint", Reminder: strings.Repeat("word ", 100)})
	for _, h := range Hosts() {
		for _, file := range payloads(t, h) {
			e, err := Parse(h, fixture(t, h, file))
			if err != nil {
				continue
			}
			for _, a := range all {
				out := Render(e, a)
				require.Equal(t, 0, out.ExitCode)
				if h == Gemini {
					require.NotEmpty(t, out.Stdout, "Gemini reads stderr when stdout is empty")
				}
				if len(out.Stdout) == 0 {
					continue
				}
				var obj map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(out.Stdout, &obj), "%s %s: stdout is one JSON object", h, file)
				if h == Codex {
					allowed := codexOutput[e.HostEvent]
					for k := range obj {
						require.Contains(t, allowed, k, "codex %s rejects key %s", e.HostEvent, k)
					}
				}
				var w struct {
					Decision      string `json:"decision"`
					Reason        string `json:"reason"`
					SystemMessage string `json:"systemMessage"`
					Specific      *struct {
						HookEventName     string `json:"hookEventName"`
						AdditionalContext string `json:"additionalContext"`
					} `json:"hookSpecificOutput"`
				}
				require.NoError(t, json.Unmarshal(out.Stdout, &w))
				if w.Decision != "" {
					require.Equal(t, Stop, e.Name, "only a stop event blocks")
					require.False(t, e.StopHookActive, "never block while the host continues because of a stop hook")
					require.NotEmpty(t, strings.TrimSpace(w.Reason))
				}
				if w.Specific != nil {
					require.Equal(t, e.HostEvent, w.Specific.HookEventName)
					require.LessOrEqual(t, len(w.Specific.AdditionalContext), MaxContext)
					require.True(t, e.Name == SessionStart || e.Name == BeforeAgent, "context only where the model reads it")
				}
				require.NotContains(t, w.SystemMessage, "\n")
				require.LessOrEqual(t, len(w.SystemMessage), MaxReminder)
			}
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	parse := func(h Host, file string) Event {
		e, err := Parse(h, fixture(t, h, file))
		require.NoError(t, err)
		return e
	}
	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		require.Empty(t, Empty(Claude).Stdout)
		require.Empty(t, Empty(Codex).Stdout)
		require.Equal(t, "{}\n", string(Empty(Gemini).Stdout))
		require.Equal(t, Empty(Gemini), Render(parse(Gemini, "session_end.json"), Answer{}))
	})
	t.Run("ClaudeSessionStart", func(t *testing.T) {
		t.Parallel()
		out := Render(parse(Claude, "session_start_startup.json"), Answer{Context: "packet <b> & more"})
		require.Equal(t, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"packet <b> & more"}}`+"\n", string(out.Stdout))
		require.Empty(t, out.Dropped)
	})
	t.Run("ClaudeStopBlocksOnce", func(t *testing.T) {
		t.Parallel()
		a := Answer{Block: true, Reason: "run awr session checkpoint"}
		out := Render(parse(Claude, "stop.json"), a)
		require.Equal(t, `{"decision":"block","reason":"run awr session checkpoint"}`+"\n", string(out.Stdout))
		out = Render(parse(Claude, "stop_active.json"), a)
		require.Empty(t, out.Stdout)
		require.Equal(t, []string{"block: stop_hook_active is set, the host is already continuing"}, out.Dropped)
	})
	t.Run("ClaudeStopNoContext", func(t *testing.T) {
		t.Parallel()
		out := Render(parse(Claude, "stop.json"), Answer{Context: "more"})
		require.Empty(t, out.Stdout, "context on Stop would continue the turn")
		require.Len(t, out.Dropped, 1)
	})
	t.Run("ClaudePreCompactNothing", func(t *testing.T) {
		t.Parallel()
		out := Render(parse(Claude, "pre_compact_auto.json"), Answer{Context: "x", Reminder: "y", Block: true, Reason: "z"})
		require.Empty(t, out.Stdout)
		require.Len(t, out.Dropped, 3)
	})
	t.Run("CodexPostCompactNoContext", func(t *testing.T) {
		t.Parallel()
		out := Render(parse(Codex, "post_compact.json"), Answer{Context: "packet", Reminder: "awr recorded the compaction"})
		require.Equal(t, `{"systemMessage":"awr recorded the compaction"}`+"\n", string(out.Stdout))
		require.Equal(t, []string{"context: codex PostCompact has no context field"}, out.Dropped)
	})
	t.Run("CodexSessionStartAlwaysJSON", func(t *testing.T) {
		t.Parallel()
		out := Render(parse(Codex, "session_start_compact.json"), Answer{Context: "{not json, but plain text that looks like it"})
		var v map[string]any
		require.NoError(t, json.Unmarshal(out.Stdout, &v))
	})
	t.Run("GeminiAfterAgentDenies", func(t *testing.T) {
		t.Parallel()
		out := Render(parse(Gemini, "after_agent.json"), Answer{Block: true, Reason: "checkpoint first"})
		require.Equal(t, `{"decision":"deny","reason":"checkpoint first"}`+"\n", string(out.Stdout))
		out = Render(parse(Gemini, "after_agent_active.json"), Answer{Block: true, Reason: "checkpoint first"})
		require.Equal(t, "{}\n", string(out.Stdout))
	})
	t.Run("BlockWithoutReason", func(t *testing.T) {
		t.Parallel()
		out := Render(parse(Codex, "stop.json"), Answer{Block: true, Reason: "  "})
		require.Empty(t, out.Stdout)
		require.Equal(t, []string{"block: no reason"}, out.Dropped)
	})
	t.Run("ContextCut", func(t *testing.T) {
		t.Parallel()
		text := strings.Repeat("line of the packet\n", 1000)
		out := Render(parse(Gemini, "session_start_startup.json"), Answer{Context: text})
		var w struct {
			Specific struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		require.NoError(t, json.Unmarshal(out.Stdout, &w))
		got := w.Specific.AdditionalContext
		require.LessOrEqual(t, len(got), MaxContext)
		require.Contains(t, got, "[truncated by awr: the full text is 19000 bytes, over the 10000-byte hook limit]")
		require.Equal(t, []string{"context: cut from 19000 to 10000 bytes"}, out.Dropped)
	})
	t.Run("UnhandledEvent", func(t *testing.T) {
		t.Parallel()
		out := Render(Event{Host: Gemini, HostEvent: "BeforeTool"}, Answer{Context: "x"})
		require.Equal(t, "{}\n", string(out.Stdout))
		require.Len(t, out.Dropped, 1)
	})
	t.Run("ByName", func(t *testing.T) {
		t.Parallel()
		out := Render(Event{Host: Codex, Name: SessionStart}, Answer{Context: "x"})
		require.Contains(t, string(out.Stdout), `"hookEventName":"SessionStart"`)
	})
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a b c", OneLine(" a\n\tb\r\n  c "))
	require.Equal(t, "", OneLine("\n \t"))
	long := OneLine(strings.Repeat("ü", MaxReminder))
	require.LessOrEqual(t, len(long), MaxReminder)
	require.True(t, utf8.ValidString(long))
	require.True(t, strings.HasSuffix(long, "…"))
}

func TestFit(t *testing.T) {
	t.Parallel()
	parts := []Part{
		{Text: "goal and next action"},       // 20
		{Text: "open loops", Optional: true}, // 10
		{Text: ""},
		{Text: "recent events", Optional: true}, // 13
		{Text: "claims"},                        // 6
	}
	t.Run("AllFit", func(t *testing.T) {
		f := Fit(parts, 1000)
		require.Equal(t, "goal and next action\n\nopen loops\n\nrecent events\n\nclaims", f.Text)
		require.Empty(t, f.Dropped)
		require.False(t, f.Truncated)
	})
	t.Run("DropsLastOptionalFirst", func(t *testing.T) {
		f := Fit(parts, 45)
		require.Equal(t, "goal and next action\n\nopen loops\n\nclaims", f.Text)
		require.Equal(t, []int{3}, f.Dropped)
		require.False(t, f.Truncated)
	})
	t.Run("DropsAllOptional", func(t *testing.T) {
		f := Fit(parts, 30)
		require.Equal(t, "goal and next action\n\nclaims", f.Text)
		require.Equal(t, []int{1, 3}, f.Dropped)
	})
	t.Run("TruncatesLast", func(t *testing.T) {
		big := []Part{{Text: strings.Repeat("x", 300)}, {Text: "optional", Optional: true}}
		f := Fit(big, 200)
		require.True(t, f.Truncated)
		require.Equal(t, []int{1}, f.Dropped)
		require.LessOrEqual(t, len(f.Text), 200)
		require.Contains(t, f.Text, "[truncated by awr: the full text is 300 bytes, over the 200-byte hook limit]")
	})
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	require.Equal(t, "short", Truncate("short", 10))
	require.Equal(t, "", Truncate("abc", 0))
	require.Equal(t, "ab", Truncate("abcdef", 2), "no room for the marker: a bare cut")
	s := strings.Repeat("line\n", 100)
	got := Truncate(s, 120)
	require.LessOrEqual(t, len(got), 120)
	head, _, _ := strings.Cut(got, "\n[truncated")
	require.True(t, strings.HasSuffix(head, "line"), "cut at a line break: %q", head)
}

// TestFit_Property: whatever the parts and the limit, the text fits, is
// valid UTF-8 when the parts are, keeps every required part whole when they
// fit together, and drops only optional parts.
func TestFit_Property(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 8).Draw(t, "n")
		parts := make([]Part, n)
		for i := range parts {
			parts[i] = Part{
				Text:     rapid.StringMatching(`[a-zé€ \n]{0,120}`).Draw(t, fmt.Sprint("text", i)),
				Optional: rapid.Bool().Draw(t, fmt.Sprint("optional", i)),
			}
		}
		limit := rapid.IntRange(0, 600).Draw(t, "limit")
		f := Fit(parts, limit)
		if len(f.Text) > limit {
			t.Fatalf("%d bytes over a limit of %d", len(f.Text), limit)
		}
		if !utf8.ValidString(f.Text) {
			t.Fatalf("invalid UTF-8: %q", f.Text)
		}
		if !sort.IntsAreSorted(f.Dropped) {
			t.Fatalf("dropped not sorted: %v", f.Dropped)
		}
		for _, i := range f.Dropped {
			if !parts[i].Optional {
				t.Fatalf("required part %d dropped", i)
			}
		}
		var required []string
		for _, p := range parts {
			if !p.Optional && p.Text != "" {
				required = append(required, p.Text)
			}
		}
		if len(strings.Join(required, partSep)) <= limit {
			if f.Truncated {
				t.Fatalf("truncated although the required parts fit")
			}
			for _, r := range required {
				if !strings.Contains(f.Text, r) {
					t.Fatalf("required part %q missing", r)
				}
			}
		}
	})
}
