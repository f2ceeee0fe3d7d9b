package project_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// hookAnswer delivers a recorded Claude payload (fields of set replaced)
// and returns the context and the stop reason it answered with.
func hookAnswer(t *testing.T, dir, name string, set map[string]string, opts project.Options) (ctx, reason string) {
	t.Helper()
	return hostAnswer(t, "claude", dir, name, set, opts)
}

// hostAnswer is hookAnswer for a payload of host's.
func hostAnswer(t *testing.T, host, dir, name string, set map[string]string, opts project.Options) (ctx, reason string) {
	t.Helper()
	res := project.AnswerHook(context.Background(), "", project.HookRequest{Client: host}, bytes.NewReader(fixture(t, host, name, dir, set)), opts)
	require.Empty(t, res.Log, "no error answering %s", name)
	if len(res.Stdout) == 0 {
		return "", ""
	}
	var out struct {
		Specific struct {
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	require.NoError(t, json.Unmarshal(res.Stdout, &out), "%s", res.Stdout)
	return out.Specific.Context, out.Reason
}

// boundConversation is a checkout project with a session on CART-1 that
// holds its claim and the fixtures' Claude conversation bound to it, on a
// clock that moves 10 s at each reading.
func boundConversation(t *testing.T) (dir string, p *project.Project, opts project.Options, session, conversation string) {
	t.Helper()
	return boundConversationOf(t, "claude")
}

// boundConversationOf is boundConversation with the conversation of the
// fixtures' session_start_startup of host.
func boundConversationOf(t *testing.T, host string) (dir string, p *project.Project, opts project.Options, session, conversation string) {
	t.Helper()
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	opts = project.Options{Now: func() time.Time { clock = clock.Add(10 * time.Second); return clock }}
	dir, p, session, conversation = boundTo(t, host, "session_start_startup", opts)
	return dir, p, opts, session, conversation
}

// boundTo is a checkout project opened with opts, with a session on
// CART-1 that holds its claim and the conversation of the fixtures'
// payload name of host bound to it.
func boundTo(t *testing.T, host, name string, opts project.Options) (dir string, p *project.Project, session, conversation string) {
	t.Helper()
	dir, p = checkoutProject(t, opts)
	start, err := p.SessionStart(context.Background(), project.SessionStartRequest{Work: "CART-1", Agent: "builder", Claim: true})
	require.NoError(t, err)
	session = start.Session.ID
	conversation = fixtureField(t, host, name, "session_id")
	_, err = p.ClientBind(context.Background(), project.ClientBindRequest{Client: host, ExternalSession: conversation, Work: "CART-1", SessionID: session})
	require.NoError(t, err)
	return dir, p, session, conversation
}

// TestHook_ResumeSendsOnlyWhatChanged: a resumed conversation still holds
// the packet it was given, so a resume sends nothing when the work did not
// move, and only the changed lines (a packet update) when it did; a
// compaction drops the packet, so the next start sends it whole.
func TestHook_ResumeSendsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p, opts, session, conversation := boundConversation(t)

	text, _ := hookAnswer(t, dir, "session_start_startup", nil, opts)
	require.Contains(t, text, "# awr: continuing session "+session)
	require.Contains(t, text, "This conversation (claude:"+conversation+")")

	for range 3 {
		text, _ = hookAnswer(t, dir, "session_start_resume", nil, opts)
		require.Empty(t, text, "the conversation holds the packet: nothing again")
	}

	_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "builder", Digest: "cart writes go through CartStore.Save", NextAction: "run the cart handler tests"})
	require.NoError(t, err)
	text, _ = hookAnswer(t, dir, "session_start_resume", nil, opts)
	require.Contains(t, text, "# awr: packet update for session "+session)
	require.Contains(t, text, "run the cart handler tests")
	require.NotContains(t, text, "# awr: continuing session", "an update, not a second packet")
	require.NotContains(t, text, "## Acceptance criteria", "unchanged sections are not sent again")

	text, _ = hookAnswer(t, dir, "session_start_resume", nil, opts)
	require.Empty(t, text, "the update is held too")

	// Compaction: the packet is gone from the conversation.
	_, _ = hookAnswer(t, dir, "pre_compact_auto", nil, opts)
	text, _ = hookAnswer(t, dir, "session_start_compact", nil, opts)
	require.Contains(t, text, "# awr: continuing session "+session)
	require.Contains(t, text, "run the cart handler tests")
}

// TestHook_StopOnlyForUnsavedWork: Claude's stop is asked to continue
// only when the session's repository differs from what its latest
// checkpoint (or its start) recorded, once, with the reason in one line.
func TestHook_StopOnlyForUnsavedWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	opts := project.Options{Now: func() time.Time { clock = clock.Add(10 * time.Second); return clock }}
	// A git work tree first, so that init keeps awr's runtime files out
	// of it (.gitignore), as in a team's repository.
	dir := t.TempDir()
	_, err := fixtures.CopyProject("checkout", dir)
	require.NoError(t, err)
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	git("init", "-q")
	p, err := project.Open(ctx, dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	_, err = p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	git("add", "-A")
	git("commit", "-q", "-m", "checkout")
	start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "builder", Claim: true})
	require.NoError(t, err)
	session := start.Session.ID
	conversation := fixtureField(t, "claude", "stop", "session_id")
	_, err = p.ClientBind(ctx, project.ClientBindRequest{Client: "claude", ExternalSession: conversation, Work: "CART-1", SessionID: session})
	require.NoError(t, err)
	turn := func(n string) map[string]string {
		return map[string]string{"prompt_id": "33333333-3333-4333-8333-00000000000" + n}
	}

	_, reason := hookAnswer(t, dir, "stop", turn("1"), opts)
	require.Empty(t, reason, "nothing unsaved: the turn ends as the model ended it")

	// awr's own hook settings, written after the session started, are no
	// work of it.
	_, err = p.ClientInstall(ctx, project.ClientInstallRequest{Client: "claude", Accept: true, Force: true, Command: "awr client hook --client claude"})
	require.NoError(t, err)
	_, reason = hookAnswer(t, dir, "stop", turn("5"), opts)
	require.Empty(t, reason, ".claude/settings.json written by client install is not unsaved work")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "cart_store.go"), []byte("package cart\n"), 0o644))
	_, reason = hookAnswer(t, dir, "stop", turn("2"), opts)
	require.Contains(t, reason, "1 file changed since the session started (cart_store.go)")
	require.Contains(t, reason, "awr session checkpoint --session "+session)
	require.NotContains(t, reason, "\n")
	_, reason = hookAnswer(t, dir, "stop_active", turn("2"), opts)
	require.Empty(t, reason, "once per stop")

	cp, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "builder", Digest: "wrote the cart store", NextAction: "test it"})
	require.NoError(t, err)
	var changed []string
	for _, f := range cp.Checkpoint.Repo.FilesChanged {
		changed = append(changed, f.Path)
	}
	require.Equal(t, []string{"cart_store.go"}, changed, "the checkpoint records the work's change, not awr's settings")
	_, reason = hookAnswer(t, dir, "stop", turn("3"), opts)
	require.Empty(t, reason, "saved by the checkpoint")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "cart_store.go"), []byte("package cart\n\n// more\n"), 0o644))
	_, reason = hookAnswer(t, dir, "stop", turn("4"), opts)
	require.Contains(t, reason, "since checkpoint ")
}

// TestHook_ForkFoundAtItsFirstStop: a fork whose start named no original
// (its transcript was not written yet, no --resume on the host's command
// line) is bound at its first stop, from the texts awr gave the original
// that its transcript copied, as a fork; the original is untouched.
func TestHook_ForkFoundAtItsFirstStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p, opts, session, original := boundConversation(t)

	fork := "44444444-4444-4444-8444-444444444444"
	transcript := filepath.Join(t.TempDir(), fork+".jsonl")
	text, _ := hookAnswer(t, dir, "session_start_fork", map[string]string{"session_id": fork, "transcript_path": transcript}, opts)
	require.Contains(t, text, "is not bound to an awr session yet", "nothing to go by at the start")

	// The host writes the fork's transcript: the original's lines, awr's
	// packet among them, under the new id.
	line, err := json.Marshal(map[string]any{"sessionId": fork, "attachment": map[string]any{"type": "hook_additional_context",
		"content": []string{"# awr: continuing session " + session + "\n\nThis conversation (claude:" + original + ") is bound to awr session " + session + "."}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(transcript, append(line, '\n'), 0o600))
	_, _ = hookAnswer(t, dir, "stop", map[string]string{"session_id": fork, "transcript_path": transcript}, opts)

	show, err := p.ClientShow(ctx, project.ClientShowRequest{Client: "claude", ExternalSession: fork})
	require.NoError(t, err)
	require.Equal(t, session, show.Binding.SessionID, "the fork is bound where the original is")
	orig, err := p.ClientShow(ctx, project.ClientShowRequest{Client: "claude", ExternalSession: original})
	require.NoError(t, err)
	require.Equal(t, session, orig.Binding.SessionID)
	events := eventsBetween(t, p, 0)
	require.Contains(t, strings.Join(events, "\n"), "client_bound client/claude:"+fork+" continues_from=claude:"+original)
}

// TestHook_OpenCodeForkKeepsTheLineage: an OpenCode fork (`opencode run
// --session ID --fork`) is a new session holding copies of its original's
// messages, awr's texts among them, which awr's plugin sends
// (fork_context). The fork is bound where the original is, as a fork of
// it, in an event of its own; the original's binding is untouched; the
// fork holds the original's packet, so it gets nothing, or an update once
// the work moved, never a second packet; a fork whose copies hold only the
// orientation (the original was bound after it) gets the packet whole.
func TestHook_OpenCodeForkKeepsTheLineage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	opts := project.Options{Now: func() time.Time { clock = clock.Add(10 * time.Second); return clock }}
	dir, p := checkoutProject(t, opts)
	original := fixtureField(t, "opencode", "session_start_resume", "session_id")
	orientation, _ := hostAnswer(t, "opencode", dir, "session_start_startup", nil, opts)
	require.Contains(t, orientation, "This conversation (opencode:"+original+") is not bound")
	start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "builder", Claim: true})
	require.NoError(t, err)
	session := start.Session.ID
	_, err = p.ClientBind(ctx, project.ClientBindRequest{Client: "opencode", ExternalSession: original, Work: "CART-1", SessionID: session})
	require.NoError(t, err)
	packet, _ := hostAnswer(t, "opencode", dir, "session_start_resume", nil, opts)
	require.Contains(t, packet, "# awr: continuing session "+session)

	fork := fixtureField(t, "opencode", "session_start_fork", "session_id")
	before := head(t, p)
	text, _ := hostAnswer(t, "opencode", dir, "session_start_fork", map[string]string{"fork_context": orientation + "\n" + packet}, opts)
	require.Empty(t, text, "the fork holds the original's packet: nothing more")
	show, err := p.ClientShow(ctx, project.ClientShowRequest{Client: "opencode", ExternalSession: fork})
	require.NoError(t, err)
	require.Equal(t, session, show.Binding.SessionID, "the fork is bound where the original is")
	orig, err := p.ClientShow(ctx, project.ClientShowRequest{Client: "opencode", ExternalSession: original})
	require.NoError(t, err)
	require.Equal(t, session, orig.Binding.SessionID, "the original's binding is untouched")
	events := strings.Join(eventsBetween(t, p, before), "\n")
	require.Contains(t, events, "client_bound client/opencode:"+fork+" continues_from=opencode:"+original)
	require.NotContains(t, events, "client/opencode:"+original, "nothing recorded on the original")
	res, err := p.Log(ctx, project.LogRequest{Since: before, Kind: "client_bound"})
	require.NoError(t, err)
	require.Len(t, res.Events, 1)
	require.Contains(t, string(res.Events[0].Payload), `"fork":true`)

	// The work moves on; another fork of the original holds the old
	// packet: an update.
	_, err = p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "builder", Digest: "stored carts", NextAction: "make carts expire"})
	require.NoError(t, err)
	text, _ = hostAnswer(t, "opencode", dir, "session_start_fork", map[string]string{"session_id": "ses_2c3d4e5f6ffeSeCoNdFoRkAbCd", "fork_context": packet}, opts)
	require.Contains(t, text, "# awr: packet update for session "+session)
	require.Contains(t, text, "make carts expire")
	require.NotContains(t, text, "# awr: continuing session ")

	// A fork whose copies hold only the orientation: the packet whole.
	text, _ = hostAnswer(t, "opencode", dir, "session_start_fork", map[string]string{"session_id": "ses_3d4e5f6a7ffeThIrDfOrKaBcDe", "fork_context": orientation}, opts)
	require.Contains(t, text, "# awr: continuing session "+session+" on CART-1 (SessionStart fork, packet ")
}

// TestHook_GeminiPromptReadsTheRecording: Gemini CLI fires PreCompress
// before every request, compression or not, so its BeforeAgent goes by
// what its chat recording says the conversation holds: nothing more while
// it holds the packet (after a PreCompress that compressed nothing), the
// packet whole once a compression set its messages without it.
func TestHook_GeminiPromptReadsTheRecording(t *testing.T) {
	t.Parallel()
	dir, _, opts, session, _ := boundConversationOf(t, "gemini")
	recording := filepath.Join(t.TempDir(), "session.jsonl")
	set := map[string]string{"transcript_path": recording}
	packet, _ := hostAnswer(t, "gemini", dir, "session_start_startup", set, opts)
	require.Contains(t, packet, "# awr: continuing session "+session)
	turn, err := json.Marshal(map[string]any{"id": "m1", "type": "user", "content": []map[string]string{{"text": "go\n<hook_context>" + packet + "</hook_context>"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(recording, append([]byte(`{"$set":{"messages":[]}}`+"\n"), append(turn, '\n')...), 0o600))

	// A PreCompress that compressed nothing: the next prompt gets nothing.
	_, _ = hostAnswer(t, "gemini", dir, "pre_compress_auto", set, opts)
	text, _ := hostAnswer(t, "gemini", dir, "before_agent", set, opts)
	require.Empty(t, text, "the conversation holds its packet")

	// A compression set the messages whole, without the packet.
	f, err := os.OpenFile(recording, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"$set":{"messages":[{"id":"m9","type":"user","content":[{"text":"<state_snapshot>summary</state_snapshot>"}]}]}}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, _ = hostAnswer(t, "gemini", dir, "pre_compress_auto", map[string]string{"transcript_path": recording, "timestamp": "2026-09-01T09:40:00.000Z"}, opts)
	text, _ = hostAnswer(t, "gemini", dir, "before_agent", map[string]string{"transcript_path": recording, "timestamp": "2026-09-01T09:41:00.000Z"}, opts)
	// The header names the moment: the hook, and a start's source where
	// there is one (a BeforeAgent has none).
	require.Contains(t, text, "# awr: continuing session "+session+" on CART-1 (BeforeAgent, packet ")
}

// TestHook_GeminiKeptPacketGoesWithThePrompt: a resumed Gemini CLI
// conversation drops every user turn that begins with a hook's context,
// which is where a SessionStart's goes, but keeps a turn whose prompt
// comes first, with what a BeforeAgent appended to it; and its /clear
// sends none of its start's context. So a Gemini resume that keeps no
// packet gets it whole at its start, as before; a clear's start gives
// nothing (recorded as deferred) and its first prompt gets the packet
// whole; a resume of a conversation that keeps that prompt's packet is
// brought up to date against it (nothing, or an update), and its prompt
// reads the chat recording and gives the packet whole when a compression
// dropped it. Before, each Gemini resume gave the packet whole at its
// start, and the cleared conversation, resumed, held two.
func TestHook_GeminiKeptPacketGoesWithThePrompt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p, opts, session, conversation := boundConversationOf(t, "gemini")
	recording := filepath.Join(t.TempDir(), "session.jsonl")
	cleared := fixtureField(t, "gemini", "session_start_clear", "session_id")
	set := func(conv, at string) map[string]string {
		return map[string]string{"session_id": conv, "transcript_path": recording, "timestamp": at}
	}
	// The resumed history as Gemini sets it, with the user turns given.
	write := func(turns ...string) {
		msgs := []map[string]any{{"id": "env", "type": "user", "content": []map[string]string{{"text": "<session_context>the environment</session_context>"}}}}
		for i, text := range turns {
			msgs = append(msgs, map[string]any{"id": fmt.Sprint("m", i), "type": "user", "content": []map[string]string{{"text": text}}})
		}
		line, err := json.Marshal(map[string]any{"$set": map[string]any{"messages": msgs}})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(recording, append(line, '\n'), 0o600))
	}
	answers := func(conv string) []string {
		res, err := p.Log(ctx, project.LogRequest{Kind: "host_event_recorded"})
		require.NoError(t, err)
		var out []string
		for _, e := range res.Events {
			var pl events.HostEventRecorded
			require.NoError(t, json.Unmarshal(e.Payload, &pl))
			if pl.ExternalSession == "gemini:"+conv {
				out = append(out, pl.Event+"/"+pl.Source+":"+pl.Answer)
			}
		}
		return out
	}

	// A resume that keeps no packet: the packet whole at its start.
	write()
	text, _ := hostAnswer(t, "gemini", dir, "session_start_resume", set(conversation, "2026-11-02T09:00:00.000Z"), opts)
	require.Contains(t, text, "# awr: continuing session "+session+" on CART-1 (SessionStart resume")
	text, _ = hostAnswer(t, "gemini", dir, "before_agent", map[string]string{"session_id": conversation, "transcript_path": recording, "timestamp": "2026-11-02T09:00:01.000Z", "prompt": "<hook_context>" + text + "</hook_context>\n\ngo on"}, opts)
	require.Empty(t, text, "the prompt carries the start's packet")

	// /clear: Gemini never sends the new conversation's start context:
	// nothing there, the packet whole with its first prompt.
	_, _ = hostAnswer(t, "gemini", dir, "session_end_clear", set(conversation, "2026-11-02T09:05:00.000Z"), opts)
	text, _ = hostAnswer(t, "gemini", dir, "session_start_clear", set(cleared, "2026-11-02T09:05:01.000Z"), opts)
	require.Empty(t, text, "a clear's start gives nothing: Gemini never sends it")
	require.Equal(t, []string{"session_start/clear:deferred"}, answers(cleared))
	packet, _ := hostAnswer(t, "gemini", dir, "before_agent", set(cleared, "2026-11-02T09:05:02.000Z"), opts)
	require.Contains(t, packet, "# awr: continuing session "+session+" on CART-1 (BeforeAgent, packet ", "the first prompt after the clear gets the packet whole")

	// That conversation resumed: its history keeps the prompt's turn,
	// the packet appended to it (as Gemini appends a BeforeAgent's):
	// nothing at its start, nothing with its prompt.
	write("Run the cart store tests\n\n<hook_context>" + packet + "</hook_context>")
	text, _ = hostAnswer(t, "gemini", dir, "session_start_resume", set(cleared, "2026-11-02T09:10:00.000Z"), opts)
	require.Empty(t, text, "the resume keeps the prompt's packet: its start gives no second copy")
	got := answers(cleared)
	require.Equal(t, "session_start/resume:held", got[len(got)-1])
	text, _ = hostAnswer(t, "gemini", dir, "before_agent", set(cleared, "2026-11-02T09:10:01.000Z"), opts)
	require.Empty(t, text, "nor does its prompt")

	// The work moves: the next resume's start gives an update (in the
	// turn's own message, which the next resume drops), and its prompt,
	// which carries it, nothing more.
	_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "builder", Digest: "stored carts", NextAction: "make carts expire"})
	require.NoError(t, err)
	update, _ := hostAnswer(t, "gemini", dir, "session_start_resume", set(cleared, "2026-11-02T09:15:00.000Z"), opts)
	require.Contains(t, update, "# awr: packet update for session "+session)
	require.Contains(t, update, "make carts expire")
	prompt := set(cleared, "2026-11-02T09:15:01.000Z")
	prompt["prompt"] = "<hook_context>" + update + "</hook_context>\n\ngo on"
	text, _ = hostAnswer(t, "gemini", dir, "before_agent", prompt, opts)
	require.Empty(t, text, "the prompt carries the update, the recording the packet")

	// A compression summarized the packet's turn away: the start, which
	// cannot read the resumed history, gives the update again; its
	// prompt finds no packet in the recording, only that update: the
	// packet whole.
	write("<state_snapshot>a summary</state_snapshot>")
	update, _ = hostAnswer(t, "gemini", dir, "session_start_resume", set(cleared, "2026-11-02T09:20:00.000Z"), opts)
	require.Contains(t, update, "# awr: packet update for session "+session)
	prompt = set(cleared, "2026-11-02T09:20:01.000Z")
	prompt["prompt"] = "<hook_context>" + update + "</hook_context>\n\ngo on"
	text, _ = hostAnswer(t, "gemini", dir, "before_agent", prompt, opts)
	require.Contains(t, text, "# awr: continuing session "+session)
	require.Contains(t, text, "make carts expire")

	// An update kept without the packet it updates (a prompt's, in an
	// interactive session) holds nothing either.
	write("<state_snapshot>a summary</state_snapshot>", "go on\n\n<hook_context>"+update+"</hook_context>")
	_, _ = hostAnswer(t, "gemini", dir, "pre_compress_auto", set(cleared, "2026-11-02T09:25:00.000Z"), opts)
	text, _ = hostAnswer(t, "gemini", dir, "before_agent", set(cleared, "2026-11-02T09:25:01.000Z"), opts)
	require.Contains(t, text, "# awr: continuing session "+session)
}

// TestHook_ResumeGoesByTheTranscript: a host killed mid-turn may never
// write the turn that carried awr's packet update; the next resume reads
// the host's transcript, finds the update's mark missing, and gives the
// update again (against the packet the transcript does hold). A
// transcript holding no packet of awr's gets the packet whole; with no
// transcript to read, the record is trusted.
func TestHook_ResumeGoesByTheTranscript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, p, opts, session, conversation := boundConversation(t)

	// The transcript as Claude Code keeps it: a JSON line per entry,
	// awr's text JSON-escaped inside it.
	transcript := filepath.Join(t.TempDir(), conversation+".jsonl")
	keep := func(text string) {
		t.Helper()
		line, err := json.Marshal(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "hook_additional_context", "content": []string{text}}})
		require.NoError(t, err)
		f, err := os.OpenFile(transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		require.NoError(t, err)
		_, err = f.Write(append(line, '\n'))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	with := map[string]string{"transcript_path": transcript}

	text, _ := hookAnswer(t, dir, "session_start_startup", with, opts)
	require.Contains(t, text, "# awr: continuing session "+session)
	keep(text)
	text, _ = hookAnswer(t, dir, "session_start_resume", with, opts)
	require.Empty(t, text, "the transcript holds the packet: nothing again")

	_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "builder", Digest: "cart writes go through CartStore.Save", NextAction: "run the cart handler tests"})
	require.NoError(t, err)
	text, _ = hookAnswer(t, dir, "session_start_resume", with, opts)
	require.Contains(t, text, "# awr: packet update for session "+session)
	// The host is killed before it writes the turn: the update never
	// reaches the transcript.
	text, _ = hookAnswer(t, dir, "session_start_resume", with, opts)
	require.Contains(t, text, "# awr: packet update for session "+session, "the lost update is given again")
	require.Contains(t, text, "run the cart handler tests")
	require.NotContains(t, text, "# awr: continuing session", "an update of the packet the transcript holds, not a second packet")
	keep(text)
	text, _ = hookAnswer(t, dir, "session_start_resume", with, opts)
	require.Empty(t, text, "the transcript holds the update now")

	// A transcript with no packet of awr's in it (rewritten, or cut to
	// its last 8 MiB): the packet whole.
	require.NoError(t, os.WriteFile(transcript, []byte(`{"type":"user"}`+"\n"), 0o600))
	text, _ = hookAnswer(t, dir, "session_start_resume", with, opts)
	require.Contains(t, text, "# awr: continuing session "+session)
	require.Contains(t, text, "run the cart handler tests")

	// No transcript to read: the record is trusted, nothing again.
	text, _ = hookAnswer(t, dir, "session_start_resume", map[string]string{"transcript_path": filepath.Join(t.TempDir(), "gone.jsonl")}, opts)
	require.Empty(t, text, "the packet just given is held, as recorded")
}
