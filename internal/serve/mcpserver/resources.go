package mcpserver

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resources awr serves. Reading one goes through the door and never
// writes: a packet is compiled at the head (or as the log stood) without
// a context_compiled event, so its context_hash proves nothing to a
// checkpoint; compile with awr_context_compile and the session for that.
const (
	// StatusURI is the project status, as `awr status --json`
	// (application/json).
	StatusURI = "awr://status"
	// SessionContextTemplate is the context packet of a session's chain
	// (text/markdown): what `awr context compile --session ID` renders,
	// unrecorded. The id is path-escaped.
	SessionContextTemplate = "awr://session/{id}/context"
	// WorkContextTemplate is the context packet of a work item
	// (text/markdown): what `awr context compile --work KEY` renders. The
	// key is path-escaped.
	WorkContextTemplate = "awr://work/{key}/context"

	markdown = "text/markdown"
	jsonMIME = "application/json"

	// listedSessions and listedWork bound the concrete packets
	// resources/list offers beside the status: the newest active
	// sessions and the first ready items.
	listedSessions = 10
	listedWork     = 10
)

// SessionContextURI is the URI of session id's context packet.
func SessionContextURI(id string) string {
	return "awr://session/" + url.PathEscape(id) + "/context"
}

// WorkContextURI is the URI of work item key's context packet.
func WorkContextURI(key string) string {
	return "awr://work/" + url.PathEscape(key) + "/context"
}

// registerResources adds the status resource, the two packet templates
// and the middleware that lists the concrete packets worth reading now.
func (s *Server) registerResources() {
	s.mcp.AddResource(&mcp.Resource{URI: StatusURI, Name: "status", Title: "Project status", MIMEType: jsonMIME,
		Description: "The project status as `awr status --json` (the awr_status tool's result): project_revision, work items by status, the ready/waiting/blocked queues, live claims, projection freshness and the next step."},
		s.readStatus)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: SessionContextTemplate, Name: "session-context", Title: "Context packet of a session", MIMEType: markdown,
		Description: "The rendered context packet of a session's chain (goal, task, latest checkpoint, open loops, rules), compiled at the head without recording it, as `awr context compile --work KEY --session ID` renders it. An ended session's packet reads too. Unknown session: resource not found (awr code NotFound)."},
		s.readPacket)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: WorkContextTemplate, Name: "work-context", Title: "Context packet of a work item", MIMEType: markdown,
		Description: "The rendered context packet of a work item (from the latest session's chain on it), as `awr context compile --work KEY` renders it. Unknown work item: resource not found (awr code NotFound)."},
		s.readPacket)
	s.mcp.AddReceivingMiddleware(s.listPackets)
}

// readStatus answers awr://status with the status as JSON.
func (s *Server) readStatus(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	st, err := s.project.Status(ctx, project.StatusRequest{})
	if err != nil {
		return nil, s.resourceError(req.Params.URI, err)
	}
	b, err := marshal(st)
	if err != nil {
		return nil, s.resourceError(req.Params.URI, fault.Wrap(fault.Internal, err, "encode status"))
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: StatusURI, MIMEType: jsonMIME, Text: string(b)}}}, nil
}

// readPacket answers both packet templates.
func (s *Server) readPacket(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	in, err := packetRequest(uri)
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	project.WarmTokenizer()
	res, err := s.project.ContextPacket(ctx, in)
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: markdown, Text: res.WorkContext.RenderedContext}}}, nil
}

// packetRequest parses a packet URI into the door's request.
// Errors: NotFound for a URI that names no session or work item.
func packetRequest(uri string) (project.ContextPacketRequest, error) {
	var in project.ContextPacketRequest
	for _, k := range []struct {
		prefix string
		field  *string
	}{{"awr://session/", &in.Session}, {"awr://work/", &in.Work}} {
		rest, ok := strings.CutPrefix(uri, k.prefix)
		if !ok {
			continue
		}
		raw, ok := strings.CutSuffix(rest, "/context")
		if !ok || raw == "" || strings.Contains(raw, "/") {
			break
		}
		v, err := url.PathUnescape(raw)
		if err != nil || strings.TrimSpace(v) == "" {
			break
		}
		*k.field = v
		return in, nil
	}
	return in, fault.New(fault.NotFound, "read resource: %s names no session or work item (resources/templates/list shows %s and %s)", uri, SessionContextTemplate, WorkContextTemplate).With("uri", uri)
}

// resourceError is the JSON-RPC error of a failed read: awr's NotFound is
// MCP's resource-not-found, InvalidInput and Usage are invalid params,
// anything else an internal error. Its data carries awr's error object
// (code, message, details, hint) and the uri.
func (s *Server) resourceError(uri string, err error) error {
	fe := fault.As(err)
	if s.opts.Logger != nil {
		s.opts.Logger.Debug("resource error", "uri", uri, "code", fe.Code, "message", fe.Message)
	}
	code := int64(jsonrpc.CodeInternalError)
	switch fe.Code {
	case fault.NotFound:
		code = mcp.CodeResourceNotFound
	case fault.InvalidInput, fault.Usage:
		code = jsonrpc.CodeInvalidParams
	}
	return rpcError(code, err, uri)
}

// RPCErrorData is the data of a JSON-RPC error from a resource read or a
// prompt: awr's error object (fault.Object) and, for a resource, its URI.
type RPCErrorData struct {
	fault.Object
	URI string `json:"uri,omitempty"`
}

// rpcError builds a JSON-RPC error whose message is awr's and whose data
// is RPCErrorData.
func rpcError(code int64, err error, uri string) error {
	data := RPCErrorData{Object: fault.ObjectOf(err), URI: uri}
	b, _ := json.Marshal(data) // fault.Object's details are JSON values
	return &jsonrpc.Error{Code: code, Message: data.Message, Data: b}
}

// listPackets is a receiving middleware: it adds to the last page of
// resources/list the packets of the newest active sessions and of the
// first ready work items, at most listedSessions and listedWork. A
// project that cannot be read (not initialized yet) lists the status
// only.
func (s *Server) listPackets(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "resources/list" {
			return res, err
		}
		list, ok := res.(*mcp.ListResourcesResult)
		if !ok || list.NextCursor != "" {
			return res, err
		}
		list.Resources = append(list.Resources, s.livePackets(ctx)...)
		return list, nil
	}
}

// livePackets lists the packets worth reading now.
func (s *Server) livePackets(ctx context.Context) []*mcp.Resource {
	var out []*mcp.Resource
	sessions, err := s.project.SessionList(ctx, project.SessionListRequest{Active: true, All: true})
	if err != nil {
		s.debug("list resources: sessions", err)
		return nil
	}
	active := sessions.Sessions
	if len(active) > listedSessions {
		active = active[len(active)-listedSessions:]
	}
	for i := len(active) - 1; i >= 0; i-- {
		ss := active[i]
		out = append(out, &mcp.Resource{URI: SessionContextURI(ss.ID), Name: "session-context", MIMEType: markdown,
			Title:       "Context packet of session " + ss.ID + " (" + project.SafeText(ss.Work) + ")",
			Description: "Active session of " + project.SafeText(ss.Agent) + " on " + project.SafeText(ss.Work) + "."})
	}
	listed := listedWork
	ready, err := s.project.Ready(ctx, project.ReadyRequest{Limit: &listed})
	if err != nil {
		s.debug("list resources: ready", err)
		return out
	}
	for _, it := range ready.Ready {
		out = append(out, &mcp.Resource{URI: WorkContextURI(it.Key), Name: "work-context", MIMEType: markdown,
			Title:       "Context packet of " + project.SafeText(it.Key),
			Description: "Ready work: " + project.SafeText(it.Title) + "."})
	}
	return out
}

// debug logs err at debug level, if there is a logger.
func (s *Server) debug(msg string, err error) {
	if s.opts.Logger != nil {
		fe := fault.As(err)
		s.opts.Logger.Debug(msg, "code", fe.Code, "message", fe.Message)
	}
}
