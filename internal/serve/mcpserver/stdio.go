package mcpserver

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio runs the server for opts on the process's stdin and stdout
// until the host disconnects or ctx is done, then closes the project.
// Logs go to opts.Logger only (stderr in both binaries): stdout carries
// protocol messages and nothing else.
func ServeStdio(ctx context.Context, opts Options) error {
	return Serve(ctx, opts, os.Stdin, os.Stdout)
}

// Serve is ServeStdio on in and w: one JSON-RPC message a line each way,
// framed as on stdio (the benchmarks serve a pipe with it).
func Serve(ctx context.Context, opts Options, in io.Reader, w io.Writer) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.Logger != nil {
		opts.Logger.Info("awr-mcp serving", "project", s.project.Dir(), "version", s.opts.Version)
	}
	p := newPending()
	out := &lockedWriter{w: w, pending: p}
	// framed passes on lines of at most MaxLine bytes, one per write; the
	// SDK's own bound (per message, counted over what it reads ahead) is
	// set so that it never trips on one of them.
	err = s.Run(ctx, &lineTransport{io: &mcp.IOTransport{Reader: framed(in, out, p), Writer: out, MaxLineLength: 2*MaxLine + 64<<10}, w: out})
	out.flush()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
		return nil
	}
	return err
}
