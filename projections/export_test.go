package projections

import "github.com/awr-dev/awr/events"

// SpillingProjectors returns Projectors whose bulk rebuilds hold as
// little as they can: every projection that holds open versions spills
// (ends its bulk mode and goes on incrementally) once it holds more than
// one, and the worklog writes its rows every two. A rebuild with them
// must equal one with Projectors.
func SpillingProjectors() []events.Projector {
	out := Projectors()
	for _, p := range out {
		switch p := p.(type) {
		case interface{ holdOne() }:
			p.holdOne()
		case *worklog:
			p.batch = 2
		}
	}
	return out
}

// holdOne makes a bulk rebuild spill once it holds more than one open
// version.
func (p *versioned[T]) holdOne() { p.rows.heldMax = 1 }
