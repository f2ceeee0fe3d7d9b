package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// Server is awr's MCP server bound to one project, reached through the
// project door, or, in the shared service (NewShared), to the projects of
// a registry, each tool call naming its project. The project's log is
// opened by the first tool call that needs it, so a host can start the
// server before `awr init` and still run awr_intake_inspect.
type Server struct {
	mcp     *mcp.Server
	project *project.Project // nil in the shared service
	shared  *Shared          // nil on one project
	opts    Options
	tools   []Tool
	access  map[string]bool // tool name -> read-only
	global  map[string]bool // tools of the shared service that take no project
	watch   watcher         // the subscriptions' watch of the project_revision
}

// Tool describes one registered tool: its name, the request type its
// input is decoded into (the door's request type of the same operation)
// and the result type its structured content encodes.
type Tool struct {
	Name   string
	Input  reflect.Type
	Output reflect.Type
}

// New returns a server for opts.Project with every awr tool registered.
// Errors: InvalidInput when the project path cannot be made absolute.
func New(opts Options) (*Server, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	p, err := project.Open(context.Background(), opts.Project, projectOptions(opts))
	if err != nil {
		return nil, err
	}
	return newServer(opts, p, nil), nil
}

// projectOptions are the door's options for a project served over MCP:
// confined, taking an agent's word where the CLI would ask a person.
func projectOptions(opts Options) project.Options {
	return project.Options{Now: opts.Now, LockTimeout: opts.Timeout, Version: opts.Version,
		Rig: project.RigOptions{TmuxSocket: os.Getenv("AWR_TMUX_SOCKET")}, OnAgentsWord: true, Confined: true}
}

// newServer registers every tool on p, or, with sh, every tool of the
// shared service: the same tools, each taking project, and
// awr_projects_list; the resources, prompts and subscriptions, which name
// no project, are served on one project only.
func newServer(opts Options, p *project.Project, sh *Shared) *Server {
	s := &Server{project: p, shared: sh, opts: opts, access: map[string]bool{}, global: map[string]bool{}}
	so := &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		Capabilities: &mcp.ServerCapabilities{},
	}
	if sh == nil {
		so.SubscribeHandler, so.UnsubscribeHandler = s.onSubscribe, s.onUnsubscribe
	} else {
		so.Instructions = sharedInstructions + " " + instructions
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "awr", Title: "awr: agent work runtime", Version: opts.Version}, so)
	s.mcp.AddReceivingMiddleware(encodableErrors, encodeResults)
	if sh != nil {
		add(s, tool{name: "awr_projects_list", title: "Projects served to you", readOnly: true, global: true,
			desc: "The projects this shared service serves to you (your grants only), by the name every other tool takes as project: project_id, access (read or write) and project_revision."},
			sh.projectsList)
	}
	s.register()
	if sh == nil {
		s.registerResources()
		s.registerPrompts()
	}
	return s
}

// sharedInstructions open the instructions of the shared service.
const sharedInstructions = `This is a shared awr service serving several projects: call awr_projects_list first, ` +
	`then give project (one of its names) to every other tool.`

const instructions = `awr keeps coding work continuous across interruptions. Typical handoff: awr_ready (pick work), ` +
	`awr_session_start with claim=true, awr_context_compile with the session, work, awr_session_checkpoint (digest, next_action, open_loops), ` +
	`awr_session_end; a successor calls awr_session_resume with from_session, or awr_recovery_inspect first. ` +
	`Every result carries project_revision; errors carry code, message, details and hint (the next step).`

// MCP returns the underlying SDK server, to run on a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Tools lists the registered tools in registration order.
func (s *Server) Tools() []Tool { return s.tools }

// Run serves on t until the peer disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.mcp.Run(ctx, t) }

// Close stops the subscriptions' watch and closes the project database,
// if it was opened.
func (s *Server) Close() error {
	s.stopWatch()
	if s.project == nil {
		return nil
	}
	return s.project.Close()
}

// tool describes one registration.
type tool struct {
	name, title, desc string
	readOnly          bool
	global            bool // the shared service's tools that take no project
}

// handlerFunc is a tool body: one call through the door with the decoded
// request. A result beside an error is the partial answer the CLI prints
// on stdout beside it (an incomplete packet, a failed verification).
type handlerFunc[In, Out any] func(ctx context.Context, p *project.Project, in In) (*Out, error)

// add registers a tool whose input schema is derived from In, the door's
// request type: JSON names from the json tags, descriptions from the help
// the CLI shows, required fields from the CLI's required flags and
// positional arguments. Inputs are decoded strictly: unknown fields,
// missing required fields and wrong types are InvalidInput tool errors
// naming the fields. Its output schema is derived from Out, the result
// type the CLI prints with --json (outputSchema).
func add[In, Out any](s *Server, t tool, h handlerFunc[In, Out]) {
	schema := inputSchema[In](t.name)
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic("mcpserver: resolve schema for " + t.name + ": " + err.Error())
	}
	advertised := schema
	if s.shared != nil && !t.global {
		// The schema a client sees takes project too; the call is decoded
		// against the door's own once project is taken out.
		advertised = inputSchema[In](t.name)
		if advertised.Properties == nil {
			advertised.Properties = map[string]*jsonschema.Schema{}
		}
		advertised.Properties["project"] = &jsonschema.Schema{Type: "string", MinLength: new(1),
			Description: "The project to act on: one of the names awr_projects_list gives"}
		advertised.Required = append(advertised.Required, "project")
		sort.Strings(advertised.Required)
	}
	out := outputOf[Out](t.name)
	s.tools = append(s.tools, Tool{Name: t.name, Input: reflect.TypeFor[In](), Output: reflect.TypeFor[Out]()})
	s.access[t.name] = t.readOnly
	if t.global {
		s.global[t.name] = true
	}
	ann := &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: t.readOnly, OpenWorldHint: new(false)}
	if !t.readOnly {
		ann.DestructiveHint = new(false)
	}
	s.mcp.AddTool(&mcp.Tool{Name: t.name, Title: t.title, Description: t.desc, InputSchema: advertised, OutputSchema: out.schema, Annotations: ann},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p, raw := s.project, req.Params.Arguments
			if s.shared != nil {
				var release func()
				var err error
				ctx, p, raw, release, err = s.shared.target(ctx, req, t)
				if err != nil {
					return errorResult(err, nil), nil
				}
				defer release()
			}
			in, err := decode[In](t.name, raw, schema, resolved)
			if err != nil {
				return errorResult(err, nil), nil
			}
			res, err := h(ctx, p, in)
			if err != nil {
				if s.opts.Logger != nil {
					fe := fault.As(err)
					s.opts.Logger.Debug("tool error", "tool", t.name, "code", fe.Code, "message", fe.Message)
				}
				var partial any
				if res != nil {
					partial = res
				}
				return errorResult(err, partial), nil
			}
			if res == nil {
				return errorResult(fault.New(fault.Internal, "%s: no result", t.name), nil), nil
			}
			return okResult(res, out.shape)
		})
}

// inputSchema derives the input schema of a tool from In, the door's
// request type (see add). It panics when In has none: a registration
// fault, caught by every test that starts a server.
func inputSchema[In any](name string) *jsonschema.Schema {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic("mcpserver: schema for " + name + ": " + err.Error())
	}
	describe(schema, reflect.TypeFor[In]())
	return schema
}

// describe sets each property's description from the field's help tag,
// its allowed values from the enum tag, and the required list from the
// required tags and the positional arguments that are not optional, walking embedded structs as encoding/json flattens
// them.
func describe(schema *jsonschema.Schema, t reflect.Type) {
	var required []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			prop, ok := schema.Properties[name]
			if name == "" || name == "-" || !ok {
				continue
			}
			if help := f.Tag.Get("help"); help != "" {
				prop.Description = strings.TrimSuffix(help, ".")
			}
			if enum := f.Tag.Get("enum"); enum != "" {
				for _, v := range strings.Split(enum, ",") {
					prop.Enum = append(prop.Enum, v)
				}
			}
			_, req := f.Tag.Lookup("required")
			_, arg := f.Tag.Lookup("arg")
			_, optional := f.Tag.Lookup("optional") // an optional positional (verify --anchors [FILE])
			if req || (arg && !optional) {
				required = append(required, name)
			}
		}
	}
	walk(t)
	sort.Strings(required)
	schema.Required = required
}

// decode checks raw against the tool's schema and unmarshals it into In.
func decode[In any](name string, raw json.RawMessage, schema *jsonschema.Schema, resolved *jsonschema.Resolved) (In, error) {
	var in In
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return in, fault.New(fault.InvalidInput, "%s: arguments must be a JSON object: %v (tools/list shows %s's input schema)", name, err, name)
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
		return in, fault.New(fault.InvalidInput, "%s: unknown input field(s): %s (tools/list shows %s's input schema)", name, strings.Join(unknown, ", "), name).
			With("unknown_fields", unknown).With("accepted_fields", known)
	}
	if err := resolved.Validate(m); err != nil {
		return in, fault.New(fault.InvalidInput, "%s: invalid input: %v (tools/list shows %s's input schema)", name, err, name)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fault.New(fault.InvalidInput, "%s: invalid input: %v (tools/list shows %s's input schema)", name, err, name)
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

// okResult returns v, shaped to its tool's outputSchema, as structured
// content and as JSON text.
func okResult(v any, sh *shape) (*mcp.CallToolResult, error) {
	b, err := marshal(v)
	if err == nil {
		b, err = reshape(b, sh)
	}
	if err != nil {
		return errorResult(fault.Wrap(fault.Internal, err, "encode result"), nil), nil
	}
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

// ErrorObject is the text of a tool error: the error object the CLI
// prints on stderr with --json (fault.Object). Result carries a partial
// answer where the CLI prints one on stdout beside the error (an
// incomplete context packet); it is omitted otherwise.
type ErrorObject struct {
	fault.Object
	Result any `json:"result,omitempty"`
}

// errorResult turns err into a tool error: the error object as JSON text,
// and no structured content, which a tool's outputSchema describes only
// for a result (strict clients validate any structured content they get
// against it, error or not). A typed-nil partial result is dropped.
func errorResult(err error, partial any) *mcp.CallToolResult {
	out := ErrorObject{Object: fault.ObjectOf(err)}
	if partial != nil && !isNilPointer(partial) {
		out.Result = partial
	}
	b, merr := marshal(out)
	if merr != nil {
		b, _ = marshal(ErrorObject{Object: fault.ObjectOf(fault.New(fault.Internal, "encode error: %s", merr.Error()))})
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// encodableErrors is a receiving middleware that keeps every error answer
// encodable: an error whose data is not JSON would fail to encode and end
// the session (the SDK's resource-not-found error quotes the URI with
// Go's %q, which is not JSON for a control character: resources/read of
// "\u0000" stopped the server). Such data is replaced by the request's
// URI encoded as JSON, or dropped.
func encodableErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || len(rpc.Data) == 0 || json.Valid(rpc.Data) {
			return res, err
		}
		fixed := *rpc
		fixed.Data = nil
		if r, ok := req.(*mcp.ReadResourceRequest); ok && r.Params != nil {
			fixed.Data, _ = json.Marshal(struct {
				URI string `json:"uri"`
			}{r.Params.URI})
		}
		return res, &fixed
	}
}
