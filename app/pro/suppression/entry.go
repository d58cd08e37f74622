package suppression

import "time"

// Suppression reasons.
const (
	SuppressBounce      = "bounce"      // a hard bounce
	SuppressComplaint   = "complaint"   // a spam complaint
	SuppressUnsubscribe = "unsubscribe" // the recipient unsubscribed through the provider
	SuppressManual      = "manual"      // added by an administrator
)

// Suppression is an address mail is no longer sent to (an entry of the
// list). Email is stored lower-cased and is unique.
type Suppression struct {
	ID     int64  `json:"id"`
	Email  string `json:"email"`
	Reason string `json:"reason"`
	// SourceEvent says what put the address on the list, e.g.
	// "ses:bounce:Permanent/General" or "manual".
	SourceEvent string    `json:"source_event"`
	CreatedAt   time.Time `json:"created_at"`
}

// SuppressionFilter selects suppressions in a list.
type SuppressionFilter struct {
	// Search matches addresses containing it, ignoring case.
	Search string
	Offset int
	Limit  int // 0: no limit
}
