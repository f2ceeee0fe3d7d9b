package mcpserver

// HoldWrites takes the write lock of the shared service's project name,
// as a write through it would, and returns its release, for tests.
func HoldWrites(sh *Shared, name string) (release func()) {
	sp := sh.projects[name]
	sp.writes <- struct{}{}
	return func() { <-sp.writes }
}
