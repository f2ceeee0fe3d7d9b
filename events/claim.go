package events

// ClaimAcquired reserves a work item for a session (stream "work/<key>").
// ExpiresAt is UTC milliseconds, 0 for a claim without a lease. TTLms is
// the length of the lease, which every renewal by the holder extends it by
// (absent in claims acquired before it was recorded, and for a claim
// without a lease). The fencing token increases with every claim acquired
// on the same work item.
type ClaimAcquired struct {
	ClaimID      string `json:"claim_id"`
	Work         string `json:"work"`
	SessionID    string `json:"session_id"`
	Agent        string `json:"agent"`
	ExpiresAt    int64  `json:"expires_at,omitempty"`
	TTLms        int64  `json:"ttl_ms,omitempty"`
	FencingToken int64  `json:"fencing_token"`
	MovedFrom    string `json:"moved_from,omitempty"`
}

// Kind returns KindClaimAcquired.
func (ClaimAcquired) Kind() Kind { return KindClaimAcquired }

// ClaimRenewed extends a claim's lease (stream "work/<key>"). TTLms is
// the lease length the renewal applied, which later renewals by the holder
// reuse (absent in older renewals and when the lease is removed).
type ClaimRenewed struct {
	ClaimID   string `json:"claim_id"`
	Work      string `json:"work"`
	SessionID string `json:"session_id"`
	ExpiresAt int64  `json:"expires_at,omitempty"`
	TTLms     int64  `json:"ttl_ms,omitempty"`
}

// Kind returns KindClaimRenewed.
func (ClaimRenewed) Kind() Kind { return KindClaimRenewed }

// Reasons a claim is released.
const (
	ReleaseExplicit   = "released"
	ReleaseSessionEnd = "session_ended"
	ReleaseMoved      = "moved"
	// ReleaseRepaired: awr doctor repair expire-claim released a claim no
	// live agent would (Note says why).
	ReleaseRepaired = "repaired"
)

// ClaimReleased lets a claim go (stream "work/<key>"). ToSession names
// the session a handoff moved it to (`awr work handoff`; reason moved).
type ClaimReleased struct {
	ClaimID   string `json:"claim_id"`
	Work      string `json:"work"`
	SessionID string `json:"session_id"`
	Reason    string `json:"reason"`
	ToSession string `json:"to_session,omitempty"`
	Note      string `json:"note,omitempty"`
}

// Kind returns KindClaimReleased.
func (ClaimReleased) Kind() Kind { return KindClaimReleased }
