package bench

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// generatorVersion changes whenever Source or Generate would produce a
// different log, invalidating cached logs.
const generatorVersion = 7

// NewProject initializes a project database at path with a 150-task
// register (seeded) and returns it open.
func NewProject(ctx context.Context, path string, tasks int, seed int64) (*events.Store, error) {
	st, err := events.Open(ctx, path, events.Options{Create: true, Projectors: projections.Projectors()})
	if err != nil {
		return nil, err
	}
	env := &commands.Env{Store: st, Now: func() time.Time { return time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC) }, Entropy: rand.New(rand.NewSource(seed))}
	if _, err := commands.Init(ctx, env, commands.InitRequest{Name: "bench"}); err != nil {
		st.Close()
		return nil, err
	}
	if _, err := commands.IndexSource(ctx, env, commands.IndexRequest{Source: Source(tasks, seed)}, false); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// CachedLog returns the path of a database holding a generated history of
// at least n events (150 tasks, 8 agents, seed 1), building it once under
// dir and reusing it afterwards. Callers that write must copy it first.
func CachedLog(ctx context.Context, dir string, n int64, progress func(done, total int64)) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("awr-bench-g%d-s%d-%d.db", generatorVersion, events.SchemaVersion(), n))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := path + ".building"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(tmp + suffix)
	}
	st, err := NewProject(ctx, tmp, 150, 1)
	if err != nil {
		return "", err
	}
	if err := st.Close(); err != nil {
		return "", err
	}
	if st, err = OpenForGenerate(ctx, tmp, events.Options{}); err != nil {
		return "", err
	}
	if _, err := Generate(ctx, st, GenerateOptions{Events: n, Seed: 1, Progress: progress}); err != nil {
		st.Close()
		return "", err
	}
	if err := st.Close(); err != nil {
		return "", err
	}
	// Closing the last connection checkpoints the WAL into the main file.
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return path, nil
}
