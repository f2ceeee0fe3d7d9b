package anchor

import (
	"time"

	"github.com/awr-dev/awr/events"
)

// How far behind the head the latest anchor may lie before doctor says
// so: this many events, or this long before the head event while events
// were appended since.
const (
	LagEvents = 1000
	LagTime   = 7 * 24 * time.Hour
)

// Behind returns the latest of anchors of the project the log r is at its
// head (a legacy fork line aside) when it lies far behind the head
// (LagEvents events, or LagTime before the head event); nil when it does
// not, or when there is no such anchor or no event.
func Behind(r *events.Reader, anchors []Anchor) (*Anchor, error) {
	if r.Head == 0 {
		return nil, nil
	}
	l, err := events.ReadLineage(r.Conn)
	if err != nil {
		return nil, err
	}
	var latest *Anchor
	for i, a := range anchors {
		if a.ProjectID == l.Current() && a.Fork == "" && (latest == nil || a.Seq > latest.Seq) {
			latest = &anchors[i]
		}
	}
	if latest == nil || latest.Seq >= r.Head {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339, latest.At)
	old := err == nil && time.UnixMilli(r.HeadTime).Sub(at) > LagTime
	if r.Head-latest.Seq < LagEvents && !old {
		return nil, nil
	}
	return latest, nil
}
