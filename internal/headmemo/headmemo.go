// Package headmemo keeps, for one process, what its reads of the log's
// head computed that the head alone decides (Memo): the head's facts,
// the held claims, the work queues, the ready pages and the stale
// sessions, and the manifest as last read. The door (internal/project)
// answers awr status and awr ready through it, so that a warm awr-mcp
// asked again and again of one head reads only what moved.
package headmemo

import (
	"encoding/hex"
	"os"
	"slices"
	"sync"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/idle"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/workqueue"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// Memo keeps, for the head of the log a process read last, what its
// reads computed that the head alone decides: the head's own facts, the
// held claims of the lapsed sessions (idle.Held), and the work queues
// and ready pages, each keyed by the live claims it was filed with (the
// only part of the reader's moment they depend on). A warm awr-mcp asks
// status and ready again and again of one head: the second call reads
// the live claims, the stale sessions and what moved, not the register.
//
// It is keyed by the head's seq and time, read in the same snapshot as
// the answer: another process's write moves the head, and the next read
// finds the memo of another head and starts it afresh, so no answer is
// ever older than the snapshot it says it reflects. Reads at a past
// revision (--at) do not use it. Its size is bounded: one head, at most
// memoEntries queue views and ready pages. Safe for concurrent use.
type Memo struct {
	mu    sync.Mutex
	head  int64
	time  int64
	facts *Facts
	held  *idle.Held
	views []viewEntry
	pages []pageEntry
	stale []staleEntry
	// The manifest file as last read, and what it held (Manifest):
	// kept across heads, as the manifest is no part of the log.
	manifestFile os.FileInfo
	manifest     *intake.Manifest
}

// memoEntries bounds the queue views and the ready pages a head keeps.
const memoEntries = 8

// Head is what the head event and the project's first event say: the
// head's hash and time, the project's name and id.
type Head struct {
	Hash        string
	LastEventAt int64
	Name, ID    string
}

// Facts are what status and ready read of the head that no clock
// reading changes: the Head, the goals and what the last reindex
// changed.
type Facts struct {
	Head
	Goals       []events.Goal
	LastReindex *intake.LastReindex
	// What commands.ReplicaState says of the project.
	Origin  *events.Origin
	Fork    *commands.ForkView
	Replica bool
}

// viewEntry is the work queues (workqueue.AtHead) filed with live.
type viewEntry struct {
	live []projections.Claim
	view *workqueue.View
}

// staleEntry is the stale sessions (idle.Latest) read with live claims
// live and lease ttl, and the span of reader clocks [lo, hi) over which
// they stay the same (idle.Window).
type staleEntry struct {
	live          []projections.Claim
	ttl, lo, hi   int64
	active, stale int
	listed        []idle.StaleSession
}

// pageKey is what a ready page depends on besides the head.
type pageKey struct {
	executable bool
	after      projections.Place
	hasAfter   bool
	limit      int
}

// pageEntry is a ready page (workqueue.ReadyAtHead) read with live.
type pageEntry struct {
	key  pageKey
	live []projections.Claim
	page *workqueue.ReadyPage
}

// at returns the memo's state for r's head, dropping what it kept of
// another head. The caller holds m.mu.
func (m *Memo) at(r *events.Reader) {
	if m.head == r.Head && m.time == r.HeadTime {
		return
	}
	m.head, m.time = r.Head, r.HeadTime
	m.facts, m.held, m.views, m.pages, m.stale = nil, nil, nil, nil, nil
}

// kept returns, for r's head, what find finds with m.mu held, else
// what read reads without it, given to keep (with m.mu held) unless
// another head was read meanwhile: every lookup of the memo is one.
func kept[T any](m *Memo, r *events.Reader, find func() (T, bool), read func() (T, error), keep func(T)) (T, error) {
	m.mu.Lock()
	m.at(r)
	if v, ok := find(); ok {
		m.mu.Unlock()
		return v, nil
	}
	m.mu.Unlock()
	v, err := read()
	if err != nil {
		var none T
		return none, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.head == r.Head && m.time == r.HeadTime {
		keep(v)
	}
	return v, nil
}

// found is the entry of list that match accepts, if one does.
func found[E any](list []E, match func(E) bool) (E, bool) {
	if i := slices.IndexFunc(list, match); i >= 0 {
		return list[i], true
	}
	var none E
	return none, false
}

// bounded is list with e added, its oldest entry dropped when it held
// memoEntries already.
func bounded[E any](list []E, e E) []E {
	if len(list) == memoEntries {
		list = list[1:]
	}
	return append(list, e)
}

// Facts returns the head's facts (ReadFacts), read on first use.
func (m *Memo) Facts(r *events.Reader) (*Facts, error) {
	return kept(m, r, func() (*Facts, bool) { return m.facts, m.facts != nil },
		func() (*Facts, error) { return ReadFacts(r, r.Head) },
		func(f *Facts) { m.facts = f })
}

// Held returns the head's held claims (idle.ReadHeld), read on first
// use.
func (m *Memo) Held(r *events.Reader) (*idle.Held, error) {
	return kept(m, r, func() (*idle.Held, bool) { return m.held, m.held != nil },
		func() (*idle.Held, error) { return idle.ReadHeld(r, r.Head, true) },
		func(h *idle.Held) { m.held = h })
}

// View returns the work queues at the head with live claims live and
// goals (the head's own), filed by workqueue.AtHead on first use. The
// view is shared: its readers must not change it.
func (m *Memo) View(r *events.Reader, live []projections.Claim, goals []events.Goal) (*workqueue.View, error) {
	e, err := kept(m, r, func() (viewEntry, bool) {
		return found(m.views, func(e viewEntry) bool { return slices.Equal(e.live, live) })
	}, func() (viewEntry, error) {
		v, err := workqueue.AtHead(r, live, goals)
		return viewEntry{live: slices.Clone(live), view: v}, err
	}, func(e viewEntry) { m.views = bounded(m.views, e) })
	return e.view, err
}

// Stale returns the sessions active and stale at the head for a
// reader at now with live claims live and lease ttl (idle.Latest), kept
// for the span of clocks over which they stay the same (idle.Window).
// The list is shared: its readers must not change it.
func (m *Memo) Stale(r *events.Reader, now, ttl int64, live []projections.Claim) (active, stale int, listed []idle.StaleSession, err error) {
	e, err := kept(m, r, func() (staleEntry, bool) {
		return found(m.stale, func(e staleEntry) bool {
			return e.ttl == ttl && e.lo <= now && now < e.hi && slices.Equal(e.live, live)
		})
	}, func() (staleEntry, error) {
		e := staleEntry{live: slices.Clone(live), ttl: ttl}
		var err error
		if e.active, e.stale, e.listed, err = idle.Latest(r, r.Head, now, ttl, true, live); err != nil {
			return e, err
		}
		e.lo, e.hi, err = idle.Window(r, r.Head, now, ttl)
		return e, err
	}, func(e staleEntry) { m.stale = bounded(m.stale, e) })
	if err != nil {
		return 0, 0, nil, err
	}
	return e.active, e.stale, e.listed, nil
}

// Page returns the ready page at the head with live claims live
// (workqueue.ReadyAtHead), read on first use. The page is shared: its
// readers must not change it.
func (m *Memo) Page(r *events.Reader, live []projections.Claim, executable bool, after *projections.Place, limit int) (*workqueue.ReadyPage, error) {
	k := pageKey{executable: executable, limit: limit}
	if after != nil {
		k.after, k.hasAfter = *after, true
	}
	e, err := kept(m, r, func() (pageEntry, bool) {
		return found(m.pages, func(e pageEntry) bool { return e.key == k && slices.Equal(e.live, live) })
	}, func() (pageEntry, error) {
		pg, err := workqueue.ReadyAtHead(r, live, executable, after, limit)
		return pageEntry{key: k, live: slices.Clone(live), page: pg}, err
	}, func(e pageEntry) { m.pages = bounded(m.pages, e) })
	return e.page, err
}

// ReadHead reads the head's hash and time as of rev and the project's
// name and id (from its first event); the zero Head at revision 0.
func ReadHead(conn *sqlite.Conn, rev int64) (Head, error) {
	var h Head
	if rev == 0 {
		return h, nil
	}
	if err := events.ScanEvents(conn, rev, rev, func(e *events.Event) error {
		h.Hash, h.LastEventAt = hex.EncodeToString(e.Hash), e.OccurredAt
		return nil
	}); err != nil {
		return h, err
	}
	var err error
	h.ID, h.Name, err = intake.ProjectOn(conn)
	return h, err
}

// ReadFacts reads the head's facts (rev is the head).
func ReadFacts(r *events.Reader, rev int64) (*Facts, error) {
	h, err := ReadHead(r.Conn, rev)
	if err != nil {
		return nil, err
	}
	f := &Facts{Head: h}
	if f.Goals, err = projections.GoalsAt(r.Conn, rev); err != nil {
		return nil, err
	}
	if f.LastReindex, err = intake.LastReindexAt(r.Conn, rev); err != nil {
		return nil, err
	}
	if f.Origin, f.Fork, f.Replica, err = commands.ReplicaState(r.Conn); err != nil {
		return nil, err
	}
	return f, nil
}

// LeaseTTL is the claim lease of the manifest in dir (the manifest's
// continuity.claim_ttl_ms; commands.DefaultClaimTTLms when the manifest
// does not read), from the manifest as Manifest keeps it: a warm server
// answers status without reading and decoding the manifest every call.
func (m *Memo) LeaseTTL(dir string) int64 {
	man, err := m.Manifest(dir)
	if err != nil {
		return commands.DefaultClaimTTLms
	}
	return man.Policy().ClaimTTLms
}

// Manifest is intake.ReadManifest of dir, read again only when the
// manifest file changed (another file, its size or its time); a missing
// manifest, or one that does not read, is read anew each time. The
// manifest is shared: its readers must not change it.
func (m *Memo) Manifest(dir string) (*intake.Manifest, error) {
	fi, err := os.Stat(intake.ManifestPath(dir))
	if err == nil {
		m.mu.Lock()
		prev, man := m.manifestFile, m.manifest
		m.mu.Unlock()
		if prev != nil && os.SameFile(prev, fi) && prev.Size() == fi.Size() && prev.ModTime().Equal(fi.ModTime()) {
			return man, nil
		}
	}
	man, ok, rerr := intake.ReadManifest(dir)
	if rerr != nil {
		return nil, rerr
	}
	if err == nil && ok {
		m.mu.Lock()
		m.manifestFile, m.manifest = fi, man
		m.mu.Unlock()
	}
	return man, nil
}
