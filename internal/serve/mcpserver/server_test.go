package mcpserver_test

import (
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
	"github.com/awr-dev/awr/projections"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// initProject copies the checkout fixture and accepts its intake plan.
func initProject(t testing.TB) string {
	t.Helper()
	dir, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	acceptIntake(t, dir, 1)
	return dir
}

// acceptIntake accepts the intake plan of the project at dir, with the
// test's clock and the entropy of seed (two seeds, two project ids).
func acceptIntake(t testing.TB, dir string, seed int64) {
	t.Helper()
	p, err := intake.Plan(dir, intake.InitOptions{})
	require.NoError(t, err)
	var stores []*events.Store
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	open := func(create bool) (*events.Store, error) {
		st, err := events.Open(context.Background(), events.DBPath(dir), events.Options{Create: create, Projectors: projections.Projectors()})
		if err == nil {
			stores = append(stores, st)
		}
		return st, err
	}
	env := func(st *events.Store) *commands.Env {
		return &commands.Env{Store: st, Now: func() time.Time { return now }, Entropy: rand.New(rand.NewSource(seed))}
	}
	_, err = intake.Accept(context.Background(), p, open, env)
	require.NoError(t, err)
}

// connect starts a server on dir over in-memory transports and returns
// the client session.
func connect(t testing.TB, dir string) *mcp.ClientSession {
	t.Helper()
	_, cs := connectWith(t, dir, nil)
	return cs
}

// connectWith starts a server on dir over in-memory transports, its client
// made with opts, and returns both ends; they close when t ends.
func connectWith(t testing.TB, dir string, opts *mcp.ClientOptions) (*mcpserver.Server, *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	srv, err := mcpserver.New(mcpserver.Options{Project: dir, Version: "test", Now: func() time.Time { return now }})
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, opts).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		srv.Close()
	})
	return srv, cs
}

// call calls a tool and decodes its answer. A result's structured content
// holds the same JSON as its text and validates against the tool's
// advertised outputSchema; a tool error is JSON text only (no structured
// content, which the outputSchema describes only for a result).
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s: protocol error", name)
	require.Len(t, res.Content, 1)
	text := res.Content[0].(*mcp.TextContent).Text
	var fromText map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &fromText), text)
	if res.IsError {
		require.Nil(t, res.StructuredContent, "%s: a tool error carries no structured content", name)
		return fromText, true
	}
	sc, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var structured map[string]any
	require.NoError(t, json.Unmarshal(sc, &structured))
	require.Equal(t, fromText, structured, "%s: text and structured content differ", name)
	requireValid(t, cs, name, sc)
	return structured, false
}

// outputSchemas caches each session's tools' resolved output schemas, as
// tools/list advertises them.
var outputSchemas sync.Map // *mcp.ClientSession → map[string]*jsonschema.Resolved

// requireValid fails unless doc validates against the outputSchema the
// server advertises for tool name.
func requireValid(t *testing.T, cs *mcp.ClientSession, name string, doc []byte) {
	t.Helper()
	v, ok := outputSchemas.Load(cs)
	if !ok {
		res, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		m := map[string]*jsonschema.Resolved{}
		for _, tl := range res.Tools {
			require.NotNil(t, tl.OutputSchema, "%s declares no outputSchema", tl.Name)
			b, err := json.Marshal(tl.OutputSchema)
			require.NoError(t, err)
			var s jsonschema.Schema
			require.NoError(t, json.Unmarshal(b, &s), tl.Name)
			r, err := s.Resolve(nil)
			require.NoError(t, err, tl.Name)
			m[tl.Name] = r
		}
		v, _ = outputSchemas.LoadOrStore(cs, m)
	}
	var inst any
	require.NoError(t, json.Unmarshal(doc, &inst))
	require.NoError(t, v.(map[string]*jsonschema.Resolved)[name].Validate(inst), "%s: structured content does not validate against its outputSchema:\n%s", name, doc)
	validated.Store(name, true)
}

// validated records every tool whose result some test validated.
var validated sync.Map

func ok(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := call(t, cs, name, args)
	require.False(t, isErr, "%s: %v", name, out)
	require.Contains(t, out, "project_revision", name)
	return out
}

func fails(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, code string) map[string]any {
	t.Helper()
	out, isErr := call(t, cs, name, args)
	require.True(t, isErr, "%s succeeded: %v", name, out)
	require.Equal(t, code, out["code"], "%v", out)
	for _, k := range []string{"message", "details", "hint"} {
		require.Contains(t, out, k)
	}
	return out
}

func rev(t *testing.T, m map[string]any) int64 {
	t.Helper()
	return int64(m["project_revision"].(float64))
}

func get(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		v = v.(map[string]any)[k]
	}
	return v
}

func TestServer_ListTools(t *testing.T) {
	t.Parallel()
	cs := connect(t, initProject(t))
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		require.NotEmpty(t, tl.Description, tl.Name)
		schema := tl.InputSchema.(map[string]any)
		require.Equal(t, "object", schema["type"], tl.Name)
		require.Equal(t, false, schema["additionalProperties"], tl.Name)
		out, isMap := tl.OutputSchema.(map[string]any)
		require.True(t, isMap, "%s declares no outputSchema", tl.Name)
		require.Equal(t, "object", out["type"], tl.Name)
		b, err := json.Marshal(out)
		require.NoError(t, err)
		require.NotContains(t, string(b), `"null"`, "%s: a union with null in its outputSchema", tl.Name)
		if tl.Name == "awr_verify" {
			require.Empty(t, schema["required"], "awr_verify {} verifies the chain")
		}
	}
	require.ElementsMatch(t, []string{"awr_status", "awr_ready", "awr_intake_inspect", "awr_source_reindex", "awr_session_start",
		"awr_session_checkpoint", "awr_session_end", "awr_session_resume", "awr_session_show", "awr_session_list", "awr_claim_acquire", "awr_claim_renew",
		"awr_context_compile", "awr_recovery_inspect", "awr_client_bind", "awr_log", "awr_rig_ps", "awr_seat_show",
		"awr_claim_release", "awr_client_show", "awr_source_list", "awr_source_add", "awr_verify", "awr_seat_list", "awr_seat_add", "awr_seat_remove", "awr_seat_clear_attention", "awr_seat_reconcile", "awr_recovery_verify", "awr_context_hygiene", "awr_context_confirm",
		"awr_rig_up", "awr_rig_down", "awr_rig_send", "awr_rig_capture", "awr_rig_snapshot", "awr_rig_restore_check",
		"awr_work_show", "awr_work_history", "awr_work_claim", "awr_work_release", "awr_work_handoff", "awr_evidence_add", "awr_work_complete",
		"awr_exec_list", "awr_exec_show", "awr_search", "awr_audit",
		"awr_doctor_check", "awr_doctor_repair_expire_claim", "awr_doctor_repair_end_session", "awr_doctor_repair_abandon_execution",
		"awr_diff", "awr_anchor", "awr_fork"}, names)
}

func TestServer_Tools(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	cs := connect(t, dir)

	st := ok(t, cs, "awr_status", nil)
	require.EqualValues(t, 2, rev(t, st))
	require.EqualValues(t, 1, st["ready_count"])
	ok(t, cs, "awr_status", map[string]any{"at": 1})

	ready := ok(t, cs, "awr_ready", map[string]any{"all": true})
	require.Equal(t, "CART-1", get(ready, "ready").([]any)[0].(map[string]any)["key"])

	in := ok(t, cs, "awr_intake_inspect", nil)
	require.Equal(t, "ready", get(in, "organization.state"))

	re := ok(t, cs, "awr_source_reindex", nil)
	require.Equal(t, []any{}, re["missing"])

	start := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true, "ttl_ms": 600000,
		"expected_revision": rev(t, st)})
	sid := get(start, "session.id").(string)
	require.NotEmpty(t, get(start, "claim.id"))

	comp := ok(t, cs, "awr_context_compile", map[string]any{"work": "CART-1", "session": sid})
	hash := get(comp, "work_context.context_hash").(string)
	require.NotEmpty(t, hash)
	require.Equal(t, true, get(comp, "completeness.complete"))

	cp := ok(t, cs, "awr_session_checkpoint", map[string]any{"session": sid, "agent": "builder", "context_hash": hash,
		"digest": "added the carts table", "next_action": "write the cart on every change", "open_loops": []any{"idempotency key"}})
	require.Equal(t, true, get(cp, "checkpoint.context_hash_verified"))

	ok(t, cs, "awr_claim_renew", map[string]any{"session": sid, "ttl_ms": 900000})

	bind := ok(t, cs, "awr_client_bind", map[string]any{"client": "claude-code", "external_session": "claude-code:abc", "work": "CART-1", "session": sid})
	require.Equal(t, sid, get(bind, "binding.session_id"))

	show := ok(t, cs, "awr_session_show", map[string]any{"session": sid})
	require.Len(t, show["checkpoints"], 1)
	require.Len(t, show["bindings"], 1)

	list := ok(t, cs, "awr_session_list", map[string]any{"active": true, "work": "CART-1"})
	require.Len(t, list["sessions"], 1)

	rec := ok(t, cs, "awr_recovery_inspect", map[string]any{"session": sid})
	require.NotEmpty(t, rec["next_step"])

	res := ok(t, cs, "awr_session_resume", map[string]any{"from_session": sid, "agent": "successor"})
	succ := get(res, "resumed.session.id").(string)
	require.Equal(t, "write the cart on every change", get(res, "checkpoint.next_action"))

	end := ok(t, cs, "awr_session_end", map[string]any{"session": succ, "outcome": "completed", "agent": "successor"})
	require.Equal(t, "completed", get(end, "session.outcome"))

	// A session started without a claim takes it later; a second acquire
	// is refused with a hint to renew.
	other := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "other"})
	oid := get(other, "session.id").(string)
	acq := ok(t, cs, "awr_claim_acquire", map[string]any{"session": oid})
	require.Equal(t, oid, get(acq, "claim.session_id"))
	require.Equal(t, "held", acq["state"])
	again := fails(t, cs, "awr_claim_acquire", map[string]any{"session": oid}, "InvalidTransition")
	require.Equal(t, "awr claim renew --session "+oid, again["hint"])
	fails(t, cs, "awr_claim_acquire", map[string]any{"session": oid, "ttl_ms": 0}, "InvalidInput")

	// awr_audit: the report as data and rendered; it writes no file.
	au := ok(t, cs, "awr_audit", map[string]any{"session": succ})
	require.Equal(t, "md", au["format"])
	require.Len(t, au["sessions"], 2)
	require.Equal(t, true, get(au, "chain.verified"))
	require.Contains(t, au["text"], "# Audit of session `"+succ+"`")
	require.Contains(t, au["text"], "claude-code:abc")
	page := ok(t, cs, "awr_audit", map[string]any{"work": "CART-1", "format": "html", "at": rev(t, cp)})
	require.Len(t, page["sessions"], 1)
	require.Contains(t, page["text"], "<!DOCTYPE html>")
	require.NotContains(t, page["text"], "<script")
	fails(t, cs, "awr_audit", map[string]any{}, "Usage")
	fails(t, cs, "awr_audit", map[string]any{"work": "CART-1", "format": "pdf"}, "InvalidInput") // the schema's enum
	fails(t, cs, "awr_audit", map[string]any{"work": "NOPE-1"}, "NotFound")

	lg := ok(t, cs, "awr_log", map[string]any{"session": succ, "limit": 10000})
	require.NotEmpty(t, lg["events"])
	fails(t, cs, "awr_log", map[string]any{"session": succ, "limit": 0}, "InvalidInput") // the whole log at once: never over MCP
	ok(t, cs, "awr_log", map[string]any{"kind": "session_started", "since": 1, "until": 100})

	// awr_diff: the other session, started after the successor ended, is
	// added with its claim; a diff past the head is refused.
	df := ok(t, cs, "awr_diff", map[string]any{"from": get(end, "project_revision"), "session": oid})
	first := func(model string) map[string]any {
		list := get(df, "changes."+model).([]any)
		require.Len(t, list, 1, model)
		return list[0].(map[string]any)
	}
	require.Equal(t, oid, first("sessions")["id"])
	require.Equal(t, "added", first("sessions")["change"])
	require.Equal(t, "added", first("claims")["change"])
	fails(t, cs, "awr_diff", map[string]any{"from": 1000}, "InvalidInput")
	fails(t, cs, "awr_diff", map[string]any{"from": 1, "session": "01NOPE"}, "NotFound")
}

func TestServer_Errors(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	cs := connect(t, dir)

	t.Run("NotFound", func(t *testing.T) {
		out := fails(t, cs, "awr_session_start", map[string]any{"work": "NOPE-1", "agent": "builder", "claim": true}, "NotFound")
		require.Equal(t, "NOPE-1", get(out, "details.work"))
		require.Equal(t, "awr ready --all", out["hint"])
		fails(t, cs, "awr_session_show", map[string]any{"session": "01NOPE"}, "NotFound")
		fails(t, cs, "awr_recovery_inspect", map[string]any{"session": "01NOPE"}, "NotFound")
	})
	t.Run("UnknownField", func(t *testing.T) {
		out := fails(t, cs, "awr_status", map[string]any{"colour": "red", "bogus": 1}, "InvalidInput")
		require.Contains(t, out["message"], "bogus, colour")
		require.Equal(t, []any{"bogus", "colour"}, get(out, "details.unknown_fields"))
	})
	t.Run("MissingRequired", func(t *testing.T) {
		fails(t, cs, "awr_session_start", map[string]any{"agent": "builder"}, "InvalidInput")
	})
	t.Run("WrongType", func(t *testing.T) {
		fails(t, cs, "awr_ready", map[string]any{"limit": "three"}, "InvalidInput")
	})
	t.Run("NegativeAt", func(t *testing.T) {
		out := fails(t, cs, "awr_status", map[string]any{"at": -1}, "InvalidInput")
		require.Equal(t, "awr status", out["hint"])
	})
	t.Run("NegativeLimit", func(t *testing.T) {
		fails(t, cs, "awr_log", map[string]any{"limit": -1}, "InvalidInput")
	})
	t.Run("AtWithSession", func(t *testing.T) {
		fails(t, cs, "awr_context_compile", map[string]any{"work": "CART-1", "session": "x", "at": 1}, "Usage")
	})
	t.Run("UnknownTool", func(t *testing.T) {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "awr_nope", Arguments: map[string]any{}})
		require.Error(t, err, "an unknown tool is a protocol error")
	})
}

func TestServer_ClaimConflict(t *testing.T) {
	t.Parallel()
	cs := connect(t, initProject(t))
	ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "a", "claim": true})
	out := fails(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "b", "claim": true}, "ClaimConflict")
	require.NotEmpty(t, out["hint"])
}

func TestServer_RequestIDRetry(t *testing.T) {
	t.Parallel()
	cs := connect(t, initProject(t))
	args := map[string]any{"work": "CART-1", "agent": "a", "claim": true, "request_id": "req-1"}
	first := ok(t, cs, "awr_session_start", args)
	before := rev(t, ok(t, cs, "awr_status", nil))
	again := ok(t, cs, "awr_session_start", args)
	require.Equal(t, true, again["replayed"], "the CLI marks a retried answer as replayed")
	delete(again, "replayed")
	require.Equal(t, first, again, "a retry returns the first result")
	require.Equal(t, before, rev(t, ok(t, cs, "awr_status", nil)), "a retry appends nothing")
}

func TestServer_SourceStale(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	cs := connect(t, dir)
	start := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "a", "claim": true})
	sid := get(start, "session.id").(string)
	ledger := filepath.Join(dir, "ledger", "work-ledger.yaml")
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ledger, append(b, []byte("# edited\n")...), 0o644))
	before := rev(t, ok(t, cs, "awr_status", nil))

	out := fails(t, cs, "awr_context_compile", map[string]any{"work": "CART-1", "session": sid}, "SourceStale")
	require.Equal(t, []any{"ledger/work-ledger.yaml"}, get(out, "details.sources"))
	require.Equal(t, "awr source reindex", out["hint"])
	require.Equal(t, before, rev(t, ok(t, cs, "awr_status", nil)), "a read never reindexes")

	ok(t, cs, "awr_source_reindex", nil)
	ok(t, cs, "awr_context_compile", map[string]any{"work": "CART-1", "session": sid})
}

func TestServer_Uninitialized(t *testing.T) {
	t.Parallel()
	dir, err := fixtures.CopyProject("checkout", t.TempDir())
	require.NoError(t, err)
	cs := connect(t, dir)
	out := fails(t, cs, "awr_status", nil, "NotFound")
	require.Equal(t, "awr init", out["hint"])
	in := ok(t, cs, "awr_intake_inspect", nil)
	require.EqualValues(t, 0, rev(t, in))
}

// TestServer_SecretsRefused: a credential in any free-text argument of a
// writing tool (agent label, digest, next action, open loop, bound
// external session id) is a RuleViolation naming the field, the secret is
// not echoed, and nothing is appended.
func TestServer_SecretsRefused(t *testing.T) {
	t.Parallel()
	cs := connect(t, initProject(t))
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	start := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "a", "claim": true})
	sid := get(start, "session.id").(string)
	before := rev(t, ok(t, cs, "awr_status", nil))
	cases := []struct {
		field, tool string
		args        map[string]any
	}{
		{"agent", "awr_session_start", map[string]any{"work": "CART-2", "agent": token}},
		{"agent", "awr_session_checkpoint", map[string]any{"session": sid, "agent": "key " + token, "digest": "d", "next_action": "n"}},
		{"digest", "awr_session_checkpoint", map[string]any{"session": sid, "agent": "a", "digest": "pushed with " + token, "next_action": "n"}},
		{"next_action", "awr_session_checkpoint", map[string]any{"session": sid, "agent": "a", "digest": "d", "next_action": "run with PASSWORD=" + token}},
		{"open_loops[1]", "awr_session_checkpoint", map[string]any{"session": sid, "agent": "a", "digest": "d", "next_action": "n", "open_loops": []any{"fine", token}}},
		{"agent", "awr_session_resume", map[string]any{"from_session": sid, "agent": token}},
		{"agent", "awr_session_end", map[string]any{"session": sid, "outcome": "completed", "agent": token}},
		{"external_session", "awr_client_bind", map[string]any{"client": "c", "external_session": "host:" + token, "work": "CART-1", "session": sid}},
	}
	for _, tc := range cases {
		out := fails(t, cs, tc.tool, tc.args, "RuleViolation")
		require.Equal(t, tc.field, get(out, "details.field"), "%s", tc.tool)
		b, err := json.Marshal(out)
		require.NoError(t, err)
		require.NotContains(t, string(b), token, "%s echoed the secret", tc.tool)
	}
	require.Equal(t, before, rev(t, ok(t, cs, "awr_status", nil)), "nothing was appended")
}

// The seat and rig reads answer as the CLI's `rig ps` and `seat show`, at
// the head and in the past, with the CLI's errors.
func TestServer_Rigs(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	env := openEnv(t, dir, 2)
	st := env.Store
	before := int64(0)
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error { before = r.Head; return nil }))
	for _, a := range []string{"build@portal", "review@portal"} {
		_, err := commands.DeclareSeat(context.Background(), env, commands.SeatRequest{Address: a, Runtime: "generic", Command: "agent {context_file}", Work: "CART-1"})
		require.NoError(t, err)
	}
	require.NoError(t, st.Close())
	cs := connect(t, dir)

	ps := ok(t, cs, "awr_rig_ps", map[string]any{"rig": "portal"})
	seats := ps["seats"].([]any)
	require.Len(t, seats, 2)
	for _, s := range seats {
		require.Equal(t, "stopped", s.(map[string]any)["state"])
		require.Equal(t, false, s.(map[string]any)["tmux_alive"])
	}
	show := ok(t, cs, "awr_seat_show", map[string]any{"address": "build@portal"})
	require.Equal(t, "stopped", show["state"])
	require.Equal(t, "resume_if_possible", get(show, "seat.policy"))
	require.Empty(t, show["occupants"])

	fails(t, cs, "awr_rig_ps", map[string]any{"rig": "portal", "at": before}, "NotFound")
	fails(t, cs, "awr_rig_ps", map[string]any{"rig": "portal", "at": 9999}, "InvalidInput")
	fails(t, cs, "awr_rig_ps", map[string]any{"rig": "nope"}, "NotFound")
	fails(t, cs, "awr_seat_show", map[string]any{"address": "nobody"}, "InvalidInput")
	fails(t, cs, "awr_seat_show", map[string]any{"address": "x@portal"}, "NotFound")
}

// The rig operations that act answer over MCP with the CLI's refusals,
// before anything is launched or written.
func TestServer_RigRefusals(t *testing.T) {
	t.Parallel()
	dir := initProject(t)
	env := openEnv(t, dir, 3)
	st := env.Store
	declareSeat(t, env, "agent {context_file}", "CART-1")
	require.NoError(t, st.Close())
	cs := connect(t, dir)
	before := rev(t, ok(t, cs, "awr_status", nil))

	fails(t, cs, "awr_rig_up", map[string]any{"rig": "nope"}, "NotFound")
	fails(t, cs, "awr_rig_up", map[string]any{"rig": "portal", "fresh": []string{"x@portal"}}, "InvalidInput")
	fails(t, cs, "awr_rig_up", map[string]any{"rig": "portal", "verify_timeout": "30s"}, "InvalidInput")
	token := "ghp_" + strings.Repeat("q", 36)
	out := fails(t, cs, "awr_rig_down", map[string]any{"rig": "portal", "message": "stop " + token}, "RuleViolation")
	require.NotContains(t, out["message"], token)
	out = fails(t, cs, "awr_rig_send", map[string]any{"seat": "build@portal", "text": "hello"}, "InvalidTransition")
	require.Equal(t, "awr rig up portal", out["hint"])
	fails(t, cs, "awr_rig_send", map[string]any{"seat": "build@portal", "text": "esc \x1b[2J"}, "InvalidInput")
	fails(t, cs, "awr_rig_send", map[string]any{"seat": "build@portal", "text": "use " + token}, "RuleViolation")
	fails(t, cs, "awr_rig_send", map[string]any{"seat": "build@portal"}, "InvalidInput")
	fails(t, cs, "awr_rig_capture", map[string]any{"seat": "build@portal"}, "InvalidTransition")
	fails(t, cs, "awr_rig_capture", map[string]any{"seat": "build@portal", "lines": 2001}, "InvalidInput")
	fails(t, cs, "awr_rig_snapshot", map[string]any{"rig": "portal"}, "InvalidTransition")
	require.Equal(t, before, rev(t, ok(t, cs, "awr_status", nil)), "nothing was appended")
}
