package main

import (
	"encoding/json"
	"fmt"

	"github.com/awr-dev/awr/internal/serve/ui"
)

type uiCmd struct {
	Listen string `name:"listen" help:"HOST:PORT to serve on (default 127.0.0.1:0: loopback, a free port). An address other than loopback is served only when named here in full." placeholder:"HOST:PORT"`
}

// uiStarted is the first line `awr ui --json` prints.
type uiStarted struct {
	URL     string `json:"url"`
	Project string `json:"project"`
}

// Run serves the read-only web page until SIGINT or SIGTERM (exit 0). The
// first line of stdout is the URL it serves.
func (c *uiCmd) Run(app *App) error {
	// A server that may run for days: its memory must not grow with the
	// log it reads (project.Options.Lean).
	app.lean = true
	p, err := app.project()
	if err != nil {
		return err
	}
	// Fail before listening when there is no log to show.
	if _, err := p.Head(app.Ctx); err != nil {
		return err
	}
	ln, err := ui.Listen(c.Listen)
	if err != nil {
		return err
	}
	url := ui.URL(ln)
	if app.JSON {
		b, _ := json.Marshal(uiStarted{URL: url, Project: p.Dir()})
		fmt.Fprintln(app.Stdout, string(b))
	} else {
		fmt.Fprintln(app.Stdout, url)
	}
	if !ui.Loopback(ln) {
		fmt.Fprintf(app.Stderr, "awr ui: serving on %s, not loopback: whoever reaches this address reads the whole log\n", ln.Addr())
	}
	fmt.Fprintf(app.Stderr, "awr ui: serving %s read-only; Ctrl-C stops\n", p.Dir())
	return ui.Serve(app.Ctx, ln, p)
}
