package main

import (
	"fmt"
	"io"
)

type versionCmd struct{}

// Run prints the version.
func (c *versionCmd) Run(app *App) error {
	v := struct {
		Version string `json:"version"`
	}{Version()}
	return app.render(v, func(w io.Writer) { fmt.Fprintf(w, "awr %s\n", v.Version) })
}
