package projections

import (
	"sort"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// The timeline of `awr ui`: where a time falls in the log (SeekTime),
// events per interval of time (HistogramAt) and sessions per lane and
// interval of seqs (LanesAt), each read in a bounded number of steps
// whatever the length of the log.

// MaxLaneSpans bounds the sessions a lane lists one by one.
const MaxLaneSpans = 20

// Lane is a work item's, session's or agent's sessions: how many started
// by the revision and how many of them are still active, the first seq
// of the lane (its first session's start) and the last (the latest start
// or end), the sessions active in each interval (Active[i]: the seqs s
// with ⌊(s−1)×buckets/rev⌋ = i, from ⌈i×rev/buckets⌉+1), and each session's span when
// the lane has at most MaxLaneSpans.
type Lane struct {
	Key      string     `json:"key"`
	Sessions int        `json:"sessions"`
	Open     int        `json:"open"`
	FirstSeq int64      `json:"first_seq"`
	LastSeq  int64      `json:"last_seq"`
	Active   []int      `json:"active"`
	Spans    []LaneSpan `json:"spans,omitempty"`
}

// LaneSpan is one session of a lane, from its start to its end (To 0:
// active at the revision).
type LaneSpan struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Work    string `json:"work"`
	From    int64  `json:"from"`
	To      int64  `json:"to,omitempty"`
}

// laneKey is the lane a session belongs to: its work item, itself
// ("session") or its agent ("agent").
func laneKey(by string, sp SessionSpan) string {
	switch by {
	case "session":
		return sp.ID
	case "agent":
		return sp.Agent
	}
	return sp.Work
}

// LanesAt returns the number of lanes at rev (one per work item, session
// or agent, by) and the page of limit lanes from offset, in key order,
// each with its sessions counted in each of buckets equal intervals of
// seqs from 1 to rev. It makes two passes over the sessions at rev (never
// over the events); memory is the page's lanes and one counter per lane.
// The caller checks its arguments (rev ≥ 1, buckets and limit ≥ 1,
// offset ≥ 0).
func LanesAt(conn *sqlite.Conn, rev int64, by string, buckets, offset, limit int) (int, []Lane, error) {
	// First pass: every lane's key and size.
	sizes := map[string]int{}
	err := SessionSpansAt(conn, rev, func(sp SessionSpan) error {
		sizes[laneKey(by, sp)]++
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	keys := make([]string, 0, len(sizes))
	for k := range sizes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if offset >= len(keys) {
		return len(keys), nil, nil
	}
	total := len(keys)
	keys = keys[offset:min(offset+limit, len(keys))]
	// Second pass: the page's lanes, counted per interval through a
	// difference array (a session adds one from the interval of its start
	// to the interval of its end).
	n := int64(buckets)
	bucket := func(seq int64) int64 { return min((seq-1)*n/rev, n-1) }
	page := make(map[string]*Lane, len(keys))
	diffs := make(map[string][]int, len(keys))
	for _, k := range keys {
		page[k] = &Lane{Key: k}
		diffs[k] = make([]int, n+1)
	}
	err = SessionSpansAt(conn, rev, func(sp SessionSpan) error {
		l := page[laneKey(by, sp)]
		if l == nil || sp.From < 1 {
			return nil
		}
		end := sp.To
		if end == 0 {
			end = rev
			l.Open++
		}
		l.Sessions++
		if l.FirstSeq == 0 || sp.From < l.FirstSeq {
			l.FirstSeq = sp.From
		}
		l.LastSeq = max(l.LastSeq, sp.From, sp.To)
		d := diffs[l.Key]
		d[bucket(sp.From)]++
		d[bucket(end)+1]--
		if sizes[l.Key] <= MaxLaneSpans {
			l.Spans = append(l.Spans, LaneSpan{Session: sp.ID, Agent: sp.Agent, Work: sp.Work, From: sp.From, To: sp.To})
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	lanes := make([]Lane, 0, len(keys))
	for _, k := range keys {
		l, d := page[k], diffs[k]
		l.Active = make([]int, n)
		run := 0
		for i := range l.Active {
			run += d[i]
			l.Active[i] = run
		}
		sort.Slice(l.Spans, func(i, j int) bool { return l.Spans[i].From < l.Spans[j].From })
		lanes = append(lanes, *l)
	}
	return total, lanes, nil
}

// occurredAt returns the time of the event at seq.
func occurredAt(conn *sqlite.Conn, seq int64) (int64, error) {
	var at int64
	err := events.ScanEvents(conn, seq, seq, func(e *events.Event) error { at = e.OccurredAt; return nil })
	return at, err
}

// SeekTime returns the first seq in 1..rev whose event occurred at or
// after t and that time, or (0, 0) when none did: a binary search on seq
// (occurred_at never decreases with seq, the log's rule), about
// log2(rev) reads of one event.
func SeekTime(conn *sqlite.Conn, rev, t int64) (int64, int64, error) {
	lo, hi := int64(1), rev+1 // the answer lies in [lo, hi]; hi = rev+1: none
	for lo < hi {
		mid := lo + (hi-lo)/2
		at, err := occurredAt(conn, mid)
		if err != nil {
			return 0, 0, err
		}
		if at >= t {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo > rev {
		return 0, 0, nil
	}
	at, err := occurredAt(conn, lo)
	return lo, at, err
}

// HistogramBucket is one interval of a histogram: [Start, End) in UTC
// ms, the number of events in it and the first of them (0 when none).
type HistogramBucket struct {
	Start    int64 `json:"start"`
	End      int64 `json:"end"`
	Count    int64 `json:"count"`
	FirstSeq int64 `json:"first_seq,omitempty"`
}

// HistogramAt counts the events of rev (≥ 1) in each of buckets equal
// intervals of time between from and to (UTC ms; 0: the first event's
// time, the last event's), and returns the interval it counted over:
// each interval's first seq is found by SeekTime and the counts are
// differences of seqs, so it reads about buckets × log2(rev) events.
func HistogramAt(conn *sqlite.Conn, rev, from, to int64, buckets int) (int64, int64, []HistogramBucket, error) {
	var err error
	if from == 0 {
		if from, err = occurredAt(conn, 1); err != nil {
			return 0, 0, nil, err
		}
	}
	if to == 0 {
		if to, err = occurredAt(conn, rev); err != nil {
			return 0, 0, nil, err
		}
		to++ // the last event lies inside the last interval
	}
	if to <= from {
		to = from + 1
	}
	// Exactly buckets intervals, their bounds spread over [from, to)
	// (each at least 1 ms: a span shorter than that is widened, and
	// nothing at or after to is counted).
	n := int64(buckets)
	span := max(to-from, n)
	// first is the first seq at or after each boundary (rev+1: none).
	first := func(t int64) (int64, error) {
		s, _, err := SeekTime(conn, rev, t)
		if s == 0 {
			s = rev + 1
		}
		return s, err
	}
	lo, err := first(from)
	if err != nil {
		return 0, 0, nil, err
	}
	out := make([]HistogramBucket, 0, n)
	for i := range n {
		start, end := from+i*span/n, from+(i+1)*span/n
		hi, err := first(min(end, to))
		if err != nil {
			return 0, 0, nil, err
		}
		b := HistogramBucket{Start: start, End: end, Count: hi - lo}
		if b.Count > 0 {
			b.FirstSeq = lo
		}
		out = append(out, b)
		lo = hi
	}
	return from, to, out, nil
}
