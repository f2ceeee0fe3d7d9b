package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/service"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Server.
type Options struct {
	// Project is the project directory; it is made absolute.
	Project string
	// Version is reported to hosts as the server version.
	Version string
	// Timeout bounds how long a write waits for a busy project database;
	// the store's default when zero.
	Timeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives the SDK's and the server's logs; nothing is logged
	// when nil. It must never write to stdout on the stdio transport.
	Logger *slog.Logger
}

// Server is awr's MCP server bound to one project. The project database is
// opened on the first tool call that needs it, so a host can start the
// server before `awr init` and still run awr_intake_inspect.
type Server struct {
	mcp  *mcp.Server
	dir  string
	opts Options

	mu      sync.Mutex
	project *service.Project
}

// New returns a server for opts.Project with every awr tool registered.
// Errors: InvalidInput when the project path cannot be made absolute.
func New(opts Options) (*Server, error) {
	dir, err := filepath.Abs(opts.Project)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "--project %s", opts.Project)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{dir: dir, opts: opts}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "awr", Title: "awr: agent work runtime", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		Capabilities: &mcp.ServerCapabilities{},
	})
	s.register()
	return s, nil
}

const instructions = `awr keeps coding work continuous across interruptions. Typical handoff: awr_ready (pick work), ` +
	`awr_session_start with claim=true, awr_context_compile with the session, work, awr_session_checkpoint (digest, next_action, open_loops), ` +
	`awr_session_end; a successor calls awr_session_resume with from_session, or awr_recovery_inspect first. ` +
	`Every result carries project_revision; errors carry code, message, details and hint (the next step).`

// MCP returns the underlying SDK server, to run on a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves on t until the peer disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.mcp.Run(ctx, t) }

// Close closes the project database, if it was opened.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.project == nil {
		return nil
	}
	err := s.project.Store.Close()
	s.project = nil
	return err
}

// open returns the project, opening its log on first use.
// Errors: NotFound when the project has no awr database.
func (s *Server) open(ctx context.Context) (*service.Project, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.project != nil {
		return s.project, nil
	}
	st, err := events.Open(ctx, events.DBPath(s.dir), events.Options{Projectors: projections.Projectors(), LockTimeout: s.opts.Timeout})
	if err != nil {
		return nil, err
	}
	env := commands.NewEnv(st)
	env.Now = s.opts.Now
	s.project = &service.Project{Dir: s.dir, Store: st, Env: env}
	return s.project, nil
}

// tool describes one registration.
type tool struct {
	name, title, desc string
	readOnly          bool
}

// handlerFunc is a tool body: it gets the open project (nil only for
// tools that accept a missing database) and the decoded input.
type handlerFunc[In any] func(ctx context.Context, p *service.Project, in In) (any, error)

// add registers a tool whose input schema is inferred from In. Inputs are
// decoded strictly: unknown fields, missing required fields and wrong
// types are InvalidInput tool errors naming the fields.
func add[In any](s *Server, t tool, needsStore bool, h handlerFunc[In]) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic("mcpserver: schema for " + t.name + ": " + err.Error())
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic("mcpserver: resolve schema for " + t.name + ": " + err.Error())
	}
	ann := &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: t.readOnly, OpenWorldHint: new(false)}
	if !t.readOnly {
		ann.DestructiveHint = new(false)
	}
	s.mcp.AddTool(&mcp.Tool{Name: t.name, Title: t.title, Description: t.desc, InputSchema: schema, Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in, err := decode[In](t.name, req.Params.Arguments, schema, resolved)
			if err != nil {
				return errorResult(err, nil), nil
			}
			p, err := s.open(ctx)
			if err != nil {
				if needsStore || !fault.Is(err, fault.NotFound) {
					return errorResult(err, nil), nil
				}
				p = &service.Project{Dir: s.dir, Env: &commands.Env{Now: s.opts.Now}}
			}
			res, err := h(ctx, p, in)
			if err != nil {
				if s.opts.Logger != nil {
					fe := fault.As(err)
					s.opts.Logger.Debug("tool error", "tool", t.name, "code", fe.Code, "message", fe.Message)
				}
				return errorResult(err, res), nil
			}
			return okResult(res)
		})
}

// decode checks raw against the tool's schema and unmarshals it into In.
func decode[In any](name string, raw json.RawMessage, schema *jsonschema.Schema, resolved *jsonschema.Resolved) (In, error) {
	var in In
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return in, fault.New(fault.InvalidInput, "%s: arguments must be a JSON object: %v", name, err).WithHint("tools/list shows %s's input schema", name)
	}
	var unknown []string
	for k := range m {
		if _, ok := schema.Properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := make([]string, 0, len(schema.Properties))
		for k := range schema.Properties {
			known = append(known, k)
		}
		sort.Strings(known)
		return in, fault.New(fault.InvalidInput, "%s: unknown input field(s): %s", name, strings.Join(unknown, ", ")).
			With("unknown_fields", unknown).With("accepted_fields", known).WithHint("tools/list shows %s's input schema", name)
	}
	if err := resolved.Validate(m); err != nil {
		return in, fault.New(fault.InvalidInput, "%s: invalid input: %v", name, err).WithHint("tools/list shows %s's input schema", name)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fault.New(fault.InvalidInput, "%s: invalid input: %v", name, err).WithHint("tools/list shows %s's input schema", name)
	}
	return in, nil
}

// marshal encodes v exactly as the CLI's --json output (without the
// trailing newline).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// okResult returns v as structured content and as JSON text.
func okResult(v any) (*mcp.CallToolResult, error) {
	b, err := marshal(v)
	if err != nil {
		return errorResult(fault.Wrap(fault.Internal, err, "encode result"), nil), nil
	}
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

// ErrorObject is the structured content of a tool error: the object the
// CLI prints on stderr with --json. Result carries a partial answer where
// the CLI prints one on stdout beside the error (an incomplete context
// packet); it is omitted otherwise.
type ErrorObject struct {
	Code    fault.Code     `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
	Hint    string         `json:"hint"`
	Result  any            `json:"result,omitempty"`
}

// errorResult turns err into a tool error. A typed-nil partial result is
// dropped.
func errorResult(err error, partial any) *mcp.CallToolResult {
	fe := fault.As(err)
	out := ErrorObject{Code: fe.Code, Message: fe.Message, Details: fe.Details, Hint: fe.Hint}
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	if partial != nil && !isNilPointer(partial) {
		out.Result = partial
	}
	b, merr := marshal(out)
	if merr != nil {
		b, _ = marshal(ErrorObject{Code: fault.Internal, Message: "encode error: " + merr.Error(), Details: map[string]any{}})
	}
	return &mcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}
