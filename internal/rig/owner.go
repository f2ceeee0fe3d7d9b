package rig

import (
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/process"
)

// self identifies this process for restore_started.
func self() *events.RestoreOwner {
	id := process.Self()
	return &events.RestoreOwner{Host: id.Host, BootID: id.BootID, PID: id.PID, StartTicks: id.StartTicks}
}

// running reports whether the process o names still runs (see
// process.Running).
func running(o *events.RestoreOwner) bool {
	if o == nil {
		return false // written before owners were recorded: treat as crashed
	}
	return process.Running(process.Identity{Host: o.Host, BootID: o.BootID, PID: o.PID, StartTicks: o.StartTicks})
}
