// Package rig runs teams of agents as seats: stable addresses (ROLE@RIG)
// whose agents live in tmux sessions. It brings a rig up (launching each
// stopped seat with a session, a claim and a compiled context file), takes
// it down with a snapshot (asking each agent to checkpoint first), and
// restores it with one honest outcome per seat: resumed, fresh-primed,
// awaiting-decision, attention_required or failed. Every step is an event,
// so a restore is auditable, visible at any revision and continues after a
// crash without relaunching seats already restored.
package rig
