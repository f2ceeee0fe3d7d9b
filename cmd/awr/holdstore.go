package main

import (
	"os"

	"github.com/awr-dev/awr/internal/project"
)

// holdStoreCmd runs the connection holder of a shared store (the URL in
// AWR_STORE_HOLD_URL): awr starts it in the background, in a session of
// its own and without standard streams, for the commands of a project on
// a shared store (internal/storehold); no one types it.
type holdStoreCmd struct{}

// Run serves until the holder has had no client for a while.
func (c *holdStoreCmd) Run(app *App) error {
	return project.HoldStore(app.Ctx, os.Getenv("AWR_STORE_HOLD_URL"))
}
