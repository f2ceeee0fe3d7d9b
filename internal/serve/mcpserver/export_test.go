package mcpserver

import "sync"

// WriteLock returns the lock that serializes the writes of the shared
// service's project name, for tests that hold it.
func WriteLock(sh *Shared, name string) *sync.Mutex { return &sh.projects[name].writes }
