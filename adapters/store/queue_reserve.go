package store

import (
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// The queue's updates on MySQL and MariaDB keep a log's row the same size
// or smaller, so that InnoDB rewrites it in the space it has: a row that
// grows past its page's free space costs a reorganisation of the page,
// logged in the redo log at several times the row's size. A queued row
// is inserted with queueReserve bytes in its queue_reserve column (the
// column's default, so rows written by the WordPress bridge carry them
// too):
//
//   - the claim fills lease_owner and lease_until and lengthens the
//     status ("queued" to "sending"), and cuts the reserve by as much
//     (claimReserveCut), or to NULL when less is left;
//   - an outcome that ends the log (delivered, failed) empties the lease
//     columns and sets the reserve to NULL, which leaves room for the
//     sent connection, the delivery time and a provider message id of up
//     to about a hundred bytes;
//   - an outcome that puts the log back in the queue keeps what is left
//     of the reserve, and the emptied lease columns make room for the
//     next claim.
//
// A row that still outgrows its space (a long error text, a row written
// before the column existed) is written as before: the reserve is an
// economy, never a condition.
const queueReserve = 128

// queueReserveMax is the column's width: the reserve, as SQL text.
var queueReserveMax = strconv.Itoa(queueReserve)

// queueReserveDefault is the column's default: queueReserve zero bytes.
var queueReserveDefault = "x'" + strings.Repeat("00", queueReserve) + "'"

// claimReserveCut is how many bytes of the reserve the claim of a log by
// owner gives up: the owner's bytes, their length byte, the lease's
// expiry (8 bytes), one more byte of status, and a byte to spare.
func claimReserveCut(owner string) int { return len(owner) + 1 + 8 + 1 + 1 }

// writeReserveRelease appends to an outcome UPDATE's SET list the
// assignment that frees the reserve of the logs that outs end (every
// status but queued), keeping the others' for their next claim.
func writeReserveRelease(b *strings.Builder, args *[]any, outs []core.LogOutcome) {
	var ended []int64
	for _, o := range outs {
		if o.Status != core.StatusQueued {
			ended = append(ended, o.LogID)
		}
	}
	switch len(ended) {
	case 0:
		return
	case len(outs):
		b.WriteString("queue_reserve = NULL, ")
		return
	}
	in, ids := inList(ended)
	b.WriteString("queue_reserve = CASE WHEN id IN (" + in + ") THEN NULL ELSE queue_reserve END, ")
	*args = append(*args, ids...)
}
