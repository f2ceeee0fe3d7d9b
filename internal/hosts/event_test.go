package hosts

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

const (
	claudeS1 = "11111111-1111-4111-8111-111111111111"
	claudeS2 = "22222222-2222-4222-8222-222222222222"
	claudeP1 = "33333333-3333-4333-8333-333333333333"
	codexX1  = "019d0000-0000-7000-8000-0000000000aa"
	codexX2  = "019d0000-0000-7000-8000-0000000000bb"
	codexX3  = "019d0000-0000-7000-8000-0000000000cc"
	codexT1  = "019d0000-0000-7000-8000-000000000001"
	codexT2  = "019d0000-0000-7000-8000-000000000002"
	geminiG1 = "44444444-4444-4444-8444-444444444444"
	geminiG2 = "55555555-5555-4555-8555-555555555555"
)

func claudeTranscript(s string) string {
	return "/home/user/.claude/projects/-work-project/" + s + ".jsonl"
}

func codexTranscript(s string) string {
	return "/home/user/.codex/sessions/2026/09/01/rollout-2026-09-01T09-00-00-" + s + ".jsonl"
}

func geminiTranscript(s string) string {
	return "/home/user/.gemini/tmp/0000000000000000000000000000000000000000000000000000000000000000/chats/session-2026-09-01T09-00-" + s[:8] + ".json"
}

// TestParse_Fixtures: every recorded payload of every host parses to the
// expected normalized event; the unhandled ones are refused as such.
func TestParse_Fixtures(t *testing.T) {
	t.Parallel()
	// withTranscript fills in what every payload of host h carries: the
	// working directory, the conversation (id unless the case names one)
	// and the transcript at transcript(conversation).
	withTranscript := func(h Host, id string, transcript func(string) string) func(string, Event) (Host, string, Event) {
		return func(file string, e Event) (Host, string, Event) {
			e.Host, e.Cwd = h, testCwd
			if e.ConversationID == "" {
				e.ConversationID = id
			}
			e.TranscriptPath = transcript(e.ConversationID)
			return h, file, e
		}
	}
	c := withTranscript(Claude, claudeS1, claudeTranscript)
	x := func(file string, e Event) (Host, string, Event) {
		e.Host, e.Cwd, e.Model = Codex, testCwd, "gpt-5.5-codex"
		if e.ConversationID == "" {
			e.ConversationID = codexX1
		}
		if e.TranscriptPath == "" {
			e.TranscriptPath = codexTranscript(e.ConversationID)
		} else if e.TranscriptPath == "null" {
			e.TranscriptPath = ""
		}
		return Codex, file, e
	}
	g := withTranscript(Gemini, geminiG1, geminiTranscript)
	o := func(file string, e Event) (Host, string, Event) {
		e.Host, e.Cwd = OpenCode, testCwd
		if e.ConversationID == "" {
			e.ConversationID = "ses_0f1a2b3c4ffeAbCdEfGhIjKlMn"
		}
		return OpenCode, file, e
	}
	type row struct {
		host Host
		file string
		want Event
	}
	rows := func(h Host, f string, e Event) row { return row{h, f, e} }
	cases := []row{
		rows(c("session_start_startup.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "startup", Model: "claude-sonnet-5"})),
		rows(c("session_start_resume.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "resume", Model: "claude-sonnet-5"})),
		rows(c("session_start_clear.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "clear", ConversationID: claudeS2})),
		rows(c("session_start_compact.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "compact", TurnID: claudeP1, Model: "claude-sonnet-5"})),
		rows(c("session_start_fork.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "fork", ConversationID: claudeS2, Model: "claude-sonnet-5"})),
		rows(c("user_prompt_submit.json", Event{Name: BeforeAgent, HostEvent: "UserPromptSubmit", TurnID: claudeP1})),
		rows(c("pre_compact_auto.json", Event{Name: PreCompact, HostEvent: "PreCompact", Trigger: "auto", TurnID: claudeP1})),
		rows(c("pre_compact_manual.json", Event{Name: PreCompact, HostEvent: "PreCompact", Trigger: "manual", TurnID: claudeP1})),
		rows(c("post_compact.json", Event{Name: PostCompact, HostEvent: "PostCompact", Trigger: "auto", TurnID: claudeP1})),
		rows(c("stop.json", Event{Name: Stop, HostEvent: "Stop", TurnID: claudeP1})),
		rows(c("stop_active.json", Event{Name: Stop, HostEvent: "Stop", TurnID: claudeP1, StopHookActive: true})),
		rows(c("session_end.json", Event{Name: SessionEnd, HostEvent: "SessionEnd", Reason: "other"})),
		rows(c("session_end_clear.json", Event{Name: SessionEnd, HostEvent: "SessionEnd", Reason: "clear"})),

		rows(x("session_start_startup.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "startup"})),
		rows(x("session_start_resume.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "resume"})),
		rows(x("session_start_clear.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "clear", ConversationID: codexX2})),
		rows(x("session_start_compact.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "compact"})),
		rows(x("session_start_null_transcript.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "startup", ConversationID: codexX3, TranscriptPath: "null"})),
		rows(x("user_prompt_submit.json", Event{Name: BeforeAgent, HostEvent: "UserPromptSubmit", TurnID: codexT1})),
		rows(x("pre_compact_auto.json", Event{Name: PreCompact, HostEvent: "PreCompact", Trigger: "auto", TurnID: codexT1})),
		rows(x("pre_compact_manual.json", Event{Name: PreCompact, HostEvent: "PreCompact", Trigger: "manual", TurnID: codexT2})),
		rows(x("post_compact.json", Event{Name: PostCompact, HostEvent: "PostCompact", Trigger: "auto", TurnID: codexT1})),
		rows(x("stop.json", Event{Name: Stop, HostEvent: "Stop", TurnID: codexT1})),
		rows(x("stop_active.json", Event{Name: Stop, HostEvent: "Stop", TurnID: codexT1, StopHookActive: true})),
		rows(x("session_end.json", Event{Name: SessionEnd, HostEvent: "SessionEnd", Reason: "other"})),

		rows(g("session_start_startup.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "startup", Timestamp: "2026-09-01T09:00:00.000Z"})),
		rows(g("session_start_resume.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "resume", Timestamp: "2026-09-01T10:00:00.000Z"})),
		rows(g("session_start_clear.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "clear", ConversationID: geminiG2, Timestamp: "2026-09-01T11:00:00.000Z"})),
		rows(g("before_agent.json", Event{Name: BeforeAgent, HostEvent: "BeforeAgent", Timestamp: "2026-09-01T09:01:00.000Z", Prompt: "Run the cart store tests"})),
		rows(g("pre_compress_auto.json", Event{Name: PreCompact, HostEvent: "PreCompress", Trigger: "auto", Timestamp: "2026-09-01T09:30:00.000Z"})),
		rows(g("pre_compress_manual.json", Event{Name: PreCompact, HostEvent: "PreCompress", Trigger: "manual", Timestamp: "2026-09-01T09:31:00.000Z"})),
		rows(g("after_agent.json", Event{Name: Stop, HostEvent: "AfterAgent", Timestamp: "2026-09-01T09:05:00.000Z"})),
		rows(g("after_agent_active.json", Event{Name: Stop, HostEvent: "AfterAgent", StopHookActive: true, Timestamp: "2026-09-01T09:06:00.000Z"})),
		rows(g("session_end.json", Event{Name: SessionEnd, HostEvent: "SessionEnd", Reason: "exit", Timestamp: "2026-09-01T12:00:00.000Z"})),
		rows(g("session_end_clear.json", Event{Name: SessionEnd, HostEvent: "SessionEnd", Reason: "clear", Timestamp: "2026-09-01T10:59:59.000Z"})),

		// What awr's OpenCode plugin sends (plugin.go).
		rows(o("session_start_startup.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "startup", TurnID: "msg_24b204ad3001PAyaDUl52er2qo"})),
		rows(o("session_start_resume.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "resume", TurnID: "msg_24b2100aa001QbRcSdTeUfVgWh"})),
		rows(o("session_start_fork.json", Event{Name: SessionStart, HostEvent: "SessionStart", Source: "fork", TurnID: "msg_24b3a0bb1001FkQrStUvWxYz01",
			ConversationID: "ses_1b2c3d4e5ffeFoRkEdSeSsIoNx", ForkContext: "# awr: continuing session 01KB0000000000000000000000 on STORE-1 (SessionStart resume, packet 1f3a9c0b2d4e)\n\nThis conversation (opencode:ses_0f1a2b3c4ffeAbCdEfGhIjKlMn) is bound to awr session 01KB0000000000000000000000.\n"})),
		rows(o("user_prompt_submit.json", Event{Name: BeforeAgent, HostEvent: "UserPromptSubmit", TurnID: "msg_24b2155cd001XiYjZkAlBmCnDo"})),
		rows(o("pre_compact.json", Event{Name: PreCompact, HostEvent: "PreCompact"})),
		rows(o("pre_compact_manual.json", Event{Name: PreCompact, HostEvent: "PreCompact", Trigger: "manual"})),
		rows(o("session_end.json", Event{Name: SessionEnd, HostEvent: "SessionEnd", Reason: "exit"})),
	}
	seen := map[Host]map[string]bool{}
	for _, tc := range cases {
		t.Run(string(tc.host)+"/"+tc.file, func(t *testing.T) {
			got, err := Parse(tc.host, fixture(t, tc.host, tc.file))
			require.NoError(t, err)
			require.Contains(t, got.Fields, "session_id")
			require.Contains(t, got.Fields, "hook_event_name")
			got.Fields = nil
			require.Equal(t, tc.want, got)
		})
		if seen[tc.host] == nil {
			seen[tc.host] = map[string]bool{}
		}
		seen[tc.host][tc.file] = true
	}
	unhandled := map[Host]string{Claude: "pre_tool_use.json", Codex: "pre_tool_use.json", Gemini: "before_tool.json", OpenCode: "stop.json"}
	for h, file := range unhandled {
		_, err := Parse(h, fixture(t, h, file))
		require.ErrorIs(t, err, ErrUnknownEvent, "%s %s", h, file)
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
		seen[h][file] = true
	}
	for _, h := range Hosts() {
		for _, file := range payloads(t, h) {
			require.True(t, seen[h][file], "fixture %s/%s has no expected event in this test", h, file)
		}
	}
}

// TestParse_Errors: malformed payloads are refused with a typed cause, never
// a panic, and every refusal is InvalidInput.
func TestParse_Errors(t *testing.T) {
	t.Parallel()
	valid := `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`
	with := func(old, new string) string { return strings.Replace(valid, old, new, 1) }
	cases := []struct {
		name    string
		host    Host
		payload string
		cause   error
		field   string
	}{
		{"empty", Claude, "", ErrNotJSON, ""},
		{"blank", Claude, "  \n", ErrNotJSON, ""},
		{"syntax", Claude, `{"session_id":`, ErrNotJSON, ""},
		{"array", Claude, `[1,2]`, ErrNotJSON, ""},
		{"null", Claude, `null`, ErrNotJSON, ""},
		{"string", Gemini, `"SessionStart"`, ErrNotJSON, ""},
		{"two objects", Codex, valid + valid, ErrNotJSON, ""},
		{"no event", Claude, with(`"hook_event_name":"SessionStart",`, ""), ErrMissingField, "hook_event_name"},
		{"event not a string", Claude, with(`"SessionStart"`, `7`), ErrFieldType, "hook_event_name"},
		{"unknown event", Claude, with(`"SessionStart"`, `"Elicitation"`), ErrUnknownEvent, ""},
		{"other host's event", Claude, with(`"SessionStart"`, `"PreCompress"`), ErrUnknownEvent, ""},
		{"gemini has no PreCompact", Gemini, with(`"SessionStart","source":"startup"`, `"PreCompact","trigger":"auto"`), ErrUnknownEvent, ""},
		{"no session", Claude, with(`"session_id":"s1",`, ""), ErrMissingField, "session_id"},
		{"empty session", Claude, with(`"s1"`, `""`), ErrMissingField, "session_id"},
		{"null session", Claude, with(`"s1"`, `null`), ErrMissingField, "session_id"},
		{"numeric session", Claude, with(`"s1"`, `12`), ErrFieldType, "session_id"},
		{"control in session", Claude, with(`"s1"`, `"s\u0000"`), ErrFieldValue, "session_id"},
		{"long session", Claude, with(`"s1"`, `"`+strings.Repeat("a", maxID+1)+`"`), ErrFieldValue, "session_id"},
		{"no cwd", Codex, with(`"cwd":"/p",`, ""), ErrMissingField, "cwd"},
		{"relative cwd", Codex, with(`"/p"`, `"project"`), ErrFieldValue, "cwd"},
		{"home cwd", Codex, with(`"/p"`, `"~/project"`), ErrFieldValue, "cwd"},
		{"transcript not a string", Codex, with(`"/t.jsonl"`, `{}`), ErrFieldType, "transcript_path"},
		{"no source", Gemini, with(`,"source":"startup"`, ""), ErrMissingField, "source"},
		{"codex stop without turn", Codex, with(`"SessionStart","source":"startup"`, `"Stop","stop_hook_active":false`), ErrMissingField, "turn_id"},
		{"stop without stop_hook_active", Claude, with(`"SessionStart","source":"startup"`, `"Stop"`), ErrMissingField, "stop_hook_active"},
		{"stop_hook_active a string", Gemini, with(`"SessionStart","source":"startup"`, `"AfterAgent","stop_hook_active":"true"`), ErrFieldType, "stop_hook_active"},
		{"pre compact without trigger", Claude, with(`"SessionStart","source":"startup"`, `"PreCompact"`), ErrMissingField, "trigger"},
		{"session end without reason", Gemini, with(`"SessionStart","source":"startup"`, `"SessionEnd"`), ErrMissingField, "reason"},
		{"fork context not a string", OpenCode, with(`"source":"startup"`, `"source":"fork","fork_context":["x"]`), ErrFieldType, "fork_context"},
		{"control in fork context", OpenCode, with(`"source":"startup"`, `"source":"fork","fork_context":"a\u0007b"`), ErrFieldValue, "fork_context"},
		{"long fork context", OpenCode, with(`"source":"startup"`, `"source":"fork","fork_context":"`+strings.Repeat("a", MaxForkContext+1)+`"`), ErrFieldValue, "fork_context"},
		{"unknown host", Host("cursor"), valid, ErrUnknownHost, ""},
		{"too large", Claude, valid[:len(valid)-1] + `,"pad":"` + strings.Repeat("x", MaxPayload) + `"}`, ErrTooLarge, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tc.host, []byte(tc.payload))
			require.Error(t, err)
			require.ErrorIs(t, err, tc.cause)
			fe := fault.As(err)
			require.Equal(t, fault.InvalidInput, fe.Code)
			require.True(t, strings.HasPrefix(fe.Message, "hook payload"), fe.Message)
			if tc.field != "" {
				require.Equal(t, tc.field, fe.Details["field"])
			}
		})
	}
}

// TestParse_SyntaxPosition: a payload that is not JSON says where.
func TestParse_SyntaxPosition(t *testing.T) {
	t.Parallel()
	_, err := Parse(Claude, []byte("{\n  \"session_id\": \"s1\",\n  \"cwd\": /p\n}"))
	var se *SyntaxError
	require.True(t, errors.As(err, &se))
	require.Equal(t, 3, se.Line)
	require.Equal(t, 10, se.Column)
	require.ErrorIs(t, err, ErrNotJSON)
}

// TestParse_Tolerant: hosts add fields and values; awr keeps working.
func TestParse_Tolerant(t *testing.T) {
	t.Parallel()
	p := `{"session_id":"s1","cwd":"/p","hook_event_name":"SessionStart","source":"teleport",` +
		`"brand_new":{"nested":[1,2,3]},"model":null,"transcript_path":null,"effort":{"level":"max"}}`
	e, err := Parse(Claude, []byte(p))
	require.NoError(t, err)
	require.Equal(t, "teleport", e.Source)
	require.Equal(t, "", e.Model)
	require.Equal(t, "", e.TranscriptPath)
	require.Equal(t, []string{"brand_new", "cwd", "effort", "hook_event_name", "model", "session_id", "source", "transcript_path"}, e.Fields)
}

func TestRead(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		e, err := Read(Codex, bytes.NewReader(fixture(t, Codex, "stop.json")))
		require.NoError(t, err)
		require.Equal(t, Stop, e.Name)
	})
	t.Run("ErrTooLarge", func(t *testing.T) {
		t.Parallel()
		r := strings.NewReader(`{"pad":"` + strings.Repeat("x", 2*MaxPayload) + `"}`)
		_, err := Read(Claude, r)
		require.ErrorIs(t, err, ErrTooLarge)
	})
	t.Run("ErrRead", func(t *testing.T) {
		t.Parallel()
		_, err := Read(Claude, failingReader{})
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	})
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("stdin closed") }

func TestParseHost(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"claude", " Codex ", "GEMINI"} {
		h, err := ParseHost(s)
		require.NoError(t, err)
		require.True(t, h.valid())
	}
	_, err := ParseHost("copilot")
	require.ErrorIs(t, err, ErrUnknownHost)
	require.Equal(t, fault.InvalidInput, fault.CodeOf(err))
	require.NotEmpty(t, fault.As(err).Hint)
}

// TestKey: one occurrence, one key; a repeated delivery (the same payload)
// has the same key; anything that makes it another occurrence changes it.
func TestKey(t *testing.T) {
	t.Parallel()
	key := func(h Host, file string) string {
		e, err := Parse(h, fixture(t, h, file))
		require.NoError(t, err)
		return e.Key()
	}
	keys := map[string]string{}
	for _, h := range Hosts() {
		for _, file := range payloads(t, h) {
			e, err := Parse(h, fixture(t, h, file))
			if err != nil {
				continue // the unhandled event
			}
			k := e.Key()
			require.True(t, strings.HasPrefix(k, "hook:"))
			require.Equal(t, k, key(h, file), "the same delivery twice")
			if prev, dup := keys[k]; dup {
				t.Fatalf("%s/%s and %s share key %s", h, file, prev, k)
			}
			keys[k] = string(h) + "/" + file
		}
	}
	// The same event with another cwd or transcript is the same occurrence.
	e1, err := Parse(Codex, fixture(t, Codex, "session_start_startup.json"))
	require.NoError(t, err)
	e2 := e1
	e2.Cwd, e2.TranscriptPath = "/elsewhere", ""
	require.Equal(t, e1.Key(), e2.Key())
	// Field boundaries cannot be forged by moving text between fields.
	a := Event{Host: Claude, Name: SessionStart, ConversationID: "ab", Source: "c"}
	b := Event{Host: Claude, Name: SessionStart, ConversationID: "a", Source: "bc"}
	require.NotEqual(t, a.Key(), b.Key())
}
