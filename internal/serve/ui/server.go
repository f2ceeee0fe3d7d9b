package ui

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/serve/hostcheck"
)

//go:embed assets/index.html assets/app.js assets/app.css
var assets embed.FS

// DefaultListen is the address `awr ui` listens on without --listen: the
// loopback interface, on a port the system picks.
const DefaultListen = "127.0.0.1:0"

// Listen opens the listener of `awr ui` on addr, the value of --listen
// ("" is DefaultListen). A loopback address (127.0.0.0/8, ::1, localhost)
// is always accepted; any other must be one interface's IP address named
// in full, since the caller passes only what the user typed after
// --listen: a wildcard (0.0.0.0, ::, an empty host) or a host name is
// refused.
// Errors: InvalidInput for an address refused or malformed; Storage when
// the address cannot be listened on (in use, not this machine's).
func Listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = DefaultListen
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fault.New(fault.InvalidInput, "ui: --listen %q is not HOST:PORT: %v", addr, err).
			With("flag", "--listen").With("listen", addr).WithHint("awr ui --listen %s", DefaultListen)
	}
	if !hostcheck.Loopback(host) {
		ip := net.ParseIP(host)
		switch {
		case host == "" || ip != nil && ip.IsUnspecified():
			return nil, fault.New(fault.InvalidInput, "ui: --listen %s would serve the log on every interface; awr ui serves on loopback, or on one interface's address named in full", addr).
				With("flag", "--listen").With("listen", addr).WithHint("awr ui --listen 127.0.0.1:%s", port)
		case ip == nil:
			return nil, fault.New(fault.InvalidInput, "ui: --listen %s names a host, not an address; name the interface's IP address (or localhost)", addr).
				With("flag", "--listen").With("listen", addr).WithHint("awr ui --listen 127.0.0.1:%s", port)
		}
	}
	if host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "ui: listen on %s", addr).With("listen", addr).WithHint("awr ui --listen %s", DefaultListen)
	}
	return ln, nil
}

// URL returns the address of the page a listener serves.
func URL(ln net.Listener) string {
	return "http://" + ln.Addr().String() + "/"
}

// Loopback reports whether the listener is on a loopback address.
func Loopback(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// Serve serves the page and its API for p on ln until ctx is done, then
// shuts down and returns nil: open requests (reads only) get a quarter of
// a second to finish and are then cut off, well inside the time awr gives
// a command to stop after a signal (cmd/awr's graceAfterSignal), so that
// Ctrl-C ends `awr ui` with exit 0 even while a verify is being served.
// Errors: Storage when serving fails for another reason.
func Serve(ctx context.Context, ln net.Listener, p *project.Project) error {
	srv := &http.Server{Handler: Handler(p, ln.Addr().String()), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fault.Wrap(fault.Storage, err, "ui: serve on %s", ln.Addr())
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fault.Wrap(fault.Storage, err, "ui: serve on %s", ln.Addr())
	}
	return nil
}

// shutdownGrace is how long open requests may take once Serve stops.
const shutdownGrace = 250 * time.Millisecond

// Handler returns the read-only handler of the page (/, /app.js,
// /app.css) and its JSON API (/api/...) for p, served at addr (the
// listener's HOST:PORT). It answers only GET and HEAD (any other method
// is 405) and only requests whose Host header names addr (or, on a
// loopback address, localhost, 127.0.0.1 or [::1] with addr's port): a
// page of another site that a DNS rebinding points at the port is
// refused with 403.
func Handler(p *project.Project, addr string) http.Handler {
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	files := http.FileServerFS(static)
	mux.Handle("GET /{$}", files)
	mux.Handle("GET /app.js", files)
	mux.Handle("GET /app.css", files)
	a := &api{p: p}
	a.routes(mux)
	hosts := hostcheck.Allowed(addr)
	origins := map[string]bool{}
	for h := range hosts {
		origins["http://"+h] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'")
		if !hosts[strings.ToLower(r.Host)] {
			refuse(w, http.StatusForbidden, fault.New(fault.InvalidInput, "ui: Host %s is not the address this page is served on (%s); open http://%s/", r.Host, addr, addr).
				With("host", r.Host).WithHint("awr ui"))
			return
		}
		// A page of another site (or a sandboxed frame, "null") may not
		// read the log through the visitor's browser: a request that
		// names an Origin must name this page's.
		if o := r.Header.Get("Origin"); o != "" && !origins[strings.ToLower(o)] {
			refuse(w, http.StatusForbidden, fault.New(fault.InvalidInput, "ui: Origin %s is not this page's (http://%s); awr ui answers its own page only", o, addr).
				With("origin", o).WithHint("awr ui"))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			refuse(w, http.StatusMethodNotAllowed, fault.New(fault.InvalidInput, "ui: awr ui is read-only: %s is not allowed", r.Method).
				With("method", r.Method))
			return
		}
		mux.ServeHTTP(w, r)
	})
}
