package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/serve/hostcheck"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The shared service: `awr-mcp --listen ADDR --registry FILE` serves the
// registry's projects to its clients over MCP Streamable HTTP, at
// SharedPath. Every request passes, in order: the Host and Origin checks
// (403), the bearer token (401), and for a tools/call the client's grant
// on the project it names (403, the same answer for a project that does
// not exist and one that is not granted); then the SDK's handler serves
// it. A session is bound to the client that opened it.

// SharedPath is the URL path the shared service answers on.
const SharedPath = "/mcp"

// sessionIdle is how long a session of the shared service may stay
// without a request before it is closed.
const sessionIdle = 30 * time.Minute

// SharedOptions configure the shared service.
type SharedOptions struct {
	// Registry is the checked registry (ReadRegistry).
	Registry *Registry
	// Version is reported to clients as the server version.
	Version string
	// Timeout bounds how long a write waits for a busy project database,
	// and for the project's other write through the service
	// (DefaultWriteWait when zero).
	Timeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Logger receives the service's logs; nothing is logged when nil.
	Logger *slog.Logger
}

// Shared is the shared service: one MCP server whose project tools take
// the project by name, over one open project (one store, one connection
// pool) per registry project.
type Shared struct {
	srv      *Server
	reg      *Registry
	projects map[string]*sharedProject
	clients  []*RegistryClient
	timeout  time.Duration // how long a write waits for its project's other write
}

// sharedProject is one served project: its door, opened once and kept
// open, and the lock that serializes its writes.
type sharedProject struct {
	reg     *RegistryProject
	project *project.Project
	// writes holds a token while a writing tool runs on the project.
	writes chan struct{}
}

// lock takes the project's write lock for a call of tool, waiting at most
// timeout (DefaultWriteWait when zero) and no longer than ctx lives.
// Errors: Storage when another write held it all that time; the context's
// error when the call was given up.
func (sp *sharedProject) lock(ctx context.Context, tool string, timeout time.Duration) (release func(), err error) {
	if timeout <= 0 {
		timeout = DefaultWriteWait
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case sp.writes <- struct{}{}:
		return func() { <-sp.writes }, nil
	case <-ctx.Done():
		return nil, fault.Wrap(fault.Storage, ctx.Err(), "%s: project %s: the call ended while it waited for the project's other write", tool, sp.reg.Name)
	case <-t.C:
		return nil, fault.New(fault.Storage, "%s: project %s: another write held the project for %s; nothing was written, try again", tool, sp.reg.Name, timeout).
			With("project", sp.reg.Name).With("waited", timeout.String())
	}
}

// DefaultWriteWait is how long a write of the shared service waits for
// its project's other write when no timeout is set.
const DefaultWriteWait = 30 * time.Second

// clientKey carries the authenticated client's name in a request's
// context.
type clientKey struct{}

// NewShared opens every project of opts.Registry and checks that each
// root holds the log of the project id the registry names.
// Errors: InvalidInput naming the registry's path:line for a root that
// holds no awr project or another project's log; those of opening a
// project (Storage); nothing is served then, and every project opened is
// closed again.
func NewShared(ctx context.Context, opts SharedOptions) (_ *Shared, err error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	reg := opts.Registry
	sh := &Shared{reg: reg, projects: map[string]*sharedProject{}, timeout: opts.Timeout}
	defer func() {
		if err != nil {
			sh.closeProjects()
		}
	}()
	for _, name := range slices.Sorted(maps.Keys(reg.Projects)) {
		rp := reg.Projects[name]
		if fi, serr := os.Stat(rp.Root); serr != nil || !fi.IsDir() {
			return nil, fault.New(fault.InvalidInput, "registry %s:%d: project %s: root %s is not a directory", reg.Path, rp.Line, name, rp.Root).
				With("path", reg.Path).With("line", rp.Line).With("field", "projects."+name+".root").With("root", rp.Root)
		}
		p, oerr := project.Open(ctx, rp.Root, projectOptions(Options{Now: opts.Now, Timeout: opts.Timeout, Version: opts.Version}))
		if oerr != nil {
			return nil, oerr
		}
		sh.projects[name] = &sharedProject{reg: rp, project: p, writes: make(chan struct{}, 1)}
		st, serr := p.Status(ctx, project.StatusRequest{})
		if serr != nil {
			fe := fault.As(serr)
			return nil, fault.Wrap(fe.Code, serr, "registry %s:%d: project %s (%s): %s", reg.Path, rp.Line, name, rp.Root, fe.Message).
				With("path", reg.Path).With("line", rp.Line).With("project", name).With("root", rp.Root)
		}
		if err := verifyProjectID(reg, rp, st.ProjectID); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(reg.Clients)) {
		sh.clients = append(sh.clients, reg.Clients[name])
	}
	sh.srv = newServer(Options{Version: opts.Version, Timeout: opts.Timeout, Now: opts.Now, Logger: opts.Logger}, nil, sh)
	return sh, nil
}

// Server returns the service's MCP server.
func (sh *Shared) Server() *Server { return sh.srv }

// Close closes every project.
func (sh *Shared) Close() error {
	return sh.closeProjects()
}

func (sh *Shared) closeProjects() error {
	var errs []error
	for _, p := range sh.projects {
		errs = append(errs, p.project.Close())
	}
	return errors.Join(errs...)
}

// client returns the client whose token is token, or nil. Every
// client's token is compared, each in constant time over its SHA-256, so
// the answer's time says nothing of which client, or how much of a
// token, matched.
func (sh *Shared) client(token string) *RegistryClient {
	sum := sha256.Sum256([]byte(token))
	var found *RegistryClient
	for _, c := range sh.clients {
		if subtle.ConstantTimeCompare(sum[:], c.tokenSum[:]) == 1 {
			found = c
		}
	}
	return found
}

// grant returns the project a client may reach under name for a tool.
// Errors: NotFound, the same for a project that does not exist and one
// the client has no grant on (which projects exist is not told);
// InvalidInput when the client may only read it and the tool writes.
func (sh *Shared) grant(c *RegistryClient, name, toolName string, readOnly bool) (*sharedProject, error) {
	a, ok := c.Grants[name]
	sp := sh.projects[name]
	if !ok || sp == nil {
		return nil, fault.New(fault.NotFound, "%s: no project %q is served to client %s; awr_projects_list lists those that are", toolName, name, c.Name).
			With("project", name).With("client", c.Name)
	}
	if !readOnly && a != AccessWrite {
		return nil, fault.New(fault.InvalidInput, "%s: client %s may only read project %s, and %s writes", toolName, c.Name, name, toolName).
			With("project", name).With("client", c.Name).With("access", string(a))
	}
	return sp, nil
}

// projectsResult is awr_projects_list's answer.
type projectsResult struct {
	// Projects are the projects served to the calling client, by name.
	Projects []servedProject `json:"projects"`
}

// servedProject is one project a client may reach.
type servedProject struct {
	Name            string `json:"name"`
	ProjectID       string `json:"project_id"`
	Access          Access `json:"access"`
	ProjectRevision int64  `json:"project_revision"`
}

// projectsRequest is awr_projects_list's input: nothing.
type projectsRequest struct{}

// projectsList answers awr_projects_list for the client in ctx: only the
// projects it has a grant on.
func (sh *Shared) projectsList(ctx context.Context, _ *project.Project, _ projectsRequest) (*projectsResult, error) {
	c, _ := ctx.Value(clientKey{}).(*RegistryClient)
	if c == nil {
		return nil, fault.New(fault.Internal, "awr_projects_list: no client")
	}
	res := &projectsResult{Projects: []servedProject{}}
	for _, name := range slices.Sorted(maps.Keys(c.Grants)) {
		sp := sh.projects[name]
		sv := servedProject{Name: name, ProjectID: sp.reg.ID, Access: c.Grants[name]}
		if h, err := sp.project.Head(ctx); err == nil {
			sv.ProjectRevision = h.ProjectRevision
		}
		res.Projects = append(res.Projects, sv)
	}
	return res, nil
}

// target resolves a project tool call of the shared service: the client
// (from the session's token), the project named by the call's project
// argument and granted to it, and the arguments without project, with
// the client's scope put on the keys that must not cross clients (a
// conversation's binding, a write's request id). A writing tool holds the
// project's write lock until release.
// Errors: InvalidInput for a missing or malformed project argument or a
// read grant on a writing tool; NotFound for a project not served to the
// client.
func (sh *Shared) target(ctx context.Context, req *mcp.CallToolRequest, t tool) (context.Context, *project.Project, json.RawMessage, func(), error) {
	c := sh.clientOf(req)
	if c == nil {
		return ctx, nil, nil, nil, fault.New(fault.InvalidInput, "%s: no client: the shared service answers authenticated requests only", t.name)
	}
	ctx = context.WithValue(ctx, clientKey{}, c)
	raw := req.Params.Arguments
	if t.global {
		return ctx, nil, raw, func() {}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return ctx, nil, nil, nil, fault.New(fault.InvalidInput, "%s: arguments must be a JSON object with project (awr_projects_list names them)", t.name).With("field", "project")
	}
	name, ok := m["project"].(string)
	if !ok || name == "" {
		return ctx, nil, nil, nil, fault.New(fault.InvalidInput, "%s: project is required on the shared service: one of the names awr_projects_list gives", t.name).With("field", "project")
	}
	sp, err := sh.grant(c, name, t.name, t.readOnly)
	if err != nil {
		return ctx, nil, nil, nil, err
	}
	delete(m, "project")
	scopeArguments(c.Name, m)
	b, err := json.Marshal(m)
	if err != nil {
		return ctx, nil, nil, nil, fault.Wrap(fault.Internal, err, "%s: encode arguments", t.name)
	}
	release := func() {}
	if !t.readOnly {
		if release, err = sp.lock(ctx, t.name, sh.timeout); err != nil {
			return ctx, nil, nil, nil, err
		}
	}
	return ctx, sp.project, b, release, nil
}

// clientOf returns the client a tool call came from: the one its
// session's bearer token named.
func (sh *Shared) clientOf(req *mcp.CallToolRequest) *RegistryClient {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil
	}
	return sh.reg.Clients[req.Extra.TokenInfo.UserID]
}

// scopeArguments puts client's name on the keys of a call that must not
// cross clients: a host conversation's id (external_session: its binding
// is keyed CLIENT:<name>/ID, or HOST:<name>/ID for a generic client), so
// that one client can neither read nor rebind another's conversation, and
// a write's request_id (<name>/ID), so that a retried request never gets
// another client's first answer.
func scopeArguments(client string, m map[string]any) {
	if v, ok := m["request_id"].(string); ok && v != "" {
		m["request_id"] = client + "/" + v
	}
	v, ok := m["external_session"].(string)
	if !ok || v == "" {
		return
	}
	host, _ := m["client"].(string)
	if host != "" && isHostClient(host) {
		m["external_session"] = client + "/" + v
		return
	}
	if h, id, ok := strings.Cut(v, ":"); ok {
		m["external_session"] = h + ":" + client + "/" + id
		return
	}
	m["external_session"] = client + "/" + v
}

// isHostClient reports whether c is a host whose conversation ids awr
// takes as the host reports them (project.HostClients).
func isHostClient(c string) bool {
	for _, h := range project.HostClients {
		if h == c {
			return true
		}
	}
	return false
}

// Handler returns the service's HTTP handler for a listener at addr
// (HOST:PORT): it answers SharedPath only.
func (sh *Shared) Handler(addr string, logger *slog.Logger) http.Handler {
	hosts := hostcheck.Allowed(addr)
	for _, h := range sh.reg.AllowedHosts {
		hosts[h] = true
	}
	origins := map[string]bool{}
	for h := range hosts {
		if hostcheck.LoopbackAddr(h) {
			origins["http://"+h] = true
		}
	}
	for _, o := range sh.reg.AllowedOrigins {
		origins[o] = true
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sh.srv.mcp }, &mcp.StreamableHTTPOptions{
		// The Host check below is the service's own (loopback names and
		// the registry's allowed_hosts), made before the SDK's.
		DisableLocalhostProtection: true,
		SessionTimeout:             sessionIdle,
		Logger:                     logger,
		JSONResponse:               true,
	})
	// The SDK ties a session to the TokenInfo's UserID of the request
	// that opened it: a session id used with another client's token is
	// refused.
	withToken := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		c, _ := ctx.Value(clientKey{}).(*RegistryClient)
		if c == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: c.Name}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(mcpHandler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if !hosts[strings.ToLower(r.Host)] {
			refuse(w, http.StatusForbidden, jsonrpc.ID{}, fault.New(fault.InvalidInput, "awr-mcp: Host %s is not one this service answers (the listening address, loopback names, the registry's allowed_hosts)", r.Host).With("host", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !origins[strings.ToLower(o)] {
			refuse(w, http.StatusForbidden, jsonrpc.ID{}, fault.New(fault.InvalidInput, "awr-mcp: Origin %s is not allowed (loopback origins and the registry's allowed_origins are)", o).With("origin", o))
			return
		}
		if r.URL.Path != SharedPath {
			refuse(w, http.StatusNotFound, jsonrpc.ID{}, fault.New(fault.NotFound, "awr-mcp: nothing is served at %s; the service answers at %s", r.URL.Path, SharedPath).With("path", r.URL.Path))
			return
		}
		c := sh.authenticate(r)
		if c == nil {
			if logger != nil {
				logger.Debug("unauthenticated", "remote", r.RemoteAddr)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="awr-mcp"`)
			refuse(w, http.StatusUnauthorized, jsonrpc.ID{}, fault.New(fault.InvalidInput, "awr-mcp: a bearer token of a client of the registry is required (Authorization: Bearer TOKEN)"))
			return
		}
		ctx := context.WithValue(r.Context(), clientKey{}, c)
		r = r.WithContext(ctx)
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
			if err != nil {
				refuse(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, fault.New(fault.InvalidInput, "awr-mcp: request body: %v", err))
				return
			}
			if id, ferr := sh.forbidden(c, body); ferr != nil {
				if logger != nil {
					logger.Info("refused", "client", c.Name, "code", ferr.Code, "message", ferr.Message)
				}
				refuse(w, http.StatusForbidden, id, ferr)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		withToken.ServeHTTP(w, r)
	})
}

// authenticate returns the client the request's bearer token names, or
// nil.
func (sh *Shared) authenticate(r *http.Request) *RegistryClient {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return nil
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil
	}
	return sh.client(token)
}

// forbidden checks every tools/call of a POST body against the client's
// grants, before the SDK reads it, and returns the first call refused
// with its id: a project it has no grant on (or that does not exist: the
// same answer) or a writing tool on a project it may only read. A body
// that does not decode is left to the SDK to answer.
func (sh *Shared) forbidden(c *RegistryClient, body []byte) (jsonrpc.ID, *fault.Error) {
	var msgs []json.RawMessage
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return jsonrpc.ID{}, nil
		}
	} else {
		msgs = []json.RawMessage{trimmed}
	}
	for _, raw := range msgs {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Method != "tools/call" {
			continue
		}
		readOnly, known := sh.srv.access[m.Params.Name]
		if !known {
			continue // the SDK answers an unknown tool
		}
		if sh.srv.global[m.Params.Name] {
			continue
		}
		name, _ := m.Params.Arguments["project"].(string)
		if name == "" {
			continue // the tool answers InvalidInput
		}
		if _, err := sh.grant(c, name, m.Params.Name, readOnly); err != nil {
			return idOf(m.ID), fault.As(err)
		}
	}
	return jsonrpc.ID{}, nil
}

// idOf decodes a JSON-RPC id; the zero ID when it is not one.
func idOf(raw json.RawMessage) jsonrpc.ID {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// refuse answers a request the service refuses before the SDK sees it:
// the HTTP status, and a JSON-RPC error response (with the request's id
// when known) whose data is awr's error object, so that an SDK client
// surfaces it to the call and curl shows it.
func refuse(w http.ResponseWriter, status int, id jsonrpc.ID, e *fault.Error) {
	code := int64(-32001)
	if status == http.StatusForbidden {
		code = -32003
	}
	data, _ := marshal(fault.ObjectOf(e))
	resp := struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{JSONRPC: "2.0", ID: id.Raw(), Error: jsonrpc.Error{Code: code, Message: e.Message, Data: data}}
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// Listen listens on addr for the shared service. Any address may be
// named except a wildcard (0.0.0.0, ::, an empty host) or a host name
// other than localhost: the service listens on loopback, or on one
// interface's address named in full.
// Errors: InvalidInput for an address refused or malformed; Storage when
// it cannot be listened on.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fault.New(fault.InvalidInput, "awr-mcp: --listen %q is not HOST:PORT: %v", addr, err).With("flag", "--listen").With("listen", addr)
	}
	if !hostcheck.LoopbackAddr(net.JoinHostPort(host, port)) {
		ip := net.ParseIP(host)
		switch {
		case host == "" || ip != nil && ip.IsUnspecified():
			return nil, fault.New(fault.InvalidInput, "awr-mcp: --listen %s would serve on every interface; name loopback (127.0.0.1:%s) or one interface's address in full", addr, port).
				With("flag", "--listen").With("listen", addr)
		case ip == nil:
			return nil, fault.New(fault.InvalidInput, "awr-mcp: --listen %s names a host, not an address; name the interface's IP address (or localhost)", addr).
				With("flag", "--listen").With("listen", addr)
		}
	}
	if host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "awr-mcp: listen on %s", addr).With("listen", addr)
	}
	return ln, nil
}

// Serve serves the shared service on ln until ctx is done, then shuts
// down: open requests get a second to finish, and open streams are cut.
// A request's headers may take 64 KiB and 10 s, its body 4 MiB
// (mcp.DefaultMaxRequestBodyBytes); an idle connection is closed after
// 2 minutes, an idle session after 30.
// Errors: Storage when serving fails for another reason.
func (sh *Shared) Serve(ctx context.Context, ln net.Listener, logger *slog.Logger) error {
	srv := &http.Server{Handler: sh.Handler(ln.Addr().String(), logger), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fault.Wrap(fault.Storage, err, "awr-mcp: serve on %s", ln.Addr())
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fault.Wrap(fault.Storage, err, "awr-mcp: serve on %s", ln.Addr())
	}
	return nil
}
