package mcpserver

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subscriptions. A client may subscribe (resources/subscribe) to
// awr://status and to any context packet URI. While it is subscribed, the
// server watches the project_revision and, whenever it moves (a write
// through this server, another process, or another machine of a shared
// log), sends notifications/resources/updated for every subscribed URI;
// the client reads them again. On a shared log the watch is woken by the
// shared log's NOTIFY (a wake-up only: the revision is read by position,
// and it looks anyway every few seconds); on a project's own log it looks
// every DefaultFollowInterval. Nothing is watched while nothing is
// subscribed.
type watcher struct {
	mu   sync.Mutex
	uris map[string]int // subscribed URI -> subscriptions to it
	stop context.CancelFunc
	done chan struct{}
}

// watchRetry is the pause after a failed read of the head (a server that
// is down), before the watch looks again.
const watchRetry = time.Second

// onSubscribe accepts a subscription to a URI the server serves, and
// starts the watch on the first one. Errors: for a URI that names no awr
// resource, the JSON-RPC error a read of it gives (resource not found).
func (s *Server) onSubscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if uri != StatusURI {
		if _, err := packetRequest(uri); err != nil {
			return s.resourceError(uri, err)
		}
	}
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.uris == nil {
		w.uris = map[string]int{}
	}
	w.uris[uri]++
	if w.stop == nil {
		// The head the watch starts from is read before the subscription
		// is answered, so a write right after it is never missed; a
		// project without a log yet starts from 0.
		ctx, stop := context.WithCancel(context.Background())
		w.stop, w.done = stop, make(chan struct{})
		go s.watchHead(ctx, w.done, s.headNow(ctx))
	}
	return nil
}

// Subscriptions returns the URIs subscribed to, sorted. A URI is listed
// once its subscription is in force: the watch has read the head it
// starts from, so any write after that is announced.
func (s *Server) Subscriptions() []string {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.uris))
	for uri := range w.uris {
		out = append(out, uri)
	}
	slices.Sort(out)
	return out
}

// headNow returns the project_revision, or 0 when the log cannot be read.
func (s *Server) headNow(ctx context.Context) int64 {
	h, err := s.project.Head(ctx)
	if err != nil {
		return 0
	}
	return h.ProjectRevision
}

// onUnsubscribe drops a subscription, and stops the watch with the last.
func (s *Server) onUnsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.uris[req.Params.URI] > 1 {
		w.uris[req.Params.URI]--
	} else {
		delete(w.uris, req.Params.URI)
	}
	if len(w.uris) == 0 && w.stop != nil {
		w.stop()
		w.stop = nil
	}
	return nil
}

// stopWatch ends the watch, if one runs, and waits for it.
func (s *Server) stopWatch() {
	w := &s.watch
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.stop = nil
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// watchHead sends resources/updated for every subscribed URI each time
// the project_revision moves, until ctx is done.
func (s *Server) watchHead(ctx context.Context, done chan struct{}, head int64) {
	defer close(done)
	for ctx.Err() == nil {
		h, err := s.project.WaitHead(ctx, head)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.debug("watch the project revision", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(watchRetry):
			}
			continue
		}
		s.watch.mu.Lock()
		uris := make([]string, 0, len(s.watch.uris))
		for uri := range s.watch.uris {
			uris = append(uris, uri)
		}
		s.watch.mu.Unlock()
		for _, uri := range uris {
			if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				s.debug("notify "+uri, err)
			}
		}
		head = h
	}
}
