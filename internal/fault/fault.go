// Package fault defines awr's typed errors: every failure a user can see
// carries a stable code, a message naming what was wrong and where, optional
// structured details and a hint with the next command to run.
package fault

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error class. Codes are part of awr's
// public contract and are never renamed.
type Code string

// The error codes awr emits.
const (
	RevisionConflict  Code = "RevisionConflict"
	ClaimConflict     Code = "ClaimConflict"
	NotFound          Code = "NotFound"
	InvalidInput      Code = "InvalidInput"
	InvalidTransition Code = "InvalidTransition"
	DependencyBlocked Code = "DependencyBlocked"
	SourceStale       Code = "SourceStale"
	SourceConflict    Code = "SourceConflict"
	BudgetExceeded    Code = "BudgetExceeded"
	ContextIncomplete Code = "ContextIncomplete"
	RestoreIncomplete Code = "RestoreIncomplete"
	// RestatementMismatch: a successor's restatement of the handoff does not
	// match the recorded state (awr recovery verify).
	RestatementMismatch Code = "RestatementMismatch"
	VerifyFailed        Code = "VerifyFailed"
	// EvidenceMissing: a work item cannot be completed because an
	// acceptance criterion lacks passing evidence at the current
	// repository state (awr work complete).
	EvidenceMissing Code = "EvidenceMissing"
	RuleViolation   Code = "RuleViolation"
	// ReadOnlyReplica: a write to an imported copy of a project (a
	// replica), refused until it is forked on purpose (awr fork --accept).
	ReadOnlyReplica Code = "ReadOnlyReplica"
	Storage         Code = "Storage"
	Usage           Code = "Usage"
	Internal        Code = "Internal"
)

// Error is a coded awr error. Message is lowercase and prefixed with the
// operation; Details holds structured facts (ids, revisions, paths); Hint is
// the command a user should run next, if there is one.
type Error struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	Hint    string         `json:"hint,omitempty"`
	cause   error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// New returns an Error with the given code and formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns a Storage-class (or the given code) error carrying cause.
func Wrap(code Code, cause error, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Error{Code: code, Message: msg, cause: cause}
}

// WithHint sets the hint and returns e.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// With adds one detail and returns e.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// As returns the *Error in err's chain, or an Internal error wrapping err
// when err carries no code. As(nil) is nil.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return &Error{Code: Internal, Message: err.Error(), cause: err}
}

// CodeOf returns err's code, or "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return As(err).Code
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }

// ExitCode is the process exit status for err: 0 for nil, 2 for usage
// errors, 1 for every other (domain) error.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case CodeOf(err) == Usage:
		return 2
	default:
		return 1
	}
}
