package projections

import (
	"bytes"
	"strings"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// ItemBrief is what a context packet reads of the work items other than
// its own (workcontext.Gather): each one's key and place, status and
// goal, from the register's columns, and whether it is on one milestone,
// without decoding the item.
type ItemBrief struct {
	Key        string
	SourcePath string
	Ordinal    int
	Status     string
	Goal       string
	// Milestone is the milestone ItemBriefsAt was asked about, when the
	// item is on it; empty otherwise.
	Milestone string
}

// ItemBriefsAt lists every work item as of rev as a brief, in no set
// order; head says rev is the log's head, where only the current rows
// are read. With milestone set, the briefs of the items on it say so:
// only the items whose JSON holds the milestone's text (and a closing
// quote) are decoded to check it (every item, where encoding/json would escape it).
func ItemBriefsAt(conn *sqlite.Conn, rev int64, head bool, milestone string) ([]ItemBrief, error) {
	name := "item_brief"
	if milestone != "" {
		name = "item_brief_item"
	}
	if head {
		name += "_current"
	} else {
		name += "_at"
	}
	// The milestone's text and its closing quote: a search whose first
	// byte is rarer in JSON than the opening quote.
	needle := []byte(milestone + `"`)
	if strings.ContainsAny(milestone, "\"\\<>&\u2028\u2029") || strings.ContainsFunc(milestone, func(r rune) bool { return r < 0x20 }) {
		needle = nil
	}
	out := make([]ItemBrief, 0, 256)
	var buf []byte // one buffer for every row's JSON
	err := query(conn, name, func(st *sqlite.Stmt) {
		if !head {
			st.SetInt64(":rev", rev)
		}
	}, func(st *sqlite.Stmt) error {
		b := ItemBrief{Key: st.GetText("key"), SourcePath: st.GetText("source_path"), Ordinal: int(st.GetInt64("ordinal")),
			Status: st.GetText("status"), Goal: st.GetText("goal")}
		if milestone != "" {
			n := st.GetLen("item")
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			st.GetBytes("item", buf)
			if needle == nil || bytes.Contains(buf, needle) {
				var w events.WorkItem
				if err := events.DecodeWorkItem(buf, &w); err != nil {
					return err
				}
				if w.Milestone == milestone {
					b.Milestone = milestone
				}
			}
		}
		out = append(out, b)
		return nil
	})
	return out, err
}
