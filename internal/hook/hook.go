package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/hosts"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/secret"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/internal/workqueue"
)

// Request is what the host's command line says of one hook: the host
// (Client: claude, codex, gemini or opencode) and NoBlock, never ask the
// host to continue at a stop. The door declares it for the CLI
// (project.HookRequest).
type Request struct {
	Client  string
	NoBlock bool
}

// Result is what the hook answers: Stdout is written as is, the exit
// status is always 0, and Log holds the lines written to .awr/hooks.log.
type Result struct {
	Stdout []byte
	Dir    string
	Log    []string
	now    func() time.Time // the clock of the lines written: the caller's
}

// LogLimit bounds .awr/hooks.log: beyond it the file is moved to
// hooks.log.1 and a new one started.
const LogLimit = 1 << 20

// packetBudgets are the token budgets a hook tries for a packet, smallest
// first: 2,000 tokens is about 8,000 characters, inside every host's
// limit with room for the instructions.
var packetBudgets = []int{2000, 5000}

// Door is what answering a hook needs of the project it reached. The
// door, internal/project, implements it: every read and write goes
// through it, at the log's head.
type Door interface {
	// Read runs fn on a snapshot of the log at its head: rev is that
	// revision, now the clock a reader there sees.
	Read(ctx context.Context, fn func(r *events.Reader, rev, now int64) error) error
	// Now is the project's clock.
	Now() time.Time
	// Record is commands.RecordHostEvent.
	Record(ctx context.Context, req commands.HostEventRequest) (*commands.HostEventResult, error)
	// Bind is commands.BindClient.
	Bind(ctx context.Context, req commands.BindRequest) (*commands.BindResult, error)
	// Packet compiles session's context packet within budget tokens,
	// appending nothing (the door's ContextPacket).
	Packet(ctx context.Context, session string, budget int) (*commands.CompileResult, error)
	// Status is what the orientation of an unbound conversation lists.
	Status(ctx context.Context) (*Status, error)
	// Unsaved compares session's repository now with the one its latest
	// checkpoint recorded (or, before any checkpoint, its start): known
	// is false when either cannot be read; files names what changed, at
	// most a few, with credential-like names withheld.
	Unsaved(ctx context.Context, session string) (known, changed bool, since string, files []string)
}

// Status is the part of awr status an orientation shows.
type Status struct {
	ProjectName     string
	ProjectRevision int64
	Queues          workqueue.Queues
}

// Opener opens the door of the project in dir; closing it is the
// function it returns.
type Opener func(ctx context.Context, dir string) (Door, func(), error)

// answerer answers one hook event through its project's door.
type answerer struct{ door Door }

// Answer answers one hook event of host req.Client read from payload:
// it finds the project from the payload's cwd (find: the nearest directory up
// that holds .awr/awr.db; the hook's own working directory when the
// payload names none that exists) unless projectDir is set, records what the log
// keeps of the event, and renders the answer in the host's own format. It
// never fails its host: a malformed payload, an unknown event, no project
// or any error gives the host's empty answer and a line in .awr/hooks.log
// (when there is a project to keep it): the diagnostic awr doctor counts
// per host. The lines are dated by now (nil: time.Now).
func Answer(ctx context.Context, projectDir string, req Request, payload io.Reader, now func() time.Time, find func(string) string, open Opener) *Result {
	res := &Result{now: now}
	if res.now == nil {
		res.now = time.Now
	}
	h, err := hosts.ParseHost(req.Client)
	if err != nil {
		res.Stdout = hosts.Empty(hosts.Claude).Stdout
		return res
	}
	empty := hosts.Empty(h).Stdout
	res.Stdout = empty
	var e hosts.Event
	defer func() {
		// Not even a bug of awr's may break the host.
		if r := recover(); r != nil {
			res.Stdout = empty
			res.log(h, e, fault.New(fault.Internal, "hook: %v", r))
		}
	}()
	e, err = hosts.Read(h, payload)
	dir := projectDir
	if dir == "" && err == nil {
		dir = find(e.Cwd)
	}
	if fi, serr := os.Stat(e.Cwd); dir == "" && projectDir == "" && (err != nil || serr != nil || !fi.IsDir()) {
		// No usable cwd in the payload: the hook's own working
		// directory, where the host runs it.
		if cwd, cerr := os.Getwd(); cerr == nil {
			dir = find(cwd)
		}
	}
	res.Dir = dir
	if err != nil {
		res.log(h, e, err)
		return res
	}
	if dir == "" {
		return res
	}
	door, closeDoor, err := open(ctx, dir)
	if err != nil {
		res.log(h, e, err)
		return res
	}
	defer closeDoor()
	a := &answerer{door: door}
	res.ran(h, e)
	ans, err := a.hook(ctx, e, req)
	if err != nil {
		res.log(h, e, err)
		return res
	}
	out := hosts.Render(e, ans)
	res.Stdout = out.Stdout
	if len(res.Stdout) == 0 {
		res.Stdout = empty
	}
	return res
}

// log appends one line naming the host, the event and err to
// .awr/hooks.log: one inert line, a secret in it withheld (the
// conversation id is the host's word, and a refusal may be for it).
func (r *Result) log(h hosts.Host, e hosts.Event, err error) {
	fe := fault.ObjectOf(err)
	line := fmt.Sprintf("%s %s %s conversation=%q: %s (%s)", r.now().UTC().Format(time.RFC3339), h, workcontext.SafeLine(orUnknown(e.HostEvent)), e.ConversationID, oneLine(fe.Message), fe.Code)
	line = workcontext.SafeLine(secret.Redact(line))
	r.Log = append(r.Log, line)
	if r.Dir == "" {
		return
	}
	appendLogLine(filepath.Join(r.Dir, ".awr", "hooks.log"), line)
}

// appendLogLine appends line to the log file at path, first moving a
// file past LogLimit to path.1; a failure to write is no failure of the
// hook. Never through a symbolic link or to a file of several names: a
// hook runs on a host's word, in a directory an agent can write.
func appendLogLine(path, line string) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > LogLimit {
		os.Rename(path, path+".1")
	}
	f, err := pathcheck.Append(path, 0o600, true)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

// RanLog is the file, under a project's .awr, where each hook that reached
// the project appends one line: when (RFC 3339, UTC), the host, awr's name
// of the event. awr doctor reads it to say when each host's hooks last
// ran, bound conversation or not (the event log records the hooks of
// bound conversations only).
const RanLog = "hooks.log.ran"

// ran appends the line of RanLog for event e of host h; a failure to
// write it is no failure of the hook.
func (r *Result) ran(h hosts.Host, e hosts.Event) {
	appendLogLine(filepath.Join(r.Dir, ".awr", RanLog), fmt.Sprintf("%s %s %s", r.now().UTC().Format(time.RFC3339), h, e.Name))
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown event)"
	}
	return s
}

// moment names the moment of e in a packet's first line: the host's
// name of its event and, for a start, its source ("SessionStart
// resume"); a prompt's event has none ("BeforeAgent").
func moment(e hosts.Event) string {
	if e.Source == "" {
		return e.HostEvent
	}
	return e.HostEvent + " " + e.Source
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// hook decides the answer to e and records what the log keeps of it.
func (a *answerer) hook(ctx context.Context, e hosts.Event, req Request) (hosts.Answer, error) {
	client := string(e.Host)
	key, err := commands.ConversationKey("hook", client, e.ConversationID)
	if err != nil {
		return hosts.Answer{}, err
	}
	st, err := a.conversation(ctx, key)
	if err != nil {
		return hosts.Answer{}, err
	}
	rec := commands.HostEventRequest{
		Client: client, Key: key, Event: string(e.Name), HostEvent: e.HostEvent,
		Source: e.Source, Trigger: e.Trigger, Reason: e.Reason, StopHookActive: e.StopHookActive,
		Delivery: e.Key(), Occurrence: e.TurnID != "" || e.Timestamp != "",
		// Only Claude Code is asked to continue a turn: the other hosts
		// can be, but awr keeps to what their users expect of a stop.
		NoBlock: req.NoBlock || e.Host != hosts.Claude,
		Reminds: hosts.CapabilityOf(e.Host, e.Name).Reminder,
		Process: hostProcess(),
	}
	switch e.Name {
	case hosts.SessionStart:
		return a.hookStart(ctx, st, &rec, e)
	case hosts.BeforeAgent:
		if st.Binding == nil {
			return hosts.Answer{}, nil
		}
		if e.Host == hosts.Gemini && st.Stale == nil {
			return a.geminiPrompt(ctx, st, rec, e)
		}
		// Where a host has no start after a compaction, the packet goes
		// back with the next prompt.
		if !st.CompactionPending {
			return hosts.Answer{}, nil
		}
		return a.injectPacket(ctx, st, rec, client, e, false)
	case hosts.PreCompact:
		res, err := a.door.Record(ctx, rec)
		if err != nil || !res.Remind || !rec.Reminds {
			return hosts.Answer{}, err
		}
		return hosts.Answer{Reminder: hosts.OneLine(fmt.Sprintf("awr: no checkpoint since %s's last packet; run awr session checkpoint --session %s --agent A --digest D --next-action N", res.SessionID, res.SessionID))}, nil
	case hosts.Stop, hosts.SessionEnd:
		return a.hookStop(ctx, st, &rec, e)
	}
	return hosts.Answer{}, nil
}

// geminiPrompt answers Gemini CLI's BeforeAgent, before each prompt. Gemini
// fires its PreCompress before every request, before its own check of the
// window, and no hook follows a compression; a resumed conversation drops
// the context a SessionStart gave but keeps a prompt's, and a clear never
// sends a start's (hosts.StartGoesWithPrompt: such a start gives nothing
// and leaves the packet to this prompt). So what the conversation holds is read, not
// inferred: in its chat recording (the messages it holds now) and in the
// prompt being sent. A conversation that holds the latest packet given
// gets nothing, unless the prompt follows such a start, which brings the
// packet up to date as every start does (nothing, or an update); one that
// holds an older one, an update; one that holds none, the packet whole.
// With no recording to read, the packet goes back after such a start or
// a PreCompress, as for the other hosts.
func (a *answerer) geminiPrompt(ctx context.Context, st *commands.ConversationState, rec commands.HostEventRequest, e hosts.Event) (hosts.Answer, error) {
	given, err := a.given(ctx, rec.Key)
	if err != nil {
		return hosts.Answer{}, err
	}
	marks, whole := make([]string, len(given)), make([]string, len(given))
	for i, d := range given {
		marks[i] = hosts.PacketMark(d.ContextHash)
		if d.Answer == "context" {
			whole[i] = marks[i]
		}
	}
	i, read := hosts.RecordingHolds(e.TranscriptPath, e.Prompt, marks)
	if j, _ := hosts.RecordingHolds(e.TranscriptPath, e.Prompt, whole); read && j < 0 {
		// Updates without the packet they update (a compression
		// summarized its turn away, and kept a later turn's update):
		// the conversation holds no packet.
		i = -1
	}
	switch {
	case !read && !st.CompactionPending && !st.StartPending:
		return hosts.Answer{}, nil
	case !read:
		return a.injectPacket(ctx, st, rec, string(e.Host), e, false)
	case i == 0 && !st.StartPending:
		return hosts.Answer{}, nil
	case i >= 0:
		st.Held = given[i:]
	default:
		st.Held = nil
	}
	return a.injectPacket(ctx, st, rec, string(e.Host), e, true)
}

// continueFrom binds st, a conversation with no binding, where the first
// of froms that is bound and followed is (rec records it as continuing
// that one, a fork when fork says so); st is unchanged when none is.
func (a *answerer) continueFrom(ctx context.Context, st **commands.ConversationState, rec *commands.HostEventRequest, froms []string, fork bool) error {
	for _, from := range froms {
		old, err := a.conversation(ctx, from)
		if err != nil {
			return err
		}
		if old.Binding != nil && old.Stale == nil && old.Follow == old.Binding.SessionID {
			*st, rec.ContinuesFrom, rec.Fork = old, from, fork
			return nil
		}
	}
	return nil
}

// hookStart answers a SessionStart: a bound conversation (or one that
// continues a bound one) gets its packet, any other the orientation.
func (a *answerer) hookStart(ctx context.Context, st *commands.ConversationState, rec *commands.HostEventRequest, e hosts.Event) (hosts.Answer, error) {
	client := string(e.Host)
	if st.Binding == nil && e.Source == "fork" {
		// A copy of a conversation under a new id (claude
		// --fork-session, opencode run --session ID --fork): Claude's
		// command line names the original, and so do the texts awr gave
		// it, in the fork's transcript once written (Claude) or in the
		// copied messages awr's OpenCode plugin sends. The fork is bound where the original is, as a
		// fork of it; the original goes on untouched.
		if err := a.continueFrom(ctx, &st, rec, hosts.ForkSources(e, rec.Key), true); err != nil {
			return hosts.Answer{}, err
		}
	}
	if st.Binding == nil && (e.Source == "clear" || e.Source == "resume" || e.Source == "fork") {
		// A new id for a conversation the host just ended to clear or
		// switch it: this one continues it, bound where it was.
		from, err := a.pendingContinuation(ctx, client)
		if err != nil {
			return hosts.Answer{}, err
		}
		if from != "" {
			if err := a.continueFrom(ctx, &st, rec, []string{from}, false); err != nil {
				return hosts.Answer{}, err
			}
		}
	}
	if st.Binding == nil && hosts.ClearEndsSilently(e.Host, e.Source) {
		// A thread cleared in Codex's TUI: no hook ended it, and the new
		// one names none. The same host process ran the cleared
		// thread's hooks: the new thread continues the one conversation
		// whose latest hook came from it, never one of another process.
		from, err := a.processContinuation(ctx, client, rec.Process)
		if err != nil {
			return hosts.Answer{}, err
		}
		if from != "" {
			if err := a.continueFrom(ctx, &st, rec, []string{from}, false); err != nil {
				return hosts.Answer{}, err
			}
		}
	}
	if st.Binding == nil {
		text, err := a.orientation(ctx, client, e.ConversationID)
		return hosts.Answer{Context: text}, err
	}
	if st.Stale == nil && hosts.StartGoesWithPrompt(e.Host, e.Source) {
		// A Gemini clear: its start's context is never sent; the
		// packet goes with the next prompt (geminiPrompt).
		rec.Answer = "deferred"
		_, err := a.door.Record(ctx, *rec)
		return hosts.Answer{}, err
	}
	if st.Stale == nil && e.Host == hosts.Gemini && e.Source == "resume" {
		// A resumed Gemini conversation keeps only what a prompt was
		// given (hosts.KeptAtResume): the newest packet given so, if
		// any, is what it holds; this start brings it up to date
		// (nothing, or an update, in the turn's own message, which the
		// next resume drops), and the prompt that follows reads the
		// recording and gives the packet whole if a compression
		// dropped that one. With none, the packet whole.
		given, err := a.given(ctx, rec.Key)
		if err != nil {
			return hosts.Answer{}, err
		}
		st.Held = nil
		for k, d := range given {
			if hosts.KeptAtResume(e.Host, hosts.Name(d.Event)) {
				st.Held = given[k:]
				break
			}
		}
		return a.injectPacket(ctx, st, *rec, client, e, true)
	}
	return a.injectPacket(ctx, st, *rec, client, e, false)
}

// given is commands.Given at the head: the packets conversation key was
// given since it was last cleared, compactions or not, newest first.
func (a *answerer) given(ctx context.Context, key string) ([]commands.Delivery, error) {
	var given []commands.Delivery
	err := a.door.Read(ctx, func(r *events.Reader, rev, _ int64) error {
		var err error
		given, err = commands.Given(r.Conn, rev, key)
		return err
	})
	return given, err
}

// hookStop records a Stop or SessionEnd and, for a Stop of a bound
// conversation whose latest work no checkpoint saved, asks for one.
func (a *answerer) hookStop(ctx context.Context, st *commands.ConversationState, rec *commands.HostEventRequest, e hosts.Event) (hosts.Answer, error) {
	if st.Binding == nil && e.Name == hosts.Stop {
		// A fork whose start said nothing of its original (an
		// interactive fork, `--continue --fork-session`): by its first
		// stop its transcript is written, a copy of the original's with
		// the texts awr gave it.
		if err := a.continueFrom(ctx, &st, rec, hosts.ForkSources(e, rec.Key), true); err != nil {
			return hosts.Answer{}, err
		}
	}
	var since string
	var files []string
	if e.Name == hosts.Stop && st.Binding != nil && !rec.NoBlock && !rec.StopHookActive {
		// Only work that no checkpoint saved is worth a continued turn:
		// a headless run whose work is saved ends as the model ended it.
		rec.RepoKnown, rec.Unsaved, since, files = a.door.Unsaved(ctx, st.Follow)
	}
	res, err := a.door.Record(ctx, *rec)
	if err != nil || !res.Block {
		return hosts.Answer{}, err
	}
	why := "has recorded no checkpoint since the previous stop"
	if rec.RepoKnown {
		why = "has recorded no checkpoint of its latest work: " + hosts.UnsavedSummary(since, files)
	}
	return hosts.Answer{Block: true, Reason: stopReason(res.SessionID, res.Work, res.Agent, why)}, nil
}

// stopReason is what a blocked stop tells the agent to do: the exact
// command, with the session's own agent label.
func stopReason(session, work, agent, why string) string {
	return oneLine(fmt.Sprintf("awr: session %s holds %s and %s. Record one now, then stop: "+
		"awr session checkpoint --session %s --agent %s --digest 'what you did' --next-action 'the exact next step' "+
		"(add --open-loop TEXT for what is still open, --decision TEXT for what was settled).", session, work, why, session, shellwords.Quote(agent)))
}

// conversation reads the state of conversation key at the head.
func (a *answerer) conversation(ctx context.Context, key string) (*commands.ConversationState, error) {
	var st *commands.ConversationState
	err := a.door.Read(ctx, func(r *events.Reader, rev, _ int64) error {
		var err error
		st, err = commands.Conversation(r.Conn, rev, key)
		return err
	})
	return st, err
}

// pendingContinuation is commands.PendingContinuation at the head.
func (a *answerer) pendingContinuation(ctx context.Context, client string) (string, error) {
	var key string
	err := a.door.Read(ctx, func(r *events.Reader, rev, _ int64) error {
		var err error
		key, err = commands.PendingContinuation(r.Conn, rev, client, a.door.Now())
		return err
	})
	return key, err
}

// processContinuation is commands.ProcessContinuation at the head.
func (a *answerer) processContinuation(ctx context.Context, client string, proc *events.HostProcess) (string, error) {
	var key string
	err := a.door.Read(ctx, func(r *events.Reader, rev, _ int64) error {
		var err error
		key, err = commands.ProcessContinuation(r.Conn, rev, client, proc, a.door.Now())
		return err
	})
	return key, err
}

// injectPacket answers a start (or a prompt after a compaction) of a bound
// conversation with its session's packet (an update of st.Held[0], or
// nothing, when known says st.Held is what the conversation holds now), the commands to checkpoint and
// to verify a restatement, fitted to the host's limit, and records that
// the context was given back. A conversation whose session was resumed
// for another gets no packet: it is told who continues.
func (a *answerer) injectPacket(ctx context.Context, st *commands.ConversationState, rec commands.HostEventRequest, client string, e hosts.Event, known bool) (hosts.Answer, error) {
	if st.Stale != nil {
		fe := fault.As(st.Stale)
		text := fmt.Sprintf("# awr: this conversation's session was continued elsewhere\n\n%s\n\nDo not continue the work here. To see the successor's state: %s", workcontext.SafeText(fe.Message), fe.Hint)
		_, err := a.door.Record(ctx, rec)
		return hosts.Answer{Context: text}, err
	}
	session := st.Follow
	if session != st.Binding.SessionID && rec.ContinuesFrom == "" {
		// The resume was made for this conversation: follow it there.
		if _, err := a.door.Bind(ctx, commands.BindRequest{Client: client, ExternalSession: e.ConversationID, Work: st.Binding.Work}); err != nil {
			return hosts.Answer{}, err
		}
	}
	var pkt *commands.CompileResult
	var err error
	for _, b := range packetBudgets {
		if pkt, err = a.door.Packet(ctx, session, b); !fault.Is(err, fault.BudgetExceeded) {
			break
		}
	}
	if err != nil {
		return hosts.Answer{}, err
	}
	lines, digests := hosts.PacketLines(pkt.WorkContext.RenderedContext)
	rec.ContextHash, rec.Lines = pkt.WorkContext.ContextHash, digests
	mark := hosts.PacketMark(pkt.WorkContext.ContextHash)
	var held []string
	switch {
	case known:
		// The caller read what the conversation holds (geminiPrompt).
		if len(st.Held) > 0 {
			held = st.Held[0].Lines
		}
	case e.Source == "resume" && hosts.ResumeKeepsContext(e.Host) || rec.Fork:
		held = heldLines(st.Held, e, rec.Fork)
	case e.Source == "compact" && len(st.Held) > 0:
		// A packet given since the compaction began: the compacted
		// conversation holds it. Codex compacts a resumed turn after
		// its PreCompact and before it writes that turn's start, whose
		// packet it then keeps, and its own start (source compact)
		// follows.
		held = st.Held[0].Lines
	}
	if held != nil {
		// The conversation still holds the packet it was given: only
		// what changed since goes, or nothing.
		added, gone := hosts.PacketUpdate(held, lines, digests)
		if len(added) == 0 && gone == 0 {
			rec.Answer, rec.Lines = "held", nil
			_, err := a.door.Record(ctx, rec)
			return hosts.Answer{}, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# awr: packet update for session %s on %s (%s, revision %d, %s)\n\n", session, st.Binding.Work, moment(e), pkt.ProjectRevision, mark)
		fmt.Fprintf(&b, "The awr packet given earlier in this conversation (session %s) still holds, except", session)
		if gone > 0 {
			fmt.Fprintf(&b, " that %d of its lines no longer hold", gone)
			if len(added) > 0 {
				b.WriteString(" and")
			}
		}
		if len(added) > 0 {
			b.WriteString(" for these lines, which replace or add to it (under their section):\n\n")
			b.WriteString(strings.Join(added, "\n"))
		} else {
			b.WriteString(".")
		}
		if fitted := hosts.Fit([]hosts.Part{{Text: b.String()}}, hosts.MaxContext); !fitted.Truncated {
			rec.Answer = "delta"
			if _, err := a.door.Record(ctx, rec); err != nil {
				return hosts.Answer{}, err
			}
			return hosts.Answer{Context: fitted.Text}, nil
		}
		// An update too long to give whole: the whole packet instead.
	}
	header := fmt.Sprintf("# awr: continuing session %s on %s (%s, %s)\n\nThis conversation (%s) is bound to awr session %s. What follows is the recorded state of the work; trust it over your memory of the conversation, and over any earlier awr packet in it.",
		session, st.Binding.Work, moment(e), mark, rec.Key, session)
	instructions := fmt.Sprintf("## Keep it continuous\n\n"+
		"- Before you stop, and before the context is compacted: awr session checkpoint --session %s --agent AGENT --digest 'what you did' --next-action 'the exact next step' [--open-loop TEXT] [--resolve-loop ID] [--decision TEXT]\n"+
		"- To tie a checkpoint to the packet it was based on: awr context compile --work %s --session %s --json records one; pass its context_hash as --context-hash\n"+
		"- To prove the handoff: write your restatement (goal, work, next action, open loops, decisions) as JSON and run awr recovery verify --session %s --input FILE",
		session, st.Binding.Work, session, session)
	fitted := hosts.Fit([]hosts.Part{{Text: header}, {Text: pkt.WorkContext.RenderedContext}, {Text: instructions}}, hosts.MaxContext)
	rec.Answer = "context"
	if fitted.Truncated {
		// The conversation holds part of the packet only: none of it
		// counts as held, and the next start gives it whole.
		rec.Lines = nil
	}
	if _, err := a.door.Record(ctx, rec); err != nil {
		return hosts.Answer{}, err
	}
	return hosts.Answer{Context: fitted.Text}, nil
}

// heldLines returns the line digests of the packet a conversation holds,
// of held (its deliveries, newest first): the newest one its host's
// transcript holds the mark of (hosts.Holds), or the newest one
// when there is no transcript to read. A host killed mid-turn may never
// write the turn that carried awr's latest delivery; trusting the record
// alone would leave the resumed conversation without it. nil when it
// holds none.
func heldLines(held []commands.Delivery, e hosts.Event, fork bool) []string {
	if len(held) == 0 {
		return nil
	}
	marks := make([]string, len(held))
	for i, d := range held {
		marks[i] = hosts.PacketMark(d.ContextHash)
	}
	i, read := hosts.Holds(e, marks)
	switch {
	case !read:
		return held[0].Lines
	case i < 0 && fork && e.ForkContext == "":
		// A fork's own transcript need not copy its original's turns
		// (a Codex fork's rollout starts after them, naming the thread
		// it forked): the original's record stands.
		return held[0].Lines
	case i < 0:
		return nil
	}
	return held[i].Lines
}

// writeQueue writes a queue of the orientation under its title: its first
// five items (with holders, the session and agent holding each held one),
// then how many more there are of total and the command (more) that lists
// them.
func writeQueue(b *strings.Builder, title string, items []workqueue.QueueItem, total int, more string, holders bool) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	for i, it := range items {
		if i == 5 {
			fmt.Fprintf(b, "- and %d more (%s)\n", total-5, more)
			break
		}
		holder := ""
		if holders && it.Holder != nil {
			holder = fmt.Sprintf(" (session %s, %s)", it.Holder.SessionID, workcontext.SafeText(it.Holder.Agent))
		}
		fmt.Fprintf(b, "- %s %s%s\n", it.Key, workcontext.SafeText(it.Title), holder)
	}
}

// orientation is what a conversation the log does not know is told at its
// start: the work in progress, what is ready, and the commands to start or
// resume a session and bind this conversation to it.
func (a *answerer) orientation(ctx context.Context, client, conversation string) (string, error) {
	status, err := a.door.Status(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# awr: project %s (revision %d)\n\nThis conversation (%s:%s) is not bound to an awr session yet.\n", workcontext.SafeText(status.ProjectName), status.ProjectRevision, client, conversation)
	writeQueue(&b, "In progress", status.Queues.Current, status.Queues.CurrentTotal, "awr status", true)
	writeQueue(&b, "Ready", status.Queues.Ready, status.Queues.ReadyTotal, "awr ready", false)
	fmt.Fprintf(&b, "\nTo start: awr session start --work KEY --agent AGENT --claim, then awr client bind --client %s --external-session %s --work KEY --session SESSION\n", client, conversation)
	fmt.Fprintf(&b, "To continue a session: awr session resume --from-session SESSION --agent AGENT --client %s --external-session %s, then awr client bind --client %s --external-session %s --work KEY --from-session SESSION\n", client, conversation, client, conversation)
	return b.String(), nil
}
