package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Kind names an event type. Kinds are stored verbatim in the log and are
// never renamed once released; new kinds may be added.
type Kind string

// The event kinds awr writes. Payload structs live one file per aggregate:
// project.go, source.go, session.go, claim.go, client.go, rig.go,
// execution.go.
const (
	KindProjectInitialized   Kind = "project_initialized"
	KindSourceIndexed        Kind = "source_indexed"
	KindSessionStarted       Kind = "session_started"
	KindClaimAcquired        Kind = "claim_acquired"
	KindClaimRenewed         Kind = "claim_renewed"
	KindClaimReleased        Kind = "claim_released"
	KindContextCompiled      Kind = "context_compiled"
	KindCheckpointRecorded   Kind = "checkpoint_recorded"
	KindSessionEnded         Kind = "session_ended"
	KindSessionResumed       Kind = "session_resumed"
	KindClientBound          Kind = "client_bound"
	KindSeatDeclared         Kind = "seat_declared"
	KindSeatRemoved          Kind = "seat_removed"
	KindSeatLaunched         Kind = "seat_launched"
	KindStopRequested        Kind = "stop_requested"
	KindRigSnapshotTaken     Kind = "rig_snapshot_taken"
	KindRestoreStarted       Kind = "restore_started"
	KindSeatRestored         Kind = "seat_restored"
	KindRestoreCompleted     Kind = "restore_completed"
	KindSeatDecided          Kind = "seat_decided"
	KindSeatAttentionCleared Kind = "seat_attention_cleared"
	KindRestatementChecked   Kind = "restatement_checked"
	KindHostEventRecorded    Kind = "host_event_recorded"
	KindSeatMessageSent      Kind = "seat_message_sent"
	KindSeatReconciled       Kind = "seat_reconciled"
	KindEvidenceRecorded     Kind = "evidence_recorded"
	KindWorkVerified         Kind = "work_verified"
	KindExecutionStarted     Kind = "execution_started"
	KindExecutionFinished    Kind = "execution_finished"
	KindProjectForked        Kind = "project_forked"
	KindKnowledgeConfirmed   Kind = "knowledge_confirmed"
)

// Payload is the typed content of an event: one struct per kind, declared
// one file per aggregate. Each payload names its own kind, so an append
// takes the kind from the payload and the two cannot disagree. Both a
// payload struct and a pointer to it are Payloads; decoding yields the
// pointer (e.g. *SessionStarted).
type Payload interface {
	// Kind returns the kind the payload is stored under.
	Kind() Kind
}

// payloadTypes maps each kind to a constructor of its payload struct; the
// constructed payload's Kind is the key (TestPayloadTypes checks it).
var payloadTypes = map[Kind]func() Payload{
	KindProjectInitialized:   func() Payload { return new(ProjectInitialized) },
	KindSourceIndexed:        func() Payload { return new(SourceIndexed) },
	KindSessionStarted:       func() Payload { return new(SessionStarted) },
	KindClaimAcquired:        func() Payload { return new(ClaimAcquired) },
	KindClaimRenewed:         func() Payload { return new(ClaimRenewed) },
	KindClaimReleased:        func() Payload { return new(ClaimReleased) },
	KindContextCompiled:      func() Payload { return new(ContextCompiled) },
	KindCheckpointRecorded:   func() Payload { return new(CheckpointRecorded) },
	KindSessionEnded:         func() Payload { return new(SessionEnded) },
	KindSessionResumed:       func() Payload { return new(SessionResumed) },
	KindClientBound:          func() Payload { return new(ClientBound) },
	KindSeatDeclared:         func() Payload { return new(SeatDeclared) },
	KindSeatRemoved:          func() Payload { return new(SeatRemoved) },
	KindSeatLaunched:         func() Payload { return new(SeatLaunched) },
	KindStopRequested:        func() Payload { return new(StopRequested) },
	KindRigSnapshotTaken:     func() Payload { return new(RigSnapshotTaken) },
	KindRestoreStarted:       func() Payload { return new(RestoreStarted) },
	KindSeatRestored:         func() Payload { return new(SeatRestored) },
	KindRestoreCompleted:     func() Payload { return new(RestoreCompleted) },
	KindSeatDecided:          func() Payload { return new(SeatDecided) },
	KindSeatAttentionCleared: func() Payload { return new(SeatAttentionCleared) },
	KindRestatementChecked:   func() Payload { return new(RestatementChecked) },
	KindHostEventRecorded:    func() Payload { return new(HostEventRecorded) },
	KindSeatMessageSent:      func() Payload { return new(SeatMessageSent) },
	KindSeatReconciled:       func() Payload { return new(SeatReconciled) },
	KindEvidenceRecorded:     func() Payload { return new(EvidenceRecorded) },
	KindWorkVerified:         func() Payload { return new(WorkVerified) },
	KindExecutionStarted:     func() Payload { return new(ExecutionStarted) },
	KindExecutionFinished:    func() Payload { return new(ExecutionFinished) },
	KindProjectForked:        func() Payload { return new(ProjectForked) },
	KindKnowledgeConfirmed:   func() Payload { return new(KnowledgeConfirmed) },
}

// Kinds returns every known kind, sorted.
func Kinds() []Kind {
	out := make([]Kind, 0, len(payloadTypes))
	for k := range payloadTypes {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Known reports whether k is a kind this version of awr understands.
func Known(k Kind) bool {
	_, ok := payloadTypes[k]
	return ok
}

// DecodePayload decodes a stored payload into the typed struct for kind (a
// pointer, e.g. *SessionStarted), whose Kind is kind. Payloads evolve by adding fields only:
// fields unknown to this version are ignored and fields missing from old
// events take their zero value. An unknown kind or a payload that is not a
// JSON object of the right shape is an error.
func DecodePayload(kind Kind, payload []byte) (Payload, error) {
	mk, ok := payloadTypes[kind]
	if !ok {
		return nil, fmt.Errorf("decode payload: unknown event kind %q", kind)
	}
	v := mk()
	if err := json.Unmarshal(payload, v); err != nil {
		return nil, fmt.Errorf("decode payload: %s: %w", kind, err)
	}
	return v, nil
}

// CanonicalJSON returns the canonical form of a JSON document: object keys
// sorted, no insignificant whitespace, numbers kept exactly as written. The
// log stores payloads in this form, so the bytes hashed are the bytes
// exported and re-imported.
func CanonicalJSON(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return EncodeJSON(v)
}

// EncodeJSON returns v as JSON as the log writes it: without HTML
// escaping (a "<" stays "<") and without a trailing newline.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// MarshalPayload encodes a payload struct in canonical JSON. The payload must
// encode as a JSON object.
func MarshalPayload(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal payload: %w", err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("marshal payload: payload must be a JSON object")
	}
	if out, err := canonicalCompact(raw); err == nil {
		return out, nil
	}
	return CanonicalJSON(raw)
}
