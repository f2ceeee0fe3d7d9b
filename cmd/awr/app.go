package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strconv"

	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/internal/buildinfo"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// version is set with -ldflags "-X main.version=..." by release builds.
var version = ""

// Version returns awr's version: the linked-in value, else the module
// version, else "dev".
func Version() string { return buildinfo.Version(version) }

// CLI is awr's command line. Global flags are accepted before or after the
// subcommand.
type CLI struct {
	Project string        `help:"Project directory (default: the nearest directory from here up that holds .awr/, as git finds .git; else the current directory)." env:"AWR_PROJECT" placeholder:"PATH"`
	JSON    bool          `name:"json" help:"Print exactly one JSON object on stdout; errors as JSON on stderr."`
	Timeout time.Duration `help:"How long to wait for a busy project database before failing." default:"30s" env:"AWR_TIMEOUT"`
	Version bool          `help:"Print the version and exit (as JSON with --json)."`
	Color   string        `name:"color" enum:"auto,always,never" default:"auto" help:"Colour states on a terminal: auto (unless NO_COLOR is set), always or never."`
	Wide    bool          `name:"wide" help:"On a terminal, show tables whole instead of cutting them to the width."`

	VersionCmd versionCmd    `cmd:"" name:"version" help:"Print the version."`
	Init       initCmd       `cmd:"" help:"Preview, then (with --accept) index the project's own task files into a new event log."`
	Status     statusCmd     `cmd:"" help:"Show project_revision, work by status, the queues and the next command."`
	Ready      readyCmd      `cmd:"" help:"List the work that can be claimed now."`
	Source     sourceCmd     `cmd:"" help:"Reindex and list the project's sources."`
	Intake     intakeCmd     `cmd:"" help:"The organization report: gaps, actions, executable work."`
	Session    sessionCmd    `cmd:"" help:"Start, checkpoint, end, resume, show and list work sessions."`
	Context    contextCmd    `cmd:"" help:"Compile the context packet for a work item."`
	Claim      claimCmd      `cmd:"" help:"Acquire, renew or release a session's claim."`
	Work       workCmd       `cmd:"" help:"A work item: show it, its history, claim, release, hand off and complete it."`
	Evidence   evidenceCmd   `cmd:"" help:"Record evidence against a work item's acceptance criteria."`
	Recovery   recoveryCmd   `cmd:"" help:"Inspect where a session stands and what to run next."`
	Exec       execCmd       `cmd:"" help:"Run side effects at most once per work item and key; list and show executions."`
	Search     searchCmd     `cmd:"" help:"Full-text search over work items, checkpoints, loops, decisions, facts and executions."`
	Doctor     doctorCmd     `cmd:"" help:"Find what keeps the project from continuing cleanly, with the command that repairs each; repair one."`
	Client     clientCmd     `cmd:"" help:"Host conversations: bind one to a session, show a binding, answer a host's hook, install or uninstall awr's hooks."`
	Seat       seatCmd       `cmd:"" help:"Declare, remove, show and list seats: stable addresses (ROLE@RIG) for agents' work."`
	Rig        rigCmd        `cmd:"" help:"Bring a rig of seats up in tmux, take it down with a snapshot, restore it seat by seat."`
	Log        logCmd        `cmd:"" help:"List events oldest first, filtered (--follow: as they commit)."`
	Diff       diffCmd       `cmd:"" help:"What changed in every read model between two revisions, and the events between them."`
	UI         uiCmd         `cmd:"" name:"ui" help:"Serve a read-only web page of the log on loopback: a timeline per work item, a revision slider, the chain's verification; it follows the log live."`
	Audit      auditCmd      `cmd:"" help:"Write the chain-of-custody report of a session chain or a work item (Markdown or HTML), as of a revision."`
	MCP        mcpCmd        `cmd:"" name:"mcp" help:"Serve the awr tools to an agent host over MCP on stdio: runs awr-mcp, found beside awr or on PATH."`
	Replay     replayCmd     `cmd:"" help:"Drop and rebuild every projection from the log (--verify: compare instead)."`
	Verify     verifyCmd     `cmd:"" help:"Check seq continuity, the hash chain and projection checksums (--anchors, --expect-head: against witnesses kept outside)."`
	Anchor     anchorCmd     `cmd:"" help:"Record the log's head outside the database: a git note (refs/notes/awr) or a line in a file."`
	Export     exportCmd     `cmd:"" help:"Write the whole log as JSONL, one envelope per line."`
	Import     importCmd     `cmd:"" help:"Import a JSONL export into an empty project (a read-only replica), verifying the chain."`
	Fork       forkCmd       `cmd:"" help:"Turn an imported replica into a project of its own (--accept; without it, a preview)."`
	Migrate    migrateCmd    `cmd:"" help:"Move the project's log into a shared PostgreSQL database (--to postgres://...), verified equal, or back into the embedded file (--to sqlite)."`
	Demo       demoCmd       `cmd:"" help:"Run a scripted handoff on a temporary project and show each step."`
	Bench      benchCmd      `cmd:"" help:"Write a synthetic project, generate a history on it, and measure awr there."`
	Completion completionCmd `cmd:"" help:"Print a shell completion script (bash, zsh or fish): commands, flags, their values, and the project's work keys and session ids."`
	Complete   completeCmd   `cmd:"" name:"__complete" hidden:"" help:"Print the completions of the last word (for the completion scripts)."`
	HoldStore  holdStoreCmd  `cmd:"" name:"__hold-store" hidden:"" help:"Keep connections to a shared store open between commands (started by awr itself)."`
}

// App is what every command's Run receives: the parsed globals, the output
// streams, the clock and the project, opened through the door on first use.
type App struct {
	Ctx     context.Context
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	JSON    bool
	Project string
	Now     func() time.Time
	proj    *project.Project
	timeout time.Duration
	hints   hinter
	term    terminal                   // how a text answer is shown on stdout
	bars    []*progressbar.ProgressBar // the progress bars drawn (clearBars)
	// lean opens the project's log with bounded memory (a server: awr ui).
	lean bool
	// hook: the command answers a host's hook (awr client hook), which
	// starts no process, a store's connection holder included.
	hook bool
}

// clearBars clears every bar a job left drawn, unfinished (it failed or
// was interrupted), so that what follows on stderr (the error) starts a
// line of its own.
func (a *App) clearBars() {
	for _, b := range a.bars {
		if !b.IsFinished() {
			_ = b.Clear()
		}
	}
	a.bars = nil
}

func run(args []string, stdout, stderr io.Writer) int {
	var cli CLI
	jsonOut := hasFlag(args, "--json")
	args = helpArgs(args)
	if hasFlag(args, "--version") {
		// Answer before parsing, as a version flag should, in the same
		// shape as `awr version`.
		app := &App{Stdout: stdout, JSON: jsonOut}
		return report(stderr, jsonOut, hinter{}, (&versionCmd{}).Run(app))
	}
	pruned := prunedModel(args)
	target := any(&cli)
	if pruned.IsValid() {
		target = pruned.Interface()
	}
	parser, err := newParser(target, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "awr:", err)
		return 2
	}
	hints := hinter{project: projectArg(args)}
	if hints.project != "" {
		hints.root = commandTree()
	}
	code := 0
	func() {
		defer func() {
			if r := recover(); r != nil {
				c, ok := r.(exitCode)
				if !ok {
					code = report(stderr, jsonOut, hints, panicFault(r))
					return
				}
				code = int(c)
			}
		}()
		kctx, err := parser.Parse(args)
		if err != nil && pruned.IsValid() {
			// The whole model says what is wrong, in its own words.
			if parser, err = newParser(&cli, stdout, stderr); err == nil {
				pruned = reflect.Value{}
				kctx, err = parser.Parse(args)
			}
		}
		if pruned.IsValid() {
			fromPruned(&cli, pruned)
		}
		if err != nil {
			if hook, gemini := hookArgs(args); hook {
				// A host reads a failing hook as a refusal (Claude Code
				// blocks a stop on exit 2): a command line this binary
				// does not understand (an older awr at the installed
				// path) still answers with the host's empty answer.
				if gemini {
					fmt.Fprintln(stdout, "{}")
				}
				return
			}
			code = report(stderr, jsonOut, hints, fault.New(fault.Usage, "%s", err.Error()).WithHint("%s", usageHint(err)))
			return
		}
		if cli.Timeout < 0 {
			// A wait cannot be negative (AWR_TIMEOUT=-5s was taken as
			// no wait at all).
			code = report(stderr, jsonOut, hints, fault.New(fault.Usage, "--timeout %s: a wait is 0 or more (from --timeout or AWR_TIMEOUT)", cli.Timeout).
				With("flag", "--timeout").WithHint("awr --help"))
			return
		}
		// Ctrl-C or SIGTERM interrupts SQLite: an open write rolls back
		// whole, so nothing half-written remains.
		ctx, stop := interruptible(stderr)
		app := &App{Ctx: ctx, Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, JSON: cli.JSON, Project: cli.Project, Now: clock(), timeout: cli.Timeout, hints: hints}
		app.hook, _ = hookArgs(args)
		if !cli.JSON {
			app.term = terminalFor(stdout, cli.Color, cli.Wide, time.Time{})
		}
		defer app.close()
		// The watchdog stops before the log is closed: a command that
		// finished is never reported as stopped by a late signal.
		defer stop()
		err = kctx.Run(app)
		app.clearBars()
		code = report(stderr, cli.JSON, hints, err)
	}()
	return code
}

// helpArgs turns the ways of asking for help into --help: `awr` alone
// and `awr help [COMMAND...]` show the help, as --help does, with exit
// status 0 (help.go), and so does a command of verbs named alone (`awr
// session` lists its verbs).
func helpArgs(args []string) []string {
	switch {
	case len(args) == 0:
		return []string{"--help"}
	case args[0] == "help":
		return append(append([]string{}, args[1:]...), "--help")
	case nounAlone(args) != "":
		return append(append([]string{}, args...), "--help")
	}
	return args
}

// prunedModel is the model of the subcommand a command line names alone
// (cmdtree.go), which parses it faster than the whole one; not valid for
// help, or a line that names no known subcommand.
func prunedModel(args []string) reflect.Value {
	if name, sub := commandWords(args); name != "" && !hasFlag(args, "--help") && !hasFlag(args, "-h") {
		if t, ok := prunedCLI(name, sub); ok {
			return reflect.New(t)
		}
	}
	return reflect.Value{}
}

type exitCode int

// panicFault is the error a command that panicked reports, in place of a
// Go trace: Internal, naming the panic and where in awr it happened, with
// the hint to check the log (an open write was rolled back whole).
func panicFault(r any) error {
	at := ""
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	for past := false; ; {
		f, more := frames.Next()
		// The frames below runtime.gopanic are those that panicked.
		past = past || f.Function == "runtime.gopanic"
		if past && strings.HasPrefix(f.Function, "github.com/awr-dev/awr/") {
			at = fmt.Sprintf("%s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
			break
		}
		if !more {
			break
		}
	}
	return fault.New(fault.Internal, "awr stopped on an internal error (a bug; please report it): %v, in %s; a write it had begun was rolled back", r, at).
		With("panic", fmt.Sprint(r)).With("at", at).WithHint("awr verify")
}

// clock returns awr's clock: the real one, or, in a test build (testNow)
// when AWR_TEST_NOW holds a time in Unix milliseconds, a clock that starts
// at that time when the process starts and runs from there at the real
// pace (the docs' examples run on a clock their test moves step by step,
// so what they show does not depend on how fast the machine runs them). A
// write still never dates an event before the log's latest one, and verify
// still refuses times in the future. The shipped binary ignores
// AWR_TEST_NOW.
func clock() func() time.Time {
	if v := testNow(); v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			base, start := time.UnixMilli(ms), time.Now()
			return func() time.Time { return base.Add(time.Since(start)) }
		}
	}
	return time.Now
}

// newParser builds the kong parser of target (a *CLI, or a pruned one).
func newParser(target any, stdout, stderr io.Writer) (*kong.Kong, error) {
	parser, err := kong.New(target,
		kong.Name("awr"),
		kong.Description("awr keeps coding agents' work continuous across interruptions."),
		kong.Writers(stdout, stderr),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(helpPrinter),
		kong.Exit(func(code int) { panic(exitCode(code)) }),
		kong.TypeMapper(reflect.TypeOf(int64(0)), decimal(64)),
		kong.TypeMapper(reflect.TypeOf(int(0)), decimal(strconv.IntSize)),
	)
	if err != nil {
		return nil, err
	}
	enumPlaceholders(parser.Model.Node)
	return parser, nil
}

// hookArgs reports whether args run `client hook`, and whether for
// Gemini CLI (whose empty answer is {}).
func hookArgs(args []string) (hook, gemini bool) {
	client := false
	for _, a := range args {
		switch {
		case a == "client":
			client = true
		case a == "hook" && client:
			hook = true
		case strings.Contains(a, "gemini"):
			gemini = true
		}
	}
	return hook, gemini
}

// graceAfterSignal is how long a command may take to stop once SIGINT or
// SIGTERM cancelled its context before awr exits anyway: a read blocked
// on a terminal or a pipe (`recovery verify --input -`) never
// sees the cancellation. A transaction cut off this way rolls back whole,
// as one a kill cuts off does. Under a second, so that a signal ends any
// command within one (docs/reliability.md).
const graceAfterSignal = 750 * time.Millisecond

// interruptible returns the context of one command: cancelled by the
// first SIGINT or SIGTERM; a second signal, or graceAfterSignal without
// the command returning, exits at once with 128 + the signal's number.
//
// The signals are caught from the first time anything asks the context
// whether it is done (Done or Err, as SQLite, a wait or a derived context
// does): installing the handler starts two threads, about a tenth of a
// short command's whole cost, and a command that never looks at its
// context (version, help, completion) could not act on a cancellation
// anyway. Until then a signal stops the process as it stops any program,
// which leaves no more behind than a kill does.
func interruptible(stderr io.Writer) (context.Context, func()) {
	inner, cancel := context.WithCancel(context.Background())
	ctx := &signalContext{Context: inner}
	sigs := make(chan os.Signal, 2)
	done := make(chan struct{})
	ctx.install = func() {
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		go func() {
			var sig os.Signal
			select {
			case <-done:
				return
			case sig = <-sigs:
			}
			cancel()
			select {
			case <-done:
				return
			case <-sigs:
			case <-time.After(graceAfterSignal):
			}
			code := 130
			if sig == syscall.SIGTERM {
				code = 143
			}
			fmt.Fprintf(stderr, "awr: stopped by %s before the command finished; what it had not committed was rolled back\n", sig)
			os.Exit(code)
		}()
	}
	return ctx, func() {
		ctx.once.Do(func() {}) // no handler from now on
		if ctx.installed() {
			signal.Stop(sigs)
		}
		close(done)
		cancel()
	}
}

// signalContext is a command's context that catches the signals which
// cancel it from the first Done or Err on (interruptible).
type signalContext struct {
	context.Context
	once    sync.Once
	install func()
	caught  atomic.Bool
}

func (c *signalContext) catch() {
	c.once.Do(func() {
		c.install()
		c.caught.Store(true)
	})
}

// installed reports whether the signal handler was installed.
func (c *signalContext) installed() bool { return c.caught.Load() }

func (c *signalContext) Done() <-chan struct{} {
	c.catch()
	return c.Context.Done()
}

func (c *signalContext) Err() error {
	c.catch()
	return c.Context.Err()
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == flag || strings.HasPrefix(a, flag+"=") && a != flag+"=false" {
			return true
		}
	}
	return false
}

// report prints err (as text, or as the one error object on stderr) and
// returns the exit code. Its hint is completed by hints.
func report(stderr io.Writer, jsonOut bool, hints hinter, err error) int {
	if err == nil {
		return 0
	}
	fe := fault.As(err)
	// An error may quote what it refused (kong quotes a bad flag value,
	// twice): ObjectOf withholds a secret in it, and the text is inert
	// like every text view.
	o := fault.ObjectOf(err)
	o.Hint = hints.text(o.Hint)
	if jsonOut {
		b, _ := json.Marshal(o)
		fmt.Fprintln(stderr, string(b))
	} else {
		fmt.Fprintf(stderr, "awr: %s (%s)\n", project.Inert(o.Message), o.Code)
		if o.Hint != "" {
			fmt.Fprintf(stderr, "  next: %s\n", project.Inert(o.Hint))
		}
	}
	return fault.ExitCode(fe)
}

// project opens the project through the door (once per command).
func (a *App) project() (*project.Project, error) {
	if a.proj != nil {
		return a.proj, nil
	}
	p, err := project.Open(a.Ctx, a.Project, a.options())
	if err != nil {
		return nil, err
	}
	a.proj = p
	return p, nil
}

// options are the door's options for this process.
func (a *App) options() project.Options {
	return project.Options{Now: a.Now, LockTimeout: a.timeout, Progress: a.progress, Version: Version(), OneCommand: leaveAtExit, HoldStore: leaveAtExit && !a.hook, Lean: a.lean,
		Rig: project.RigOptions{TmuxSocket: os.Getenv("AWR_TMUX_SOCKET"), AwrBin: awrBinary(), Crashpoint: testCrashpoint()}}
}

// leaveAtExit is set by a process that exits once run returns (main): its
// project is left for the exit to release when it only read
// (project.Project.Leave), instead of being torn down page by page.
var leaveAtExit bool

func (a *App) close() {
	switch {
	case a.proj == nil:
	case leaveAtExit:
		a.proj.Leave()
	default:
		a.proj.Close()
	}
}

// render prints v as one JSON object, or calls text; either way the
// commands it names are completed by a.hints.
func (a *App) render(v any, text func(w io.Writer)) error {
	var buf bytes.Buffer
	if a.JSON {
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := a.Stdout.Write(a.hints.json(buf.Bytes()))
		return err
	}
	tb := &termBuffer{term: a.term}
	if a.term.tty {
		tb.term.now = a.Now()
	}
	text(tb)
	// Every text view is inert: whatever a name or a text recorded, no
	// control character reaches the terminal raw. On a terminal, times
	// read relative, long lines fit and states are coloured (terminal.go).
	out := project.Inert(a.hints.lines(tb.String()))
	_, err := io.WriteString(a.Stdout, tb.term.paint(tb.term.fit(tb.term.relative(out))))
	return err
}

// progressAfter is how long a job runs before its bar is drawn: a
// shorter one finishes without one. A test build may shorten it
// (testProgressAfter, AWR_TEST_PROGRESS_AFTER), so that a test sees the
// bar of a job that a fast machine finishes sooner.
const progressAfter = 300 * time.Millisecond

// progressDelay is progressAfter, or in a test build the duration
// AWR_TEST_PROGRESS_AFTER gives.
func progressDelay() time.Duration {
	if d, err := time.ParseDuration(testProgressAfter()); err == nil && d >= 0 {
		return d
	}
	return progressAfter
}

// progress returns a progress callback drawing a bar on a terminal stderr,
// or nil when stderr is not a terminal or output is JSON. A job whose
// desc begins "reading " counts bytes (source reindex), any other events. The bar is
// scaled to the total the job reports, whatever it is, and says the
// job's rate and time left, both counted from now, when the job starts
// (rateETA): steady, and true from the first draw. A job done within
// progressAfter draws nothing.
func (a *App) progress(desc string) func(done, total int64) {
	f, ok := a.Stderr.(*os.File)
	if a.JSON || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	start, after := time.Now(), progressDelay()
	// A job that reads files ("reading sources") counts bytes; every
	// other counts events.
	inBytes := strings.HasPrefix(desc, "reading ")
	var bar *progressbar.ProgressBar
	return func(done, total int64) {
		elapsed := time.Since(start)
		if total <= 0 || (bar == nil && (elapsed < after || done >= total)) {
			return
		}
		what := desc + " " + rateETA(done, total, elapsed)
		if inBytes {
			what = desc + " " + bytesRateETA(done, total, elapsed)
		}
		if bar == nil {
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(f), progressbar.OptionShowCount(), progressbar.OptionSetDescription(what),
				progressbar.OptionSetElapsedTime(false), progressbar.OptionSetPredictTime(false), progressbar.OptionShowBytes(inBytes),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			a.bars = append(a.bars, bar)
		} else {
			if bar.GetMax64() != total {
				bar.ChangeMax64(total)
			}
			bar.Describe(what)
		}
		_ = bar.Set64(done)
		if done >= total {
			_ = bar.Finish()
		}
	}
}

// rateETA says how fast a job goes and how long it has left: done of
// total in elapsed, averaged over the whole job ("12,300 events/s, 4s
// left").
func rateETA(done, total int64, elapsed time.Duration) string {
	if done <= 0 || elapsed <= 0 {
		return ""
	}
	rate := float64(done) / elapsed.Seconds()
	left := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%s events/s, %s left", thousands(int64(rate)), left)
}

// bytesRateETA is rateETA for a job that counts bytes ("4.2 MB/s, 3s
// left").
func bytesRateETA(done, total int64, elapsed time.Duration) string {
	if done <= 0 || elapsed <= 0 {
		return ""
	}
	rate := float64(done) / elapsed.Seconds()
	left := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%.1f MB/s, %s left", rate/1e6, left)
}

// thousands writes n with a comma between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// call makes one call through the door and renders its result as text or
// JSON. A result that comes with an error (an incomplete packet, a failed
// verification, an incomplete restore) is rendered, then the error is
// returned, so the exit code still says so.
func call[Req, Res any](app *App, op func(*project.Project, context.Context, Req) (*Res, error), req Req, text func(w io.Writer, res *Res)) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := op(p, app.Ctx, req)
	if res == nil {
		return err
	}
	if rerr := app.render(res, func(w io.Writer) { text(w, res) }); rerr != nil {
		return rerr
	}
	return err
}

// enumPlaceholders makes every flag with a fixed set of values show
// them, in the help and in usage errors (--outcome=completed|incomplete|…):
// its placeholder becomes the values, the empty one (the default) left out.
func enumPlaceholders(n *kong.Node) {
	for _, f := range n.Flags {
		if f.Enum == "" {
			continue
		}
		var vals []string
		for _, v := range f.EnumSlice() {
			if v != "" {
				vals = append(vals, v)
			}
		}
		f.PlaceHolder = strings.Join(vals, "|")
	}
	for _, c := range n.Children {
		enumPlaceholders(c)
	}
}

// decimal parses integer flags in base 10 only: kong's own mapper also
// reads 0x5 as hex and 010 as octal, so `--at 010` would read revision 8.
func decimal(bits int) kong.MapperFunc {
	return func(ctx *kong.DecodeContext, target reflect.Value) error {
		t, err := ctx.Scan.PopValue("int")
		if err != nil {
			return err
		}
		sv := fmt.Sprint(t.Value)
		n, err := strconv.ParseInt(sv, 10, bits)
		if err != nil {
			return fmt.Errorf("expected a decimal integer but got %q", sv)
		}
		target.SetInt(n)
		return nil
	}
}
