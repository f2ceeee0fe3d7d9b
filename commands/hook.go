package commands

import (
	"context"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// DuplicateWindow is how long after a recorded hook delivery an identical
// one without an occurrence id (a Claude SessionStart or Stop) is taken for
// the same delivery seen twice rather than a new occurrence.
const DuplicateWindow = 5 * time.Second

// ContinuationWindow is how long after a host ended a conversation to
// clear or switch it the new conversation's start may continue it.
const ContinuationWindow = 2 * time.Minute

// ProcessContinuationWindow is how long after a host process's latest
// hook of a conversation a conversation it starts on a clear, with no hook
// at the clear (hosts.ClearEndsSilently), may continue it. The process is
// the tie; the window only bounds how far back the log is read: a person
// may read, think or step away between the last answer, the clear and the
// next prompt, which is when such a host starts the new conversation.
const ProcessContinuationWindow = 12 * time.Hour

// HostEventRequest records one hook delivery of a host (see
// events.HostEventRecorded). No front end builds it: the door's hook
// answerer does, from the payload the host sent.
type HostEventRequest struct {
	Client string // claude, codex, gemini or opencode
	Key    string // the conversation's key (ConversationKey)
	Event  string // awr's name of the event
	// HostEvent, Source, Trigger, Reason and StopHookActive are the
	// payload's, as the hosts package read them.
	HostEvent      string
	Source         string
	Trigger        string
	Reason         string
	StopHookActive bool
	// Delivery identifies the occurrence (hosts.Event.Key); Occurrence
	// says whether the host sent an id of its own for it (then an equal
	// Delivery is the same occurrence whenever it comes).
	Delivery   string
	Occurrence bool
	// Answer and ContextHash are what the door answered; Lines, for a
	// context or delta answer, the digests of the packet's lines the
	// conversation holds from then on.
	Answer      string
	ContextHash string
	Lines       []string
	// ContinuesFrom, for a conversation the log does not know yet, names
	// the conversation it continues: Key is bound where that one is. Fork
	// says Key is a fork of it (both go on), not its successor.
	ContinuesFrom string
	Fork          bool
	// RepoKnown says the door compared the bound session's repository
	// with the one its latest checkpoint (or its start) recorded; Unsaved,
	// that they differ. A stop is then asked to continue only for unsaved
	// work; without RepoKnown, only when no checkpoint was recorded since
	// the previous stop.
	RepoKnown, Unsaved bool
	// NoBlock turns off asking the host to continue at a stop; Reminds
	// says the host shows a reminder for this event.
	NoBlock bool
	Reminds bool
	// Process is the host process that ran the hook, nil when it could
	// not be read (events.HostEventRecorded.Process).
	Process *events.HostProcess
}

// HostEventResult says what was recorded and, for a stop, whether the
// host is asked to continue the turn.
type HostEventResult struct {
	Recorded  bool   `json:"recorded"`
	Duplicate bool   `json:"duplicate"`
	Seq       int64  `json:"seq,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Work      string `json:"work,omitempty"`
	Agent     string `json:"agent,omitempty"`
	// Block: the bound session holds its work and recorded no checkpoint
	// since the conversation's previous stop (or since it was bound).
	Block bool `json:"block,omitempty"`
	// Remind: the bound session compiled a packet after its last
	// checkpoint (a compaction would lose what came since).
	Remind          bool  `json:"remind,omitempty"`
	ProjectRevision int64 `json:"project_revision"`
}

// RecordHostEvent appends host_event_recorded for a conversation that is
// bound (and, with ContinuesFrom, first binds it where the conversation it
// continues is bound). A conversation the log does not know writes
// nothing; a delivery already recorded writes nothing either. For a stop
// it decides, inside the same transaction, whether the host is asked to
// continue the turn (never when the host says it already continues
// because of a stop hook, never with NoBlock).
// Errors: RuleViolation for a secret in a field; InvalidInput for a field
// too long.
func RecordHostEvent(ctx context.Context, env *Env, req HostEventRequest) (*HostEventResult, error) {
	fields := [][2]string{{"client", req.Client}, {"external_session", req.Key}, {"source", req.Source}, {"trigger", req.Trigger}, {"reason", req.Reason}}
	if err := refuseSecrets("record host event", fields...); err != nil {
		return nil, err
	}
	streams := []string{"client/" + req.Key}
	if req.ContinuesFrom != "" {
		streams = append(streams, "client/"+req.ContinuesFrom)
	}
	return write(ctx, env, req.Client, WriteMeta{}, streams, req, func(tx *events.Tx) (*HostEventResult, error) {
		rev := tx.Head()
		res := &HostEventResult{}
		b, err := projections.BindingAt(tx.Conn, req.Key, rev)
		if err != nil {
			return nil, err
		}
		if b == nil && req.ContinuesFrom != "" {
			if b, err = continueConversation(tx, req); err != nil {
				return nil, err
			}
		}
		if b == nil {
			res.ProjectRevision = tx.Head()
			return res, nil
		}
		res.SessionID, res.Work = b.SessionID, b.Work
		last, err := latestHostEvents(tx.Conn, req.Key, 1)
		if err != nil {
			return nil, err
		}
		if len(last) == 1 && last[0].payload.Delivery == req.Delivery &&
			(req.Occurrence || tx.Now().UnixMilli()-last[0].at < DuplicateWindow.Milliseconds()) {
			res.Duplicate, res.ProjectRevision = true, tx.Head()
			return res, nil
		}
		s, err := projections.SessionAt(tx.Conn, b.SessionID, rev)
		if err != nil {
			return nil, err
		}
		if s != nil {
			res.Agent = s.Agent
		}
		answer := req.Answer
		switch req.Event {
		case "stop":
			if res.Block, err = shouldBlock(tx, req, b, s); err != nil {
				return nil, err
			}
			if res.Block {
				answer = "block"
			}
		case "pre_compact":
			if res.Remind, err = compiledSinceCheckpoint(tx.Conn, s); err != nil {
				return nil, err
			}
			if res.Remind && req.Reminds && answer == "" {
				answer = "reminder"
			}
		}
		e, err := tx.Append(events.NewEvent{Stream: "client/" + req.Key, Payload: events.HostEventRecorded{
			Client: req.Client, ExternalSession: req.Key, SessionID: b.SessionID, Work: b.Work,
			Event: req.Event, HostEvent: req.HostEvent, Source: req.Source, Trigger: req.Trigger, Reason: req.Reason,
			StopHookActive: req.StopHookActive, Delivery: req.Delivery, Answer: answer, ContextHash: req.ContextHash,
			Lines: req.Lines, Process: req.Process,
		}})
		if err != nil {
			return nil, err
		}
		res.Recorded, res.Seq, res.ProjectRevision = true, e.Seq, tx.Head()
		return res, nil
	})
}

// continueConversation binds req.Key to the session req.ContinuesFrom is
// bound to, recording the lineage; nil when that conversation is not
// bound (any more).
func continueConversation(tx *events.Tx, req HostEventRequest) (*projections.Binding, error) {
	old, err := projections.BindingAt(tx.Conn, req.ContinuesFrom, tx.Head())
	if err != nil || old == nil {
		return nil, err
	}
	if _, err := tx.Append(events.NewEvent{Stream: "client/" + req.Key, Payload: events.ClientBound{
		Client: req.Client, ExternalSession: req.Key, SessionID: old.SessionID, Work: old.Work,
		CheckpointID: old.CheckpointID, ContinuesFrom: req.ContinuesFrom, Fork: req.Fork,
	}}); err != nil {
		return nil, err
	}
	return projections.BindingAt(tx.Conn, req.Key, tx.Head())
}

// shouldBlock decides a stop: block when the bound session is active (not
// resumed away), holds a live claim, and has unsaved work: its repository
// differs from the one its latest checkpoint (or its start) recorded, or,
// when the door could not compare them, it recorded no checkpoint since
// the conversation's previous stop (or its binding).
func shouldBlock(tx *events.Tx, req HostEventRequest, b *projections.Binding, s *projections.Session) (bool, error) {
	if req.NoBlock || req.StopHookActive || s == nil || s.Status != projections.SessionActive {
		return false, nil
	}
	live, err := holdsLive(tx, s.ID)
	if err != nil || !live {
		return false, err
	}
	if req.RepoKnown {
		return req.Unsaved, nil
	}
	since, err := previousStop(tx.Conn, req.Key)
	if err != nil {
		return false, err
	}
	if since == 0 {
		bound, err := events.LastOfKind(tx.Conn, "client/"+req.Key, events.KindClientBound, 0)
		if err != nil || bound == nil {
			return false, err
		}
		since = bound.Seq
	}
	cp, err := events.LastOfKind(tx.Conn, "session/"+s.ID, events.KindCheckpointRecorded, since)
	return cp == nil, err
}

// previousStop returns the seq of the conversation's latest recorded stop
// (0 when none).
func previousStop(conn *sqlite.Conn, key string) (int64, error) {
	var seq int64
	var derr error
	err := events.LatestOfKind(conn, "client/"+key, events.KindHostEventRecorded, 1000, func(e *events.Event) bool {
		v, err := events.Decode(e)
		if err != nil {
			derr = err
			return false
		}
		if v.(*events.HostEventRecorded).Event == "stop" {
			seq = e.Seq
			return false
		}
		return true
	})
	if err == nil {
		err = derr
	}
	return seq, err
}

// compiledSinceCheckpoint reports whether session s compiled a packet
// after its latest checkpoint (or compiled one and never checkpointed).
func compiledSinceCheckpoint(conn *sqlite.Conn, s *projections.Session) (bool, error) {
	if s == nil || s.Status != projections.SessionActive {
		return false, nil
	}
	stream := "session/" + s.ID
	compiled, err := events.LastOfKind(conn, stream, events.KindContextCompiled, 0)
	if err != nil || compiled == nil {
		return false, err
	}
	cp, err := events.LastOfKind(conn, stream, events.KindCheckpointRecorded, compiled.Seq)
	return cp == nil, err
}

// hostEvent is a recorded hook delivery with its time.
type hostEvent struct {
	seq, at int64
	payload *events.HostEventRecorded
}

// latestHostEvents returns the conversation's latest n recorded
// deliveries, newest first.
func latestHostEvents(conn *sqlite.Conn, key string, n int) ([]hostEvent, error) {
	var out []hostEvent
	var derr error
	err := events.LatestOfKind(conn, "client/"+key, events.KindHostEventRecorded, n, func(e *events.Event) bool {
		v, err := events.Decode(e)
		if err != nil {
			derr = err
			return false
		}
		out = append(out, hostEvent{seq: e.Seq, at: e.OccurredAt, payload: v.(*events.HostEventRecorded)})
		return true
	})
	if err == nil {
		err = derr
	}
	return out, err
}

// ConversationState is what the log says of a host conversation at a
// revision: its binding, the session bound and, when that session was
// resumed, whether the conversation may follow it.
type ConversationState struct {
	Binding *projections.Binding
	Session *projections.Session
	// Follow is the session the conversation works in: the bound one, or
	// the successor a resume made for this conversation.
	Follow string
	// Stale is the error of a conversation whose session was resumed for
	// another conversation (or for none); nil otherwise.
	Stale error
	// CompactionPending: the latest recorded delivery is a compaction,
	// with no context given back since.
	CompactionPending bool
	// StartPending: the latest recorded delivery is a start whose context
	// goes with the next prompt (answer "deferred": a Gemini CLI clear,
	// hosts.StartGoesWithPrompt), not given yet.
	StartPending bool
	// Held are the packets the conversation was given since its last
	// compaction or clear (context and delta answers), newest first; nil
	// when it was given none.
	Held []Delivery
}

// Delivery is a packet (or packet update) given to a conversation: the
// hash of the packet the conversation holds once it has read it, the
// digests of that packet's lines, the hook event that gave it (awr's
// name: session_start, before_agent), which says where the host put it
// and so whether a resume keeps it (hosts.KeptAtResume), and whether it
// was the packet whole (Answer "context") or an update of the one the
// conversation held ("delta"), which means nothing without that one.
type Delivery struct {
	ContextHash string
	Lines       []string
	Event       string
	Answer      string
}

// Conversation reads the state of conversation key at rev.
func Conversation(conn *sqlite.Conn, rev int64, key string) (*ConversationState, error) {
	b, err := projections.BindingAt(conn, key, rev)
	if err != nil || b == nil {
		return &ConversationState{}, err
	}
	st := &ConversationState{Binding: b}
	if st.Session, err = projections.SessionAt(conn, b.SessionID, rev); err != nil {
		return nil, err
	}
	if st.Session == nil {
		return nil, fault.New(fault.NotFound, "hook: session %s of %s not found", b.SessionID, key).With("session_id", b.SessionID)
	}
	st.Follow, err = follow(conn, rev, "hook", key, b.SessionID)
	if fe := fault.As(err); err != nil && fe.Code == fault.InvalidTransition {
		st.Follow, st.Stale, err = b.SessionID, err, nil
	}
	if err != nil {
		return nil, err
	}
	last, err := latestHostEvents(conn, key, 1)
	if err != nil {
		return nil, err
	}
	st.CompactionPending = len(last) == 1 && last[0].payload.Event == "pre_compact"
	st.StartPending = len(last) == 1 && last[0].payload.Event == "session_start" && last[0].payload.Answer == "deferred"
	if st.Held, err = Held(conn, rev, key); err != nil {
		return nil, err
	}
	return st, nil
}

// heldScan bounds how many recorded deliveries Held reads back, and
// heldMax how many packets it returns.
const (
	heldScan = 200
	heldMax  = 16
)

// Held returns the packets conversation key was given at rev, newest
// first: its context and delta answers since the host last compacted or
// cleared the conversation (the packets are gone from it then), at most
// heldMax; nil when it was given none.
func Held(conn *sqlite.Conn, rev int64, key string) ([]Delivery, error) {
	return held(conn, rev, key, false)
}

// Given is Held through compactions: the packets conversation key was
// given since it was last cleared, newest first, at most heldMax. A host
// whose transcript says what the conversation holds now (Gemini CLI's
// chat recording) is asked with these.
func Given(conn *sqlite.Conn, rev int64, key string) ([]Delivery, error) {
	return held(conn, rev, key, true)
}

func held(conn *sqlite.Conn, rev int64, key string, throughCompactions bool) ([]Delivery, error) {
	var held []Delivery
	var derr error
	err := events.LatestOfKind(conn, "client/"+key, events.KindHostEventRecorded, heldScan, func(e *events.Event) bool {
		if e.Seq > rev {
			return true
		}
		v, err := events.Decode(e)
		if err != nil {
			derr = err
			return false
		}
		h := v.(*events.HostEventRecorded)
		switch {
		case (h.Answer == "context" || h.Answer == "delta") && len(h.Lines) > 0:
			held = append(held, Delivery{ContextHash: h.ContextHash, Lines: h.Lines, Event: h.Event, Answer: h.Answer})
			return len(held) < heldMax
		case h.Answer == "context" || h.Answer == "delta":
			return false // recorded before awr kept line digests, or given in part
		case h.Event == "pre_compact" || h.Event == "post_compact":
			return throughCompactions
		case h.Event == "session_start" && h.Source == "compact" && h.Answer == "held":
			return true // the compacted conversation kept what was given since its PreCompact (Codex)
		case h.Event == "session_start" && (h.Source == "clear" || h.Source == "compact"):
			return false
		}
		return true
	})
	if err == nil {
		err = derr
	}
	return held, err
}

// PendingContinuation returns the key of the conversation of client that
// a new conversation starting now may continue: the latest one whose host
// ended it to clear or switch it (reason clear or resume) within
// ContinuationWindow, that is still bound and that no conversation
// continues yet; "" when there is none.
func PendingContinuation(conn *sqlite.Conn, rev int64, client string, now time.Time) (string, error) {
	var cands []string
	after, err := recentHostEvents(conn, rev, now.Add(-ContinuationWindow), func(h *events.HostEventRecorded) {
		if h.Client == client && h.Event == "session_end" && (h.Reason == "clear" || h.Reason == "resume") {
			cands = append(cands, h.ExternalSession)
		}
	})
	if err != nil {
		return "", err
	}
	found, err := continuable(conn, rev, after, cands, 1)
	if err != nil || len(found) == 0 {
		return "", err
	}
	return found[0], nil
}

// continuable returns the conversations of cands (newest first) that no
// conversation recorded after seq after continues and that are still
// bound at rev, in order; it stops at the first most of them (0: all).
func continuable(conn *sqlite.Conn, rev, after int64, cands []string, most int) ([]string, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	continued, err := continuedConversations(conn, after)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, key := range cands {
		if continued[key] {
			continue
		}
		b, err := projections.BindingAt(conn, key, rev)
		if err != nil {
			return nil, err
		}
		if b != nil {
			found = append(found, key)
			if len(found) == most {
				break
			}
		}
	}
	return found, nil
}

// recentHostEvents calls fn with each host event recorded up to rev and
// not before oldest, newest first: at most the last 200 of them, within
// the last 2,000 events of the log (after is where that reach starts).
// Errors: the log's, or a host event that does not decode.
func recentHostEvents(conn *sqlite.Conn, rev int64, oldest time.Time, fn func(h *events.HostEventRecorded)) (after int64, err error) {
	var derr error
	after = max(rev-2000, 0)
	err = events.RecentOfKind(conn, events.KindHostEventRecorded, after, 200, func(e *events.Event) bool {
		if e.Seq > rev {
			return true
		}
		if e.OccurredAt < oldest.UnixMilli() {
			return false
		}
		v, err := events.Decode(e)
		if err != nil {
			derr = err
			return false
		}
		fn(v.(*events.HostEventRecorded))
		return true
	})
	if err == nil {
		err = derr
	}
	return after, err
}

// continuedConversations returns the keys of the conversations that a
// binding after seq after continues (a successor's ContinuesFrom).
func continuedConversations(conn *sqlite.Conn, after int64) (map[string]bool, error) {
	continued := map[string]bool{}
	err := events.RecentOfKind(conn, events.KindClientBound, after, 200, func(e *events.Event) bool {
		if v, err := events.Decode(e); err == nil {
			// A fork leaves its original going: it may still be cleared
			// or switched and continued.
			if cb := v.(*events.ClientBound); cb.ContinuesFrom != "" && !cb.Fork {
				continued[cb.ContinuesFrom] = true
			}
		}
		return true
	})
	return continued, err
}

// ProcessContinuation returns the key of the conversation of client that
// a new conversation started now by host process proc continues, where
// no hook ended the old one (hosts.ClearEndsSilently): the one
// conversation of client whose latest recorded hook event, within
// ProcessContinuationWindow, came from proc (pid and start time equal), that is
// still bound and that no conversation continues yet. "" when proc is nil
// (the process could not be read), when there is no such conversation,
// or when there are several: a wrong tie would hand one agent another's
// work.
func ProcessContinuation(conn *sqlite.Conn, rev int64, client string, proc *events.HostProcess, now time.Time) (string, error) {
	if proc == nil {
		return "", nil
	}
	var cands []string
	seen := map[string]bool{}
	after, err := recentHostEvents(conn, rev, now.Add(-ProcessContinuationWindow), func(h *events.HostEventRecorded) {
		if h.Client != client || seen[h.ExternalSession] {
			return
		}
		seen[h.ExternalSession] = true // newest first: its latest event
		if h.Process != nil && *h.Process == *proc {
			cands = append(cands, h.ExternalSession)
		}
	})
	if err != nil {
		return "", err
	}
	found, err := continuable(conn, rev, after, cands, 0)
	if err != nil || len(found) != 1 {
		return "", err
	}
	return found[0], nil
}
