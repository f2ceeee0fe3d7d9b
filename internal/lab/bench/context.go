package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// The context benchmark (`awr bench context`, issue #45 item 6), after
// AWR 0.6's: on a fixed 150-task project (fixtures/contextbench, written
// by Project(ContextTasks, ContextSeed)), what an agent reads before it
// chooses work (the L0 bootstrap: the orientation a host's conversation
// gets at its start, before it is bound), what it reads to work on one
// task (the work context: the packet of each task at the default
// budget), how much smaller that is than the sources it stands for, the
// hand-written hard facts each packet must carry at the default budget
// and at half of it, and the packet over successive resumes of one task.
// Every figure is a token count (o200k_base) or a recall: behaviour, not
// speed.

// ContextTasks and ContextSeed are the benchmark project's: Project(150, 1).
const (
	ContextTasks = 150
	ContextSeed  = 1
)

//go:embed hardfacts.txt
var hardFactsFile string

// HardFact is one fact the packet of Work must hold.
type HardFact struct {
	Work string `json:"work"`
	Text string `json:"text"`
}

// HardFacts parses hardfacts.txt: one WORK | TEXT per line, # comments.
func HardFacts() []HardFact {
	var out []HardFact
	for _, line := range strings.Split(hardFactsFile, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		work, text, _ := strings.Cut(line, "|")
		out = append(out, HardFact{Work: strings.TrimSpace(work), Text: strings.TrimSpace(text)})
	}
	return out
}

// ContextOptions are the benchmark's settings.
type ContextOptions struct {
	// Dir is where the project is written (it must not exist or be
	// empty); "" is a temporary directory, removed afterwards.
	Dir string
	// Budget is the default token budget of a packet (5000 when 0).
	Budget int
	// Resumes is how many successive resumes of one task are measured
	// (20 when 0).
	Resumes int
}

// ContextResult holds the benchmark's figures.
type ContextResult struct {
	Tasks        int `json:"tasks"`
	SourceFiles  int `json:"source_files"`
	SourceTokens int `json:"source_tokens"`
	// Bootstrap is the L0 orientation's tokens.
	Bootstrap int `json:"bootstrap_tokens"`
	Budget    int `json:"budget"`
	// Work contexts: the packet of every task at the default budget.
	Packets          int     `json:"packets"`
	MeanPacketTokens int     `json:"mean_packet_tokens"`
	MaxPacketTokens  int     `json:"max_packet_tokens"`
	MaxPacketWork    string  `json:"max_packet_work"`
	Compression      float64 `json:"compression"` // source tokens ÷ mean packet tokens
	// Hard facts recalled at the default budget and at half of it.
	HardFacts      int      `json:"hard_facts"`
	Recalled       int      `json:"recalled"`
	RecalledAtHalf int      `json:"recalled_at_half"`
	Missing        []string `json:"missing"`
	MissingAtHalf  []string `json:"missing_at_half"`
	// RecalledAtRequired is the hard facts recalled at the tightest
	// budget, each packet's required part alone (facts go last).
	RecalledAtRequired int `json:"recalled_at_required"`
	// Resumes: the packet's tokens after each successive resume of one
	// task, and how many of them carried an earlier next action outside
	// the earlier checkpoints it is marked as.
	ResumeWork   string `json:"resume_work"`
	ResumeTokens []int  `json:"resume_tokens"`
	// ResumeRequired is the required part of each (what no budget cuts).
	ResumeRequired    []int  `json:"resume_required_tokens"`
	StaleNextActions  int    `json:"stale_next_actions"`
	ProjectRevision   int64  `json:"project_revision"`
	Tokenizer         string `json:"tokenizer"`
	BootstrapMaxGoal  int    `json:"bootstrap_target"`
	WorkContextTarget int    `json:"work_context_target"`
}

// Context runs the benchmark. Errors: InvalidInput for a Dir that is not
// empty; those of writing and initialising the project and of the
// commands it runs.
func Context(ctx context.Context, opts ContextOptions) (*ContextResult, error) {
	budget, resumes := opts.Budget, opts.Resumes
	if budget == 0 {
		budget = 5000
	}
	if resumes == 0 {
		resumes = 20
	}
	if budget < 2 || resumes < 1 {
		return nil, fault.New(fault.InvalidInput, "bench context: a budget of %d and %d resumes: want a budget of 2 or more and 1 resume or more", budget, resumes)
	}
	dir := opts.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "awr-bench-context-")
		if err != nil {
			return nil, fault.Wrap(fault.Storage, err, "bench context: a temporary directory")
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "project")
	}
	files, err := WriteProject(dir, ContextTasks, ContextSeed)
	if err != nil {
		return nil, err
	}
	p, err := project.Open(ctx, dir, project.Options{})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if _, err := p.Init(ctx, project.InitRequest{Accept: true}); err != nil {
		return nil, err
	}
	res := &ContextResult{Tasks: ContextTasks, Budget: budget, Tokenizer: "o200k_base", BootstrapMaxGoal: 800, WorkContextTarget: 4000,
		Missing: []string{}, MissingAtHalf: []string{}}
	for _, f := range files {
		n, err := workcontext.Count(string(f.Content))
		if err != nil {
			return nil, err
		}
		res.SourceFiles++
		res.SourceTokens += n
	}
	if res.Bootstrap, err = bootstrapTokens(ctx, dir); err != nil {
		return nil, err
	}

	required, packets, err := workContexts(ctx, p, res, budget)
	if err != nil {
		return nil, err
	}
	recall(ctx, p, res, packets, required, budget)
	if err := resumeSeries(ctx, p, res, budget, resumes); err != nil {
		return nil, err
	}
	st, err := p.Status(ctx, project.StatusRequest{})
	if err != nil {
		return nil, err
	}
	res.ProjectRevision = st.ProjectRevision
	return res, nil
}

// workContexts compiles every task's packet at budget into res (mean,
// largest, compression) and returns each packet's required tokens and
// text by work item.
func workContexts(ctx context.Context, p *project.Project, res *ContextResult, budget int) (required map[string]int, packets map[string]string, err error) {
	store, err := p.EventLog(ctx)
	if err != nil {
		return nil, nil, err
	}
	var items []projections.WorkItem
	if err := store.Read(ctx, func(r *events.Reader) error {
		var err error
		items, err = projections.WorkItemsAt(r.Conn, r.Head, true)
		return err
	}); err != nil {
		return nil, nil, err
	}
	packets, required = map[string]string{}, map[string]int{}
	total := 0
	for _, it := range items {
		if _, seen := packets[it.Key]; seen {
			continue
		}
		c, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: it.Key, Budget: &budget})
		if err != nil {
			return nil, nil, fmt.Errorf("bench context: compile %s: %w", it.Key, err)
		}
		packets[it.Key] = c.WorkContext.RenderedContext
		required[it.Key] = c.WorkContext.RequiredTokens
		t := c.WorkContext.TokenEstimate
		total += t
		if t > res.MaxPacketTokens {
			res.MaxPacketTokens, res.MaxPacketWork = t, it.Key
		}
	}
	res.Packets = len(packets)
	if res.Packets > 0 {
		res.MeanPacketTokens = (total + res.Packets/2) / res.Packets
		res.Compression = float64(int(float64(res.SourceTokens)/float64(res.MeanPacketTokens)*10+0.5)) / 10
	}
	return required, packets, nil
}

// recall counts the hard facts each packet holds at budget, at half of
// it and at its required part alone (every optional section cut).
func recall(ctx context.Context, p *project.Project, res *ContextResult, packets map[string]string, required map[string]int, budget int) {
	half := budget / 2
	for _, f := range HardFacts() {
		res.HardFacts++
		if holds(packets[f.Work], f.Text) {
			res.Recalled++
		} else {
			res.Missing = append(res.Missing, f.Work+": "+f.Text)
		}
		// A packet whose required part does not fit half the budget is
		// refused (BudgetExceeded): its facts count as not recalled.
		c, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: f.Work, Budget: &half})
		if err == nil && holds(c.WorkContext.RenderedContext, f.Text) {
			res.RecalledAtHalf++
		} else {
			res.MissingAtHalf = append(res.MissingAtHalf, f.Work+": "+f.Text)
		}
		tight := required[f.Work]
		c, err = p.ContextCompile(ctx, project.ContextCompileRequest{Work: f.Work, Budget: &tight})
		if err == nil && holds(c.WorkContext.RenderedContext, f.Text) {
			res.RecalledAtRequired++
		}
	}
}

// holds reports whether packet holds text, white space aside.
func holds(packet, text string) bool {
	return strings.Contains(strings.Join(strings.Fields(packet), " "), strings.Join(strings.Fields(text), " "))
}

// bootstrapTokens counts the orientation Claude Code's hook gives a new
// conversation in dir: what an agent reads before it chooses work.
func bootstrapTokens(ctx context.Context, dir string) (int, error) {
	payload, err := json.Marshal(map[string]string{"session_id": "0b3c2a1e-7f4d-4c55-9a1b-3e2f1d0c9b8a", "transcript_path": "",
		"cwd": dir, "hook_event_name": "SessionStart", "source": "startup"})
	if err != nil {
		return 0, err
	}
	out := project.AnswerHook(ctx, dir, project.HookRequest{Client: "claude"}, bytes.NewReader(payload), project.Options{})
	var ans struct {
		Hook struct {
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out.Stdout, &ans); err != nil || ans.Hook.Context == "" {
		return 0, fault.New(fault.Internal, "bench context: the SessionStart hook gave no orientation: %s %v", out.Stdout, out.Log)
	}
	return workcontext.Count(ans.Hook.Context)
}

// resumeSeries works on the first ready task over resumes successive
// sessions: each checkpoints a new next action, resolves the loop its
// predecessor opened and opens one; the packet is compiled after each
// resume. An earlier next action found in the packet other than under
// its earlier checkpoints counts as stale.
func resumeSeries(ctx context.Context, p *project.Project, res *ContextResult, budget, resumes int) error {
	ready, err := p.Ready(ctx, project.ReadyRequest{})
	if err != nil {
		return err
	}
	if len(ready.Ready) == 0 {
		return fault.New(fault.Internal, "bench context: no ready task to resume")
	}
	work := ready.Ready[0].Key
	res.ResumeWork = work
	start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: work, Agent: "agent-0", Claim: true})
	if err != nil {
		return err
	}
	session := start.Session.ID
	next := func(i int) string { return fmt.Sprintf("Carry out step %d of the change and run its tests", i) }
	for i := 0; i <= resumes; i++ {
		if i > 0 {
			r, err := p.SessionResume(ctx, project.SessionResumeRequest{FromSession: session, Agent: fmt.Sprintf("agent-%d", i)})
			if err != nil {
				return err
			}
			session = r.Resumed.Session.ID
			c, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: work, Budget: &budget})
			if err != nil {
				return err
			}
			res.ResumeTokens = append(res.ResumeTokens, c.WorkContext.TokenEstimate)
			res.ResumeRequired = append(res.ResumeRequired, c.WorkContext.RequiredTokens)
			body := c.WorkContext.RenderedContext
			if cut := strings.Index(body, "## Earlier checkpoints"); cut >= 0 {
				body = body[:cut]
			}
			for j := 1; j < i; j++ {
				if strings.Contains(body, next(j)+"\n") {
					res.StaleNextActions++
				}
			}
		}
		req := project.SessionCheckpointRequest{SessionID: session, Agent: fmt.Sprintf("agent-%d", i),
			Digest: fmt.Sprintf("Did step %d", i), NextAction: next(i + 1)}
		req.OpenLoops = []string{fmt.Sprintf("Confirm that step %d left no flaky test", i)}
		if i > 0 {
			req.ResolveLoops = []string{fmt.Sprintf("L-%d=no flaky test", i)}
		}
		if _, err := p.SessionCheckpoint(ctx, req); err != nil {
			return err
		}
	}
	return nil
}
