package project

import (
	"context"
	"io"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/hook"
)

// HookRequest is `awr client hook`: one hook event of a host, as JSON on
// stdin.
type HookRequest struct {
	Client  string `name:"client" required:"" enum:"claude,codex,gemini,opencode" json:"client" help:"The host that runs the hook: claude, codex, gemini or opencode (awr's OpenCode plugin)."`
	NoBlock bool   `name:"no-block" json:"no_block,omitempty" help:"Never ask the host to continue at a stop (by default a stop is answered once with the checkpoint command when the bound session holds its work and recorded no checkpoint since the previous stop)."`
}

// HookResult is what the hook answers (hook.Result): Stdout is written
// as is, the exit status is always 0, and Log holds the lines written to
// .awr/hooks.log.
type HookResult = hook.Result

// AnswerHook answers one hook event of host req.Client read from payload
// (hook.Answer): the project is projectDir, else the one the payload's
// cwd is in; it is opened with opts, and the lines of .awr/hooks.log are
// dated by opts.Now. It never fails its host.
func AnswerHook(ctx context.Context, projectDir string, req HookRequest, payload io.Reader, opts Options) *HookResult {
	return hook.Answer(ctx, projectDir, hook.Request(req), payload, opts.Now, Find, func(ctx context.Context, dir string) (hook.Door, func(), error) {
		p, err := Open(ctx, dir, opts)
		if err != nil {
			return nil, nil, err
		}
		return hookDoor{p}, func() { p.Close() }, nil
	})
}

// hookDoor is the project as the hook's door (hook.Door): reads at the
// head, writes through commands.
type hookDoor struct{ p *Project }

func (d hookDoor) Read(ctx context.Context, fn func(r *events.Reader, rev, now int64) error) error {
	return d.p.read(ctx, commands.Read{}, fn)
}

func (d hookDoor) Now() time.Time { return d.p.Now() }

func (d hookDoor) Record(ctx context.Context, req commands.HostEventRequest) (*commands.HostEventResult, error) {
	return command(ctx, d.p, commands.RecordHostEvent, req)
}

func (d hookDoor) Bind(ctx context.Context, req commands.BindRequest) (*commands.BindResult, error) {
	return d.p.ClientBind(ctx, req)
}

func (d hookDoor) Packet(ctx context.Context, session string, budget int) (*commands.CompileResult, error) {
	return d.p.ContextPacket(ctx, ContextPacketRequest{Session: session, Budget: &budget})
}

func (d hookDoor) Status(ctx context.Context) (*hook.Status, error) {
	s, err := d.p.Status(ctx, StatusRequest{})
	if err != nil {
		return nil, err
	}
	return &hook.Status{ProjectName: s.ProjectName, ProjectRevision: s.ProjectRevision, Queues: s.Queues}, nil
}

func (d hookDoor) Unsaved(ctx context.Context, session string) (known, changed bool, since string, files []string) {
	return d.p.unsaved(ctx, session)
}
