package idle

import (
	"math"
	"sort"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// StaleSession is a session that is active, holds no live claim, and
// whose last event (on its own stream: start, checkpoint, context compile,
// restatement) is at least the project's lease old at the reader's clock
// (the head's now, or the time of event REV under --at). Nothing is
// written to make a session stale: it is read from the log as of the
// revision, like a lease's expiry. With claim_ttl_ms = 0 (leases that
// never expire) no session is stale.
type StaleSession struct {
	ID    string `json:"id"`
	Work  string `json:"work"`
	Agent string `json:"agent"`
	// LastEventSeq and IdleSince are the seq and occurred_at (UTC ms) of
	// the session's last event.
	LastEventSeq int64 `json:"last_event_seq"`
	IdleSince    int64 `json:"idle_since"`
	// EndCommand is the complete command that ends it.
	EndCommand string `json:"end_command"`
}

// endCommand is the command that ends stale session id.
func endCommand(id string) string {
	return "awr session end --session " + id + " --outcome abandoned"
}

// Stale returns, by id, those of the active sessions that are stale at
// rev for a reader at now, given the project's lease ttl (awr session
// list, awr doctor).
func Stale(r *events.Reader, rev, now, ttl int64, active []projections.Session) (map[string]StaleSession, error) {
	out := map[string]StaleSession{}
	if ttl <= 0 || len(active) == 0 {
		return out, nil
	}
	live, err := projections.LiveClaimsAt(r.Conn, rev, now, rev == r.Head)
	if err != nil {
		return nil, err
	}
	holds := map[string]bool{}
	for _, c := range live {
		holds[c.SessionID] = true
	}
	for _, s := range active {
		if holds[s.ID] {
			continue
		}
		seq, at, err := projections.SessionLastEventAt(r.Conn, s.ID, rev)
		if err != nil {
			return nil, err
		}
		if seq == 0 || at+ttl > now {
			continue
		}
		out[s.ID] = StaleSession{ID: s.ID, Work: s.Work, Agent: s.Agent, LastEventSeq: seq, IdleSince: at,
			EndCommand: endCommand(s.ID)}
	}
	return out, nil
}

// MaxStaleListed is how many stale sessions status lists at most.
const MaxStaleListed = 50

// Latest counts the sessions active and stale at rev (for a reader at
// now, given the project's lease ttl and the claims live, read once by
// the caller) and lists the latest stale ones, at most MaxStaleListed,
// oldest first (awr status), in reads that do not grow with the sessions
// history left active (dropped conversations leave thousands): a session
// is stale when it holds no live claim and its stream has no event in the
// last ttl, and since occurred_at never decreases with seq those events
// are the log's tail, found by a binary search on seq. Whichever is
// smaller is read: the active sessions (each one's last event), or the
// tail's events (the count is then the active count less the active
// sessions that are fresh, and the list walks the active sessions newest
// first and stops at MaxStaleListed). So the cost follows the smaller of
// the sessions running and the last lease's activity, not the history.
func Latest(r *events.Reader, rev, now, ttl int64, head bool, live []projections.Claim) (active, stale int, listed []StaleSession, err error) {
	n, err := projections.ActiveSessionCountAt(r.Conn, rev, head)
	if err != nil {
		return 0, 0, nil, err
	}
	if ttl <= 0 || n == 0 {
		return n, 0, nil, nil
	}
	holds := map[string]bool{}
	for _, c := range live {
		holds[c.SessionID] = true
	}
	from, err := firstAfter(r, rev, now-ttl)
	if err != nil {
		return 0, 0, nil, err
	}
	var list []staleCandidate
	if rev-from+1 > int64(n) {
		// Fewer active sessions than recent events: ask each session.
		if list, err = staleByLastEvent(r, rev, head, from, holds); err != nil {
			return 0, 0, nil, err
		}
		stale = len(list)
	} else if list, stale, err = staleByRecentEvents(r, rev, head, n, from, holds); err != nil {
		return 0, 0, nil, err
	}
	// Both ways order by the revision of the session's active version,
	// the order staleByRecentEvents walks in, so that the sessions
	// listed do not depend on which way was cheaper.
	sort.Slice(list, func(i, j int) bool {
		if list[i].version != list[j].version {
			return list[i].version < list[j].version
		}
		return list[i].ID < list[j].ID
	})
	if len(list) > MaxStaleListed {
		list = list[len(list)-MaxStaleListed:]
	}
	for _, s := range list {
		switch {
		case s.LastEventSeq == 0:
			if s.LastEventSeq, s.IdleSince, err = projections.SessionLastEventAt(r.Conn, s.ID, rev); err != nil {
				return 0, 0, nil, err
			}
		default: // staleByLastEvent found the seq; its time only for those listed
			if s.IdleSince, err = events.EventTime(r.Conn, s.LastEventSeq); err != nil {
				return 0, 0, nil, err
			}
		}
		s.EndCommand = endCommand(s.ID)
		listed = append(listed, s.StaleSession)
	}
	return n, stale, listed, nil
}

// Window is the span [lo, hi) of reader clocks (UTC ms) over which
// Latest's answer at rev stays the same for the same ttl and live
// claims: throughout it, the first event within the lease (the search
// Latest starts from) is the same event. A bound no event sets is
// math.MinInt64 or math.MaxInt64. A warm reader keeps Latest's answer
// for the span (the door's head memo).
// Errors: those of reading the events' times.
func Window(r *events.Reader, rev, now, ttl int64) (lo, hi int64, err error) {
	lo, hi = math.MinInt64, math.MaxInt64
	if ttl <= 0 {
		return lo, hi, nil
	}
	from, err := firstAfter(r, rev, now-ttl)
	if err != nil {
		return 0, 0, err
	}
	// The event before from occurred at or before now-ttl, and from
	// itself after it.
	if from > 1 {
		t, err := events.EventTime(r.Conn, from-1)
		if err != nil {
			return 0, 0, err
		}
		lo = t + ttl
	}
	if from <= rev {
		t, err := events.EventTime(r.Conn, from)
		if err != nil {
			return 0, 0, err
		}
		hi = t + ttl
	}
	return lo, hi, nil
}

// staleCandidate is a stale session with the revision of its active
// version (its start, or its resume), for ordering.
type staleCandidate struct {
	StaleSession
	version int64
}

func candidate(s *projections.Session) staleCandidate {
	return staleCandidate{StaleSession: StaleSession{ID: s.ID, Work: s.Work, Agent: s.Agent}, version: s.Revision}
}

// staleByLastEvent reads every session active at rev and the seq of the
// last event of each that holds no live claim: the cheaper way while the
// active sessions are fewer than the events of the last lease. A session
// is stale when that seq is before from, the first event within the
// lease (occurred_at never decreases with seq), so the read is the
// stream index alone; the times of the sessions listed are read after.
func staleByLastEvent(r *events.Reader, rev int64, head bool, from int64, holds map[string]bool) ([]staleCandidate, error) {
	var out []staleCandidate
	var err error
	walkErr := projections.RecentActiveSessionsAt(r.Conn, rev, head, func(s *projections.Session, _ bool) bool {
		if holds[s.ID] {
			return true
		}
		var seq int64
		if seq, err = projections.SessionLastSeqAt(r.Conn, s.ID, rev); err != nil {
			return false
		}
		if seq != 0 && seq < from {
			c := candidate(s)
			c.LastEventSeq = seq
			out = append(out, c)
		}
		return true
	})
	if err == nil {
		err = walkErr
	}
	return out, err
}

// staleByRecentEvents counts the stale sessions as the n active less those
// that are fresh (a live claim, or an event on their stream from seq
// from on), and lists the latest of the others: the cheaper way once
// history has left more sessions active than the last lease has events.
func staleByRecentEvents(r *events.Reader, rev int64, head bool, n int, from int64, holds map[string]bool) ([]staleCandidate, int, error) {
	fresh := map[string]bool{}
	for id := range holds {
		fresh[id] = true
	}
	if err := events.StreamsBetween(r.Conn, from, rev, "session/", func(stream string) bool {
		fresh[strings.TrimPrefix(stream, "session/")] = true
		return true
	}); err != nil {
		return nil, 0, err
	}
	freshActive := 0
	for id := range fresh {
		s, err := projections.SessionAt(r.Conn, id, rev)
		if err != nil {
			return nil, 0, err
		}
		if s != nil && s.Status == projections.SessionActive {
			freshActive++
		}
	}
	stale := n - freshActive
	var out []staleCandidate
	listed, open := 0, 0 // stale sessions found, and among the open versions
	err := projections.RecentActiveSessionsAt(r.Conn, rev, head, func(s *projections.Session, isOpen bool) bool {
		if !fresh[s.ID] {
			out = append(out, candidate(s))
			listed++
			if isOpen {
				open++
			}
		}
		return open < MaxStaleListed && listed < stale
	})
	return out, stale, err
}

// firstAfter returns the first seq at or before rev whose event occurred
// after t (rev+1 when none did): occurred_at never decreases with seq
// (design invariant 9), so it is a search on seq.
func firstAfter(r *events.Reader, rev, t int64) (int64, error) {
	return searchAfter(rev, t, func(seq int64) (int64, error) { return events.EventTime(r.Conn, seq) })
}

// searchAfter is firstAfter over timeOf, the time of the event at a seq
// (non-decreasing in seq). The time t is a lease back from now, so the
// answer lies near the tail: the search gallops back from rev (seq rev,
// rev-1, rev-3, rev-7, ...) until an event at or before t, then bisects
// the last step. It reads about 2·log2(rev+1-answer) events, all near the
// tail of the log, where a bisection of the whole log read log2(rev)
// events spread across it (each a page of the file to fault in at a
// million events); when the whole log is older than t, it reads one.
func searchAfter(rev, t int64, timeOf func(seq int64) (int64, error)) (int64, error) {
	hi := rev + 1 // the answer is at most hi; every seq in [hi, rev] occurred after t
	for step := int64(1); ; step *= 2 {
		probe := hi - step
		if probe < 1 {
			return bisectAfter(1, hi, t, timeOf)
		}
		at, err := timeOf(probe)
		if err != nil {
			return 0, err
		}
		if at <= t {
			return bisectAfter(probe+1, hi, t, timeOf)
		}
		hi = probe
	}
}

// bisectAfter returns the first seq in [lo, hi) whose event occurred
// after t, hi when none did.
func bisectAfter(lo, hi, t int64, timeOf func(seq int64) (int64, error)) (int64, error) {
	for lo < hi {
		mid := lo + (hi-lo)/2
		at, err := timeOf(mid)
		if err != nil {
			return 0, err
		}
		if at > t {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}
