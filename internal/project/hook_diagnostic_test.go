package project_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/awr-dev/awr/internal/project"
)

// shape is one change of a host's recorded payload: the shape a newer (or
// older) version of the host might send.
type shape struct {
	name    string
	fixture string
	change  func(m map[string]any)
	want    string // in the diagnostic's line; "" when the hook answers as usual
}

// shapes are the changes of payload shape tried on every host: fields
// missing, of the wrong type, an event awr does not know, and fields added.
func shapes(host string) []shape {
	stop := "stop"
	if host == "gemini" {
		stop = "after_agent"
	}
	out := []shape{
		{name: "fields added", fixture: "session_start_startup", change: func(m map[string]any) {
			m["sandbox"] = map[string]any{"mode": "workspace-write"}
			m["agent_version"] = 3
		}},
		{name: "session_id missing", fixture: "session_start_startup", change: func(m map[string]any) { delete(m, "session_id") }, want: "hook payload: session_id: required field missing (InvalidInput)"},
		{name: "session_id a number", fixture: "session_start_startup", change: func(m map[string]any) { m["session_id"] = 7 }, want: "hook payload: session_id is not a string: field of the wrong type (InvalidInput)"},
		{name: "hook_event_name an object", fixture: "session_start_startup", change: func(m map[string]any) { m["hook_event_name"] = map[string]any{"name": "SessionStart"} }, want: "hook_event_name is not a string: field of the wrong type (InvalidInput)"},
		{name: "source missing", fixture: "session_start_startup", change: func(m map[string]any) { delete(m, "source") }, want: "hook payload: source: required field missing (InvalidInput)"},
		{name: "source a list", fixture: "session_start_startup", change: func(m map[string]any) { m["source"] = []any{"startup"} }, want: "hook payload: source is not a string: field of the wrong type (InvalidInput)"},
		{name: "cwd relative", fixture: "session_start_startup", change: func(m map[string]any) { m["cwd"] = "work/project" }, want: "hook payload: cwd is not an absolute path: field value refused (InvalidInput)"},
		{name: "an event awr does not know", fixture: "session_start_startup", change: func(m map[string]any) { m["hook_event_name"] = "SessionPaused" }, want: `event "SessionPaused"`},
	}
	if host != "opencode" {
		out = append(out, shape{name: "stop_hook_active a string", fixture: stop, change: func(m map[string]any) { m["stop_hook_active"] = "false" }, want: "hook payload: stop_hook_active is not a boolean: field of the wrong type (InvalidInput)"})
	}
	if host == "codex" {
		out = append(out, shape{name: "turn_id missing", fixture: "stop", change: func(m map[string]any) { delete(m, "turn_id") }, want: "hook payload: turn_id: required field missing (InvalidInput)"})
	}
	return out
}

// TestHook_UnknownShapeIsADiagnostic: a payload of a shape awr does not
// know (a field missing or of the wrong type, an event it does not
// handle) gets the host's empty answer, appends nothing to the log and is
// recorded as a diagnostic, one line in .awr/hooks.log, which awr doctor
// counts per host and reports the latest of (a warning until a hook of
// the host ran since, a note after). A payload with fields added is
// answered as usual and recorded as nothing.
func TestHook_UnknownShapeIsADiagnostic(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"claude", "codex", "gemini", "opencode"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
			opts := project.Options{Now: func() time.Time { return clock }, Entropy: ulid.Monotonic(rand.New(rand.NewSource(1)), 0)}
			dir, p := checkoutProject(t, opts)
			_, err := p.ClientInstall(ctx, project.ClientInstallRequest{Client: host, Accept: true, Fingerprint: "absent", Command: "awr client hook --client " + host, Force: true})
			require.NoError(t, err)
			empty := project.AnswerHook(ctx, dir, project.HookRequest{Client: host}, strings.NewReader("not json"), opts).Stdout
			require.NoError(t, os.Remove(filepath.Join(dir, ".awr", "hooks.log")))

			var wants []string
			for _, s := range shapes(host) {
				clock = clock.Add(time.Minute)
				var m map[string]any
				require.NoError(t, json.Unmarshal(fixture(t, host, s.fixture, dir, nil), &m))
				s.change(m)
				payload, err := json.Marshal(m)
				require.NoError(t, err)
				before := head(t, p)
				// The host runs its hooks in the project: a payload
				// that does not parse names no cwd to trust.
				res := project.AnswerHook(ctx, dir, project.HookRequest{Client: host}, bytes.NewReader(payload), opts)
				if s.want == "" {
					require.Empty(t, res.Log, "%s: answered as usual", s.name)
					require.NotEqual(t, string(empty), string(res.Stdout), "%s: answered as usual", s.name)
					continue
				}
				require.Equal(t, string(empty), string(res.Stdout), "%s: the host's empty answer", s.name)
				require.Len(t, res.Log, 1, "%s: one line", s.name)
				require.Contains(t, res.Log[0], s.want, s.name)
				require.True(t, strings.HasPrefix(res.Log[0], clock.Format(time.RFC3339)+" "+host+" "), "%s: when and which host: %s", s.name, res.Log[0])
				wire, _ := m["hook_event_name"].(string)
				conv, _ := m["session_id"].(string)
				if wire != "" && conv != "" {
					require.Contains(t, res.Log[0], fmt.Sprintf(" %s %s conversation=%q: ", host, wire, conv), "%s: the line names the event and its conversation", s.name)
				}
				require.Equal(t, before, head(t, p), "%s: nothing appended to the log", s.name)
				wants = append(wants, res.Log[0])
			}
			kept := mustReadFile(t, filepath.Join(dir, ".awr", "hooks.log"))
			require.Equal(t, strings.Join(wants, "\n")+"\n", string(kept), "each diagnostic kept in .awr/hooks.log")

			doc, err := p.Doctor(ctx, project.DoctorRequest{})
			require.NoError(t, err)
			f := finding(t, doc, project.FindingHooksNotAnswered, host)
			require.Equal(t, project.SeverityWarning, f.Severity, "the latest hook of %s got no answer", host)
			require.Contains(t, f.Message, fmt.Sprintf("%d hook event(s) of %s got no answer here since ", len(wants), host), "the count")
			require.Contains(t, f.Message, wants[len(wants)-1], "the latest")
			require.Equal(t, "awr client install --client "+host, f.Repair)
			require.False(t, doc.OK)
			hook := hookOf(t, doc, host)
			require.Equal(t, len(wants), hook.NotAnswered)
			require.Equal(t, wants[len(wants)-1], hook.LastNotAnswered)

			// A hook of the host answered since: a note.
			clock = clock.Add(time.Minute)
			res := project.AnswerHook(ctx, "", project.HookRequest{Client: host}, bytes.NewReader(fixture(t, host, "session_start_startup", dir, nil)), opts)
			require.Empty(t, res.Log)
			doc, err = p.Doctor(ctx, project.DoctorRequest{})
			require.NoError(t, err)
			f = finding(t, doc, project.FindingHooksNotAnswered, host)
			require.Equal(t, project.SeverityInfo, f.Severity, "a hook of %s ran since", host)
			require.Contains(t, f.Message, "ran here since, at "+clock.Format(time.RFC3339))
		})
	}
}

// TestDoctor_HookDiagnosticsKeptAcrossTheRotation: doctor counts the
// diagnostics of hooks.log.1 with those of hooks.log, per host, skipping
// lines that are not awr's.
func TestDoctor_HookDiagnosticsKeptAcrossTheRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p := checkoutProject(t, project.Options{})
	awr := filepath.Join(dir, ".awr")
	require.NoError(t, os.WriteFile(filepath.Join(awr, "hooks.log.1"), []byte(
		"2026-11-01T08:00:00Z gemini BeforeAgent conversation=\"g1\": hook payload: prompt is not a string (InvalidInput)\n"+
			"someone's note\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(awr, "hooks.log"), []byte(
		"2026-11-01T09:00:00Z codex Stop conversation=\"c1\": hook payload: turn_id: required field missing (InvalidInput)\n"+
			"2026-11-01T10:00:00Z gemini AfterAgent conversation=\"g1\": hook payload: stop_hook_active is not a boolean (InvalidInput)\n"+
			"2026-11-01T11:00:00Z nohost X conversation=\"\": x (InvalidInput)\n"), 0o600))
	doc, err := p.Doctor(ctx, project.DoctorRequest{})
	require.NoError(t, err)
	g := finding(t, doc, project.FindingHooksNotAnswered, "gemini")
	require.Contains(t, g.Message, "2 hook event(s) of gemini got no answer here since 2026-11-01T08:00:00Z")
	require.Contains(t, g.Message, "the latest: 2026-11-01T10:00:00Z gemini AfterAgent")
	c := finding(t, doc, project.FindingHooksNotAnswered, "codex")
	require.Contains(t, c.Message, "1 hook event(s) of codex")
	for _, f := range doc.Findings {
		require.NotEqual(t, "nohost", f.Subject)
	}
}

func finding(t *testing.T, doc *project.DoctorResult, code, subject string) project.DoctorFinding {
	t.Helper()
	for _, f := range doc.Findings {
		if f.Code == code && f.Subject == subject {
			return f
		}
	}
	require.Failf(t, "no finding", "%s for %s in %+v", code, subject, doc.Findings)
	return project.DoctorFinding{}
}

func hookOf(t *testing.T, doc *project.DoctorResult, host string) project.DoctorHook {
	t.Helper()
	for _, h := range doc.Hooks {
		if h.Client == host {
			return h
		}
	}
	require.Failf(t, "no hooks entry", "%s in %+v", host, doc.Hooks)
	return project.DoctorHook{}
}
