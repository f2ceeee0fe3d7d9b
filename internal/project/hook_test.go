package project_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/internal/project"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

var updateHooks = flag.Bool("update", false, "rewrite testdata/hook_*.golden")

// hookStep is one delivery of a host's recorded payload (fixtures/hooks),
// or an action of the agent between deliveries.
type hookStep struct {
	name    string
	fixture string            // file in fixtures/hooks/<host>/, "" for an action
	set     map[string]string // payload fields replaced
	raw     string            // a payload given as is
	act     func(t *testing.T, p *project.Project, session string)
}

// hookScript is the end-to-end path of the host-hooks issue for one
// host: startup, bind, work, compaction, context given back, stops until a
// checkpoint, the conversation ended to clear it, the new conversation
// continuing the same session, a repeated delivery, a malformed payload.
func hookScript(host string) []hookStep {
	compact, reinject := "pre_compact_auto", "session_start_compact"
	stop, stopActive := "stop", "stop_active"
	endClear, clearStart := "session_end_clear", "session_start_clear"
	var endSet map[string]string
	switch host {
	case "gemini":
		compact, reinject, stop, stopActive = "pre_compress_auto", "before_agent", "after_agent", "after_agent_active"
	case "codex":
		endClear, endSet = "session_end", map[string]string{"reason": "clear"}
	}
	return []hookStep{
		{name: "startup, not bound yet", fixture: "session_start_startup"},
		{name: "the agent starts a session and binds the conversation", act: func(t *testing.T, p *project.Project, _ string) {}},
		{name: "startup again, bound", fixture: "session_start_startup", set: map[string]string{"timestamp": "2026-09-01T09:00:10.000Z"}},
		{name: "the agent records its packet", act: func(t *testing.T, p *project.Project, session string) {
			_, err := p.ContextCompile(context.Background(), project.ContextCompileRequest{Work: "CART-1", Session: session})
			require.NoError(t, err)
		}},
		{name: "compaction", fixture: compact},
		{name: "context given back", fixture: reinject},
		{name: "stop with no checkpoint", fixture: stop},
		{name: "stop while the host continues because of it", fixture: stopActive},
		{name: "the agent checkpoints", act: func(t *testing.T, p *project.Project, session string) {
			_, err := p.SessionCheckpoint(context.Background(), project.SessionCheckpointRequest{SessionID: session, Agent: "builder", Digest: "Cart writes go through CartStore.Save", NextAction: "Run the cart handler tests"})
			require.NoError(t, err)
		}},
		{name: "stop after the checkpoint", fixture: stop, set: map[string]string{"turn_id": "019d0000-0000-7000-8000-000000000002", "timestamp": "2026-09-01T09:40:00.000Z"}},
		{name: "the conversation is ended to clear it", fixture: endClear, set: endSet},
		{name: "the cleared conversation starts with a new id", fixture: clearStart},
		{name: "the same delivery again", fixture: clearStart},
		{name: "a malformed payload", raw: `{"session_id": 7}`},
	}
}

// TestHook_Hosts feeds each host's recorded payloads to the hook answerer
// on the demo's project, with a fixed clock and fixed ids, and compares
// every answer and every event it appended with testdata/hook_HOST.golden
// (go test ./internal/project -run TestHook_Hosts -update).
func TestHook_Hosts(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"claude", "codex", "gemini"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
			opts := project.Options{Now: func() time.Time { return clock }, Entropy: ulid.Monotonic(rand.New(rand.NewSource(1)), 0)}
			dir, p := checkoutProject(t, opts)
			start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "builder", Claim: true})
			require.NoError(t, err)
			session := start.Session.ID
			conversation := fixtureField(t, host, "session_start_startup", "session_id")

			var out strings.Builder
			for _, step := range hookScript(host) {
				fmt.Fprintf(&out, "== %s\n", step.name)
				clock = clock.Add(time.Second)
				before := head(t, p)
				if step.act != nil {
					if strings.Contains(step.name, "binds") {
						_, err := p.ClientBind(ctx, project.ClientBindRequest{Client: host, ExternalSession: conversation, Work: "CART-1", SessionID: session})
						require.NoError(t, err)
					} else {
						step.act(t, p, session)
					}
					fmt.Fprintf(&out, "(agent; log %d -> %d)\n\n", before, head(t, p))
					continue
				}
				payload := []byte(step.raw)
				if step.fixture != "" {
					payload = fixture(t, host, step.fixture, dir, step.set)
				}
				// A separate process would open the project afresh: so
				// does the answerer, from the payload's cwd.
				flagDir := ""
				if step.fixture == "" {
					flagDir = dir // no cwd to find it from: --project
				}
				res := project.AnswerHook(ctx, flagDir, project.HookRequest{Client: host}, bytes.NewReader(payload), opts)
				require.Equal(t, dir, res.Dir, "found from the payload's cwd")
				fmt.Fprintf(&out, "stdout:\n%s\n", indentJSON(res.Stdout))
				for _, l := range res.Log {
					fmt.Fprintf(&out, "hooks.log: %s\n", l[strings.Index(l, " ")+1:])
				}
				appended := eventsBetween(t, p, before)
				if len(appended) == 0 {
					appended = []string{"(nothing)"}
				}
				fmt.Fprintf(&out, "appended:\n  %s\n\n", strings.Join(appended, "\n  "))
			}
			// The awr session is never ended by the host, nor its claim
			// released.
			s, err := p.SessionShow(ctx, project.SessionShowRequest{Session: session})
			require.NoError(t, err)
			require.Equal(t, "active", s.Session.Status)
			require.NotEmpty(t, s.Claims)
			require.Equal(t, "held", s.Claims[len(s.Claims)-1].State, "the claim is still held")

			log := mustReadFile(t, filepath.Join(dir, ".awr", "hooks.log"))
			require.Equal(t, 1, bytes.Count(log, []byte("\n")), "one line in .awr/hooks.log, for the malformed payload: %s", log)

			golden := filepath.Join("testdata", "hook_"+host+".golden")
			if *updateHooks {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(out.String()), 0o644))
			}
			want := mustReadFile(t, golden)
			require.Equal(t, string(want), out.String(), "go test ./internal/project -run TestHook_Hosts -update")
		})
	}
}

// checkoutProject initializes a copy of the demo's project with opts and
// returns its directory and the open project (closed with the test).
func checkoutProject(t *testing.T, opts project.Options) (string, *project.Project) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	_, err := fixtures.CopyProject("checkout", dir)
	require.NoError(t, err)
	p := opened(t, dir, opts)
	_, err = p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	return dir, p
}

func fixtureField(t *testing.T, host, name, field string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustReadFile(t, testkit.Path("fixtures", "hooks", host, name+".json")), &m))
	return m[field].(string)
}

// fixture returns a recorded payload with its cwd in dir/sub (the
// answerer finds the project above it) and the fields of set replaced.
func fixture(t *testing.T, host, name, dir string, set map[string]string) []byte {
	t.Helper()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustReadFile(t, testkit.Path("fixtures", "hooks", host, name+".json")), &m))
	m["cwd"] = sub
	for k, v := range set {
		if _, ok := m[k]; ok || k == "reason" {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// mustReadFile is the content of the file at path.
func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func head(t *testing.T, p *project.Project) int64 {
	t.Helper()
	st, err := p.Status(context.Background(), project.StatusRequest{})
	require.NoError(t, err)
	return st.ProjectRevision
}

// eventsBetween describes the events after seq before: kind, stream and
// the payload fields a hook decides.
func eventsBetween(t *testing.T, p *project.Project, before int64) []string {
	t.Helper()
	res, err := p.Log(context.Background(), project.LogRequest{Since: before})
	require.NoError(t, err)
	var out []string
	for _, e := range res.Events {
		line := fmt.Sprintf("%d %s %s", e.Seq, e.Kind, e.Stream)
		var pl map[string]any
		require.NoError(t, json.Unmarshal(e.Payload, &pl))
		for _, k := range []string{"event", "source", "trigger", "reason", "answer", "continues_from", "session_id"} {
			if v, ok := pl[k]; ok && v != "" {
				line += fmt.Sprintf(" %s=%v", k, v)
			}
		}
		out = append(out, line)
	}
	return out
}

func indentJSON(b []byte) string {
	if len(b) == 0 {
		return "(empty)"
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

// TestHook_NeverStoresASecret: a payload field holding a credential is
// not recorded; the host gets its empty answer and .awr/hooks.log a line
// that does not quote it.
func TestHook_NeverStoresASecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p, _, _ := boundTo(t, "claude", "session_end", project.Options{})
	before := head(t, p)
	secret := "ghp_" + strings.Repeat("a1B2c3D4e5", 4)[:36]
	payload := fixture(t, "claude", "session_end", dir, map[string]string{"reason": secret})
	res := project.AnswerHook(ctx, "", project.HookRequest{Client: "claude"}, bytes.NewReader(payload), project.Options{})
	require.Empty(t, res.Stdout)
	require.Equal(t, before, head(t, p), "nothing recorded")
	log := mustReadFile(t, filepath.Join(dir, ".awr", "hooks.log"))
	require.Contains(t, string(log), "RuleViolation")
	require.NotContains(t, string(log), secret)
}

// TestHook_StaleConversationGetsNoPacket: a conversation whose session
// another agent resumed (for another conversation) is told who continues
// instead of getting the packet; a payload whose cwd is in no project gets
// the empty answer and writes nothing.
func TestHook_StaleConversationGetsNoPacket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p, session, _ := boundTo(t, "claude", "session_start_compact", project.Options{})
	resumed, err := p.SessionResume(ctx, project.SessionResumeRequest{FromSession: session, Agent: "reviewer", Client: "codex", ExternalSession: "other-conversation"})
	require.NoError(t, err)

	payload := fixture(t, "claude", "session_start_compact", dir, nil)
	res := project.AnswerHook(ctx, "", project.HookRequest{Client: "claude"}, bytes.NewReader(payload), project.Options{})
	var out struct {
		Specific struct {
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &out), "%s", res.Stdout)
	require.Contains(t, out.Specific.Context, "continued elsewhere")
	require.Contains(t, out.Specific.Context, resumed.Resumed.Session.ID)
	require.NotContains(t, out.Specific.Context, "# Work context", "no packet for a stale conversation")

	nowhere := filepath.Join(t.TempDir(), "not-a-project")
	require.NoError(t, os.MkdirAll(nowhere, 0o755))
	before := head(t, p)
	var m map[string]any
	require.NoError(t, json.Unmarshal(payload, &m))
	m["cwd"] = nowhere
	b, err := json.Marshal(m)
	require.NoError(t, err)
	res = project.AnswerHook(ctx, "", project.HookRequest{Client: "claude"}, bytes.NewReader(b), project.Options{})
	require.Empty(t, res.Stdout)
	require.Equal(t, before, head(t, p), "nothing written")
}

// TestHook_EveryRecordedPayload: every recorded payload of every host,
// bound and not, gets an answer in its host's format: nothing or one JSON
// object (always an object for Gemini CLI), and the log moves only for
// the events awr records.
func TestHook_EveryRecordedPayload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, host := range []string{"claude", "codex", "gemini"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			dir, p := checkoutProject(t, project.Options{})
			files, err := filepath.Glob(testkit.Path("fixtures", "hooks", host, "*.json"))
			require.NoError(t, err)
			var payloads []string
			for _, f := range files {
				if base := filepath.Base(f); !strings.HasPrefix(base, "settings_") && !strings.HasPrefix(base, "hooks_") {
					payloads = append(payloads, strings.TrimSuffix(base, ".json"))
				}
			}
			require.NotEmpty(t, payloads)
			answer := func(name string) []byte {
				res := project.AnswerHook(ctx, "", project.HookRequest{Client: host}, bytes.NewReader(fixture(t, host, name, dir, nil)), project.Options{})
				if host == "gemini" {
					require.NotEmpty(t, res.Stdout, "%s: Gemini CLI always gets a JSON object", name)
				}
				if len(res.Stdout) > 0 {
					var obj map[string]any
					require.NoError(t, json.Unmarshal(res.Stdout, &obj), "%s: %s", name, res.Stdout)
				}
				if strings.Contains(name, "tool") {
					// Tool events are recorded to show one awr does not
					// handle: the empty answer and a line in the log.
					require.Len(t, res.Log, 1, name)
					require.Contains(t, res.Log[0], "event not handled")
				} else {
					require.Empty(t, res.Log, "%s: every other recorded payload is understood", name)
				}
				return res.Stdout
			}
			before := head(t, p)
			for _, name := range payloads {
				answer(name)
			}
			require.Equal(t, before, head(t, p), "nothing is written for conversations awr does not know")

			start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "builder", Claim: true})
			require.NoError(t, err)
			bound := map[string]bool{}
			for _, conv := range []string{fixtureField(t, host, "session_start_startup", "session_id"), fixtureField(t, host, "session_start_clear", "session_id")} {
				bound[conv] = true
				_, err = p.ClientBind(ctx, project.ClientBindRequest{Client: host, ExternalSession: conv, Work: "CART-1", SessionID: start.Session.ID})
				require.NoError(t, err)
			}
			for _, name := range payloads {
				before := head(t, p)
				answer(name)
				recorded := head(t, p) > before
				handled := bound[fixtureField(t, host, name, "session_id")] && !strings.Contains(name, "tool") && !strings.Contains(name, "post_compact") && !strings.Contains(name, "user_prompt") &&
					!(name == "before_agent")
				require.Equal(t, handled, recorded, "%s: recorded only when awr keeps the event", name)
			}
		})
	}
}
