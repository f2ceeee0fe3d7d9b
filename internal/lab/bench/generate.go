package bench

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// Source returns a deterministic parsed task register of n work items under
// a few goals, with priorities, milestones, acceptance criteria, next
// actions, some dependencies (on earlier items only, so no cycles) and some
// items already completed.
func Source(n int, seed int64) events.SourceIndexed {
	rng := rand.New(rand.NewSource(seed))
	path := "ledger/work-ledger.yaml"
	src := events.SourceIndexed{Path: path, Adapter: "yaml_ledger", Role: "tasks", ContentHash: fmt.Sprintf("sha256:bench-%d-%d", n, seed)}
	for g := 1; g <= 4; g++ {
		src.Goals = append(src.Goals, events.Goal{Key: fmt.Sprintf("G-%d", g), Title: fmt.Sprintf("Goal %d", g), Status: "active",
			Summary: "A measurable outcome the team is working towards.", Source: events.SourceRef{Path: path, LineStart: g, LineEnd: g}})
	}
	src.Rules = []events.Rule{
		{Key: "R-1", Text: "Never commit secrets.", Strength: "hard", Source: events.SourceRef{Path: path, LineStart: 10, LineEnd: 10}},
		{Key: "R-2", Text: "Keep pull requests small.", Strength: "soft", Source: events.SourceRef{Path: path, LineStart: 11, LineEnd: 11}},
	}
	statuses := []string{"planned", "planned", "planned", "ready", "in_progress", "completed"}
	for i := 1; i <= n; i++ {
		it := events.WorkItem{
			Key: fmt.Sprintf("T-%03d", i), Title: fmt.Sprintf("Task %d", i), Status: statuses[rng.Intn(len(statuses))],
			Kind: "feature", Priority: fmt.Sprintf("p%d", rng.Intn(4)), Goal: fmt.Sprintf("G-%d", 1+rng.Intn(4)),
			Milestone: fmt.Sprintf("M-%d", 1+i/40), NextAction: fmt.Sprintf("Write the first failing test for task %d", i),
			Acceptance: []string{"Behaviour is covered by a test", "Docs updated"},
			Source:     events.SourceRef{Path: path, LineStart: 20 + i*8, LineEnd: 27 + i*8},
		}
		if i > 5 && rng.Intn(5) == 0 {
			it.DependsOn = []events.Dependency{{Key: fmt.Sprintf("T-%03d", 1+rng.Intn(i-1)), Required: rng.Intn(3) > 0}}
		}
		if it.Status == "in_progress" {
			it.Status = "planned"
		}
		src.Items = append(src.Items, it)
	}
	return src
}

// GenerateOptions sizes a history.
type GenerateOptions struct {
	// Events is the number of events to append; the last command may
	// append a few more.
	Events int64
	// Agents is the number of simulated agents (default 8).
	Agents int
	// Seed makes the history deterministic.
	Seed int64
	// Batch is the number of commands per round: each round is one
	// commands.Batch transaction, and the simulated clock advances between
	// rounds (default 1000).
	Batch int
	// Start is the simulated clock's start (default one minute after the
	// log's latest event).
	Start time.Time
	// End is the latest time the history may reach (default: the real
	// now), so a generated log never lies in the future and never blocks
	// new claims at the real clock. The clock advances 30–330 s a round
	// while it is far from End, and by half the time left once it is near.
	End time.Time
	// Progress, if set, is called after each round with the events
	// appended so far and Events.
	Progress func(done, total int64)
}

// GenerateResult reports a generated history.
type GenerateResult struct {
	// Appended is the number of events appended.
	Appended int64
	// Head is the project_revision afterwards.
	Head int64
}

// OpenForGenerate opens the project database at path as Generate runs
// fastest on it: events.Open with awr's projections and ordinary
// durability, on one connection. A pooled connection drops its page cache
// whenever another connection of the pool has written since its last
// transaction, and the pool hands out its connections in turn; with one,
// each round finds the pages the previous round read.
//
// Errors: those of events.Open.
func OpenForGenerate(ctx context.Context, path string, opts events.Options) (*events.Store, error) {
	opts.PoolSize = 1
	opts.Projectors = projections.Projectors()
	return events.Open(ctx, path, opts)
}

type agent struct {
	name    string
	session string
	work    string
	last    string // last session, for resumes
	// loops are the open loops of the work item at the agent's last
	// checkpoint, which it may resolve or drop at the next.
	loops []string
}

// Generate appends a realistic multi-agent history of at least
// opts.Events events to an initialized project whose sources are indexed,
// through the same command code and write path as the CLI: each round of
// opts.Batch commands is one commands.Batch transaction, with every
// projection applied event by event, so the projections it leaves are
// those every write leaves (equal to a replay of the log). A failure
// leaves the rounds committed before it. Open store with OpenForGenerate
// for speed.
//
// Errors: InvalidInput when opts.Events is not positive or the project
// has no claimable work item (planned or ready); NotFound for a log
// without project_initialized; any error of the commands or the store.
func Generate(ctx context.Context, store *events.Store, opts GenerateOptions) (*GenerateResult, error) {
	if opts.Events <= 0 {
		return nil, fault.New(fault.InvalidInput, "bench generate: --events %d: want a positive number of events", opts.Events).With("events", opts.Events)
	}
	if opts.Agents <= 0 {
		opts.Agents = 8
	}
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	var keys []string
	var head, latest int64
	initialized := false
	if err := store.Read(ctx, func(r *events.Reader) error {
		head = r.Head
		if head == 0 {
			return nil
		}
		var err error
		if latest, err = events.EventTime(r.Conn, head); err != nil {
			return err
		}
		initialized, err = hasKind(r, events.KindProjectInitialized)
		if err != nil {
			return err
		}
		items, err := projections.WorkItemsAt(r.Conn, head, true)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.Status == projections.StatusPlanned || it.Status == projections.StatusReady {
				keys = append(keys, it.Key)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if !initialized {
		return nil, fault.New(fault.NotFound, "bench generate: the project is not initialized (no project_initialized event)").WithHint("awr bench project NEW_DIR")
	}
	if len(keys) == 0 {
		return nil, fault.New(fault.InvalidInput, "bench generate: the project has no claimable work items (planned or ready)").WithHint("awr ready --all")
	}
	sort.Strings(keys)
	if opts.Start.IsZero() {
		opts.Start = time.UnixMilli(latest).UTC().Add(time.Minute)
	}
	if opts.End.IsZero() {
		opts.End = time.Now().UTC()
	}
	rng := rand.New(rand.NewSource(opts.Seed))
	clock := opts.Start
	env := &commands.Env{Store: store, Now: func() time.Time { return clock }, Entropy: rand.New(rand.NewSource(opts.Seed + 1))}
	agents := make([]*agent, opts.Agents)
	for i := range agents {
		agents[i] = &agent{name: fmt.Sprintf("agent-%02d", i+1)}
	}
	target := head + opts.Events
	start := head
	for head < target {
		rev, err := commands.Batch(ctx, env, "bench", func(b *commands.Env) error {
			for i := 0; i < opts.Batch; i++ {
				h, _ := b.Head()
				if h >= target {
					return nil
				}
				if err := step(ctx, b, rng, agents[rng.Intn(len(agents))], keys, target-h); err != nil {
					return err
				}
			}
			clock = advance(clock, opts.End, time.Duration(30+rng.Intn(300))*time.Second)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if rev == head && opts.End.Sub(clock) < time.Second {
			// Every step of the round was refused (the work is held by
			// claims whose leases cannot lapse: the clock has reached End
			// and stands there), so no later round can append either.
			return nil, fault.New(fault.InvalidInput, "bench generate: no time left for the history: the simulated clock reached %s (the real now) after %d of %d events, and every command of its last round was refused (the work is claimed under leases that cannot lapse before it); a project made by awr bench project starts its log 30 days in the past",
				opts.End.Format(time.RFC3339), head-start, opts.Events).
				With("events", head-start).
				WithHint("awr bench project DIR --tasks 150 && awr bench generate --project DIR --events %d", opts.Events)
		}
		head = rev
		if opts.Progress != nil {
			opts.Progress(min(head-start, opts.Events), opts.Events)
		}
	}
	return &GenerateResult{Appended: head - start, Head: head}, nil
}

// maxStepEvents bounds the events one step appends (a resume: the
// predecessor's end, the successor's start, its claim and the resume).
const maxStepEvents = 4

// lastStep is a step that appends at most one event, for the end of a
// history, so that Generate appends exactly the events asked: an agent
// in a session records a checkpoint, one without starts a session
// without a claim.
func lastStep(ctx context.Context, env *commands.Env, rng *rand.Rand, a *agent, keys []string) error {
	var err error
	if a.session == "" {
		var res *commands.StartResult
		work := keys[rng.Intn(len(keys))]
		if res, err = commands.StartSession(ctx, env, commands.StartRequest{Work: work, Agent: a.name, Provider: "anthropic", Model: "claude"}); err == nil {
			a.session, a.work, a.loops = res.Session.ID, work, nil
		}
	} else {
		_, err = commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: a.session, Agent: a.name,
			Digest: fmt.Sprintf("Implemented step %d of %s.", rng.Intn(20), a.work), NextAction: fmt.Sprintf("Run the tests for %s", a.work)})
	}
	return a.moveOn(err)
}

// hasKind reports whether the log holds an event of kind.
func hasKind(r *events.Reader, kind events.Kind) (bool, error) {
	found := false
	err := events.ScanEvents(r.Conn, 1, min(r.Head, 16), func(e *events.Event) error {
		found = found || e.Kind == kind
		return nil
	})
	return found, err
}

// moveOn is an agent's answer to the error of its step in a session: a
// refusal a real agent meets (tolerable) or a session gone (NotFound)
// makes it leave the session and carry on; any other error stops the
// history.
func (a *agent) moveOn(err error) error {
	if err != nil && (tolerable(err) || fault.Is(err, fault.NotFound)) {
		a.last, a.session = a.session, ""
		return nil
	}
	return err
}

// tolerable reports errors a real agent meets and moves past: the work was
// taken, blocked, or its lease was superseded.
func tolerable(err error) bool {
	switch fault.CodeOf(err) {
	case fault.ClaimConflict, fault.DependencyBlocked, fault.InvalidTransition:
		return true
	}
	return false
}

func step(ctx context.Context, env *commands.Env, rng *rand.Rand, a *agent, keys []string, room int64) error {
	if room < maxStepEvents {
		return lastStep(ctx, env, rng, a, keys)
	}
	if a.session == "" {
		if a.last != "" && rng.Intn(4) == 0 {
			res, err := commands.ResumeSession(ctx, env, commands.ResumeRequest{FromSession: a.last, Agent: a.name, Provider: "anthropic", Model: "claude"})
			if err == nil {
				a.session, a.work, a.last, a.loops = res.Session.ID, res.Session.Work, "", nil
				return nil
			}
			a.last = ""
			if !tolerable(err) {
				return err
			}
			return nil
		}
		work := keys[rng.Intn(len(keys))]
		res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: work, Agent: a.name, Provider: "anthropic", Model: "claude", Claim: true, TTLms: new(int64(5+rng.Intn(30)) * 60_000)})
		if err != nil {
			if tolerable(err) {
				return nil
			}
			return err
		}
		a.session, a.work, a.loops = res.Session.ID, work, nil
		return nil
	}
	var err error
	switch n := rng.Intn(100); {
	case n < 15:
		_, err = commands.RecordContext(ctx, env, commands.ContextRecordRequest{SessionID: a.session, ContextHash: fmt.Sprintf("sha256:%016x", rng.Uint64()), TokenEstimate: 1500 + rng.Intn(3000), TokenBudget: 5000, Complete: true})
	case n < 58:
		loops := make([]string, rng.Intn(3))
		for i := range loops {
			loops[i] = fmt.Sprintf("Open question %d about %s", rng.Intn(100), a.work)
		}
		// An agent closes the threads it finishes: about one loop in
		// three it has seen open is resolved at a checkpoint, one in ten
		// dropped, so a work item carries a handful of open loops, not
		// every question ever asked.
		var resolve, drop []string
		for _, id := range a.loops {
			switch r := rng.Intn(10); {
			case r < 3:
				resolve = append(resolve, id+"=answered in the tests")
			case r < 4:
				drop = append(drop, id+"=no longer relevant")
			}
		}
		var res *commands.CheckpointResult
		res, err = commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: a.session, Agent: a.name,
			Digest:         fmt.Sprintf("Implemented step %d of %s; tests written, not yet run.", rng.Intn(20), a.work),
			NextAction:     fmt.Sprintf("Run the tests for %s and fix what fails", a.work),
			KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: loops, ResolveLoops: resolve, DropLoops: drop}})
		a.loops = a.loops[:0]
		if err == nil && res.Knowledge != nil {
			for _, k := range res.Knowledge.OpenLoops {
				a.loops = append(a.loops, k.ID)
			}
		}
	case n < 72:
		_, err = commands.RenewClaim(ctx, env, commands.RenewRequest{SessionID: a.session, TTLms: new(int64(10+rng.Intn(20)) * 60_000)})
	case n < 78:
		_, err = commands.BindClient(ctx, env, commands.BindRequest{Client: "claude-code", ExternalSession: fmt.Sprintf("claude-code:%s-%d", a.name, rng.Intn(50)), Work: a.work, SessionID: a.session})
	case n < 88:
		// The agent is working: time passes, nothing is recorded.
	case n < 96:
		outcomes := []string{events.OutcomeCompleted, events.OutcomeIncomplete, events.OutcomeIncomplete, events.OutcomeAbandoned}
		_, err = commands.EndSession(ctx, env, commands.EndRequest{SessionID: a.session, Outcome: outcomes[rng.Intn(len(outcomes))], Agent: a.name})
		a.last, a.session = a.session, ""
	default:
		// The conversation dies without ending: the session stays active
		// until a successor resumes it.
		a.last, a.session = a.session, ""
	}
	return a.moveOn(err)
}

// advance moves the simulated clock on by step, or by half the time left
// before end when step would pass it: the clock never reaches past end.
func advance(clock, end time.Time, step time.Duration) time.Time {
	if left := end.Sub(clock); step > left/2 {
		step = max(left/2, 0)
	}
	return clock.Add(step)
}
