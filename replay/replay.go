package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// RebuildResult reports a rebuild.
type RebuildResult struct {
	ProjectRevision int64                `json:"project_revision"`
	EventsApplied   int64                `json:"events_applied"`
	Projections     []ProjectionChecksum `json:"projections"`
	Verified        *bool                `json:"verified,omitempty"`
	Mismatches      []Mismatch           `json:"mismatches,omitempty"`
}

// ProjectionChecksum is one projection's checksum (empty after a plain
// rebuild, which computes none: `replay --verify` and `verify` do).
type ProjectionChecksum struct {
	Name     string `json:"name"`
	Version  int    `json:"version"`
	Checksum string `json:"checksum,omitempty"`
}

// Mismatch is a projection whose live checksum differs from a rebuild.
type Mismatch struct {
	Name    string `json:"name"`
	Live    string `json:"live"`
	Rebuilt string `json:"rebuilt"`
}

// Rebuild drops every projection and replays the whole log into it, in one
// transaction; progress may be nil. It lists the projections rebuilt
// without checksums: hashing every row costs a sixth of a rebuild, and
// only a comparison needs them (RebuildAndVerify, Verify).
func Rebuild(ctx context.Context, store *events.Store, progress func(done, total int64)) (*RebuildResult, error) {
	if err := store.Rebuild(ctx, progress); err != nil {
		return nil, err
	}
	res := &RebuildResult{}
	err := store.Read(ctx, func(r *events.Reader) error {
		res.ProjectRevision, res.EventsApplied = r.Head, r.Head
		return nil
	})
	for _, p := range projections.All() {
		res.Projections = append(res.Projections, ProjectionChecksum{Name: p.Name(), Version: p.Version()})
	}
	return res, err
}

// Checksums returns the checksum of every projection on conn, in
// projections.All order.
func Checksums(conn *sqlite.Conn) ([]ProjectionChecksum, error) {
	var out []ProjectionChecksum
	for _, p := range projections.All() {
		sum, err := projections.Checksum(conn, p)
		if err != nil {
			return nil, err
		}
		out = append(out, ProjectionChecksum{Name: p.Name(), Version: p.Version(), Checksum: sum})
	}
	return out, nil
}

// CompareWithRebuild rebuilds every projection from the log into a scratch
// database and compares its checksums with the live projections, all at
// one snapshot. It returns the live checksums and every mismatch.
func CompareWithRebuild(ctx context.Context, store *events.Store, progress func(done, total int64)) (head int64, live []ProjectionChecksum, mismatches []Mismatch, err error) {
	err = store.ReadBulk(ctx, func(r *events.Reader) error {
		head = r.Head
		live, mismatches, err = compareOnSnapshot(r, progress)
		return err
	})
	return head, live, mismatches, err
}

// compareOnSnapshot compares the live checksums on r's snapshot with a
// scratch rebuild of the same snapshot's log. Once the rebuild is done,
// the live tables and the rebuilt ones are checksummed at once, each on
// its own connection (and core): the checksums are most of what
// replay --verify costs beyond a replay.
func compareOnSnapshot(r *events.Reader, progress func(done, total int64)) (live []ProjectionChecksum, mismatches []Mismatch, err error) {
	var rebuilt []ProjectionChecksum
	err = scratchRebuild(r.Conn, r.Head, progress, func(dst *sqlite.Conn) error {
		var liveErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			live, liveErr = Checksums(r.Conn)
		}()
		var err error
		rebuilt, err = Checksums(dst)
		<-done
		if liveErr != nil {
			return liveErr
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	for i := range live {
		if live[i].Checksum != rebuilt[i].Checksum {
			mismatches = append(mismatches, Mismatch{Name: live[i].Name, Live: live[i].Checksum, Rebuilt: rebuilt[i].Checksum})
		}
	}
	return live, mismatches, nil
}

// ScratchChecksums folds events 1..head from src into a throwaway database
// and returns the checksums of the result.
func ScratchChecksums(src *sqlite.Conn, head int64, progress func(done, total int64)) (sums []ProjectionChecksum, err error) {
	err = scratchRebuild(src, head, progress, func(dst *sqlite.Conn) error {
		sums, err = Checksums(dst)
		return err
	})
	return sums, err
}

// scratchRebuild folds events 1..head from src into a throwaway database
// and calls then with it, before it is removed; src is free again by
// then. The database is only checksummed: its projections
// (projections.ScratchProjectors) build no index that only reads use.
func scratchRebuild(src *sqlite.Conn, head int64, progress func(done, total int64), then func(dst *sqlite.Conn) error) error {
	return withScratch(func(dst *sqlite.Conn) error {
		endFn, err := sqlitex.ImmediateTransaction(dst)
		if err != nil {
			return fault.Wrap(fault.Storage, err, "prepare scratch database")
		}
		err = events.RebuildFrom(src, dst, projections.ScratchProjectors(), head, progress)
		endFn(&err)
		if err != nil {
			if fault.Is(err, fault.VerifyFailed) {
				return err
			}
			return fault.Wrap(fault.Storage, err, "rebuild into scratch database")
		}
		return then(dst)
	})
}

// withScratch calls fn with a connection to a throwaway database, removed
// afterwards.
func withScratch(fn func(dst *sqlite.Conn) error) error {
	dir, err := os.MkdirTemp("", "awr-scratch-")
	if err != nil {
		return fault.Wrap(fault.Storage, err, "create scratch database")
	}
	defer os.RemoveAll(dir)
	dst, err := events.OpenConn(filepath.Join(dir, "scratch.db"), sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		return fault.Wrap(fault.Storage, err, "open scratch database")
	}
	defer dst.Close()
	for _, pragma := range []string{"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF"} {
		if err := sqlitex.ExecuteTransient(dst, pragma, nil); err != nil {
			return fault.Wrap(fault.Storage, err, "prepare scratch database")
		}
	}
	// A bounded page cache: the process's memory must not grow with the
	// log (events.BulkConn).
	if err := events.BulkConn(dst); err != nil {
		return fault.Wrap(fault.Storage, err, "prepare scratch database")
	}
	if err := events.EnsureProjectionTable(dst); err != nil {
		return fault.Wrap(fault.Storage, err, "prepare scratch database")
	}
	return fn(dst)
}

// RebuildAndVerify rebuilds into a scratch copy and compares (replay
// --verify); the live projections are left untouched.
func RebuildAndVerify(ctx context.Context, store *events.Store, progress func(done, total int64)) (*RebuildResult, error) {
	head, live, mismatches, err := CompareWithRebuild(ctx, store, progress)
	if err != nil {
		return nil, err
	}
	ok := len(mismatches) == 0
	res := &RebuildResult{ProjectRevision: head, EventsApplied: head, Projections: live, Verified: &ok, Mismatches: mismatches}
	if !ok {
		names := ""
		for i, m := range mismatches {
			if i > 0 {
				names += ", "
			}
			names += m.Name
		}
		return res, fault.New(fault.VerifyFailed, "replay --verify: %d projection(s) differ from a rebuild of the log: %s; keep the evidence before any repair (awr export --output FILE, or a copy of .awr/), then rebuild them with awr replay", len(mismatches), names).
			With("mismatches", mismatches).WithHint(EvidenceHint)
	}
	return res, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
