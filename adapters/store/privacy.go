package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.PersonalDataStore = (*PrivacyService)(nil)

// privacyIndexBatches bounds the search-index backlog (logs not yet in the
// addresses table) that a personal data request indexes before it looks
// addresses up; a larger backlog is matched in the message column.
const privacyIndexBatches = 10

// indexBacklog indexes up to privacyIndexBatches batches of logs not yet
// in the addresses table, so the lookups below read the index.
func (db *handle) indexBacklog(ctx context.Context) error {
	for range privacyIndexBatches {
		n, err := db.indexLogRecipients(ctx, 1000)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}

// namingLogIDs returns a query of the ids (column log_id) of the logs
// naming email (lower-cased) as sender, recipient or Reply-To, and its
// arguments: the addresses table's (email, log_id) index, and the logs not
// indexed yet through the partial index on recipients_indexed, matching
// the address as the message column's JSON holds it.
func namingLogIDs(email string) (string, []any) {
	js, _ := json.Marshal(email) // a string always encodes
	return `SELECT log_id FROM {prefix}mailsvc_log_recipients WHERE email = ?
		UNION SELECT id FROM {prefix}mailsvc_logs WHERE recipients_indexed = 0 AND message LIKE ? ESCAPE '!'`,
		[]any{email, `%"email":` + likeEscape(string(js)) + `%`}
}

// normalAddress is an address as the addresses table keeps it.
func normalAddress(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// FindLogsNaming implements core.PersonalDataStore.
func (db *PrivacyService) FindLogsNaming(ctx context.Context, email string, offset, limit int) ([]*core.Log, error) {
	email = normalAddress(email)
	if email == "" || limit <= 0 {
		return nil, nil
	}
	if err := db.indexBacklog(ctx); err != nil {
		return nil, fmt.Errorf("find logs naming an address: %w", err)
	}
	naming, args := namingLogIDs(email)
	ids, err := db.queryIDs(ctx, db.sqlDB, `SELECT n.log_id FROM (`+naming+`) n ORDER BY n.log_id LIMIT ? OFFSET ?`,
		append(args, limit, max(offset, 0))...)
	if err != nil {
		return nil, fmt.Errorf("find logs naming an address: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	in, inArgs := inList(ids)
	logs, err := queryLogs(ctx, db.sqlDB, db.expand(`SELECT `+logColumns+` FROM {prefix}mailsvc_logs WHERE id IN (`+in+`) ORDER BY id`), inArgs...)
	if err != nil {
		return nil, fmt.Errorf("find logs naming an address: %w", err)
	}
	return logs, nil
}

// queryIDs runs query (expanded) and returns its first column as ids.
func (db *handle) queryIDs(ctx context.Context, q Querier, query string, args ...any) ([]int64, error) {
	return column[int64](ctx, q, "query ids", db.expand(query), args)
}

// addressEraser replaces one address, ignoring case, in a log's texts.
type addressEraser struct {
	email, replacement string
	re                 *regexp.Regexp
}

func newAddressEraser(email, replacement string) *addressEraser {
	return &addressEraser{email: email, replacement: replacement, re: regexp.MustCompile(`(?i)` + regexp.QuoteMeta(email))}
}

// text returns s with every occurrence of the address replaced.
func (e *addressEraser) text(s string) string {
	return e.re.ReplaceAllLiteralString(s, e.replacement)
}

// addresses replaces each address of list that is the erased one by the
// bare replacement (its display name goes too) and the address inside
// the others' display names.
func (e *addressEraser) addresses(list []core.Address) []core.Address {
	for i, a := range list {
		if strings.EqualFold(strings.TrimSpace(a.Email), e.email) {
			list[i] = core.Address{Email: e.replacement}
		} else {
			list[i].Name = e.text(a.Name)
		}
	}
	return list
}

// message erases the address from m: addresses, subject and headers;
// bodies and attachments are removed.
func (e *addressEraser) message(m *core.Message) {
	m.From = e.addresses([]core.Address{m.From})[0]
	m.To, m.Cc, m.Bcc, m.ReplyTo = e.addresses(m.To), e.addresses(m.Cc), e.addresses(m.Bcc), e.addresses(m.ReplyTo)
	m.Subject = e.text(m.Subject)
	for i := range m.Headers {
		m.Headers[i].Value = e.text(m.Headers[i].Value)
	}
	m.Text, m.HTML, m.Attachments = "", "", nil
}

// EraseLogsNaming implements core.PersonalDataStore.
func (db *PrivacyService) EraseLogsNaming(ctx context.Context, email, replacement string, limit int) (erased, pending int, err error) {
	email = normalAddress(email)
	if email == "" || email == normalAddress(replacement) || limit <= 0 {
		return 0, 0, nil
	}
	if err := db.indexBacklog(ctx); err != nil {
		return 0, 0, fmt.Errorf("erase an address: %w", err)
	}
	naming, args := namingLogIDs(email)
	lock := ""
	if db.dialect == DialectMySQL {
		lock = " FOR UPDATE"
	}
	er := newAddressEraser(email, replacement)
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		erased, pending = 0, 0
		ids, err := db.queryIDs(ctx, tx, `SELECT l.id FROM {prefix}mailsvc_logs l JOIN (`+naming+`) n ON n.log_id = l.id
			WHERE l.status IN (?, ?) ORDER BY l.id LIMIT ?`+lock, append(args, core.StatusDelivered, core.StatusFailed, limit)...)
		if err != nil {
			return fmt.Errorf("select logs: %w", err)
		}
		if err := tx.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM {prefix}mailsvc_logs l JOIN (`+naming+`) n ON n.log_id = l.id
			WHERE l.status IN (?, ?, ?, ?)`), append(args, core.StatusQueued, core.StatusSending, core.StatusCaptured, core.StatusHeld)...).Scan(&pending); err != nil {
			return fmt.Errorf("count pending logs: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		in, inArgs := inList(ids)
		logs, err := queryLogs(ctx, tx, db.expand(`SELECT `+logColumns+` FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`), inArgs...)
		if err != nil {
			return fmt.Errorf("read logs: %w", err)
		}
		for _, l := range logs {
			if err := db.eraseLog(ctx, tx, l, er); err != nil {
				return err
			}
		}
		if err := db.eraseAttempts(ctx, tx, in, inArgs, er); err != nil {
			return err
		}
		if err := db.db.eraseModules(ctx, tx, ids, email); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_log_attachments WHERE log_id IN (`+in+`)`), inArgs...); err != nil {
			return fmt.Errorf("delete attachments: %w", err)
		}
		if _, err := tx.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_log_recipients
			WHERE log_id IN (`+in+`) AND email = ?`), append(inArgs, email)...); err != nil {
			return fmt.Errorf("delete addresses: %w", err)
		}
		var rows []recipientRow
		for _, l := range logs {
			rows = append(rows, recipientRows(l.ID, &l.Message)...)
		}
		if err := db.insertRecipients(ctx, tx, rows); err != nil {
			return err
		}
		if err := db.enterPassedAddresses(ctx, tx, rows); err != nil {
			return err
		}
		// The address leaves the search dictionary once no log names it
		// (a message still queued keeps it).
		if err := db.forgetUnusedAddresses(ctx, tx, []string{email}); err != nil {
			return err
		}
		erased = len(logs)
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("erase an address: %w", err)
	}
	return erased, pending, nil
}

// eraseLog rewrites one log's row (and on MySQL its subjects row) with
// the address erased (addressEraser.message).
func (db *handle) eraseLog(ctx context.Context, tx *sql.Tx, l *core.Log, er *addressEraser) error {
	subject := l.Message.Subject
	er.message(&l.Message)
	js, err := encodeMessage(&l.Message)
	if err != nil {
		return fmt.Errorf("erase log %d: %w", l.ID, err)
	}
	if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET recipients = ?, subject = ?,
		text_body = '', html_body = '', message = ?, last_error = ? WHERE id = ?`),
		recipientsText(&l.Message), l.Message.Subject, js, er.text(l.LastError), l.ID); err != nil {
		return fmt.Errorf("erase log %d: %w", l.ID, err)
	}
	if db.dialect == DialectMySQL && subject != l.Message.Subject {
		if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_log_subjects SET subject = ? WHERE log_id = ?`),
			l.Message.Subject, l.ID); err != nil {
			return fmt.Errorf("erase log %d subject: %w", l.ID, err)
		}
	}
	return nil
}

// eraseAttempts replaces the address in the responses and errors of the
// attempts of the logs in (in, args).
func (db *handle) eraseAttempts(ctx context.Context, tx *sql.Tx, in string, args []any, er *addressEraser) error {
	type change struct {
		id              int64
		response, error string
	}
	var changes []change
	err := EachRow(ctx, tx, "read attempts", db.expand(`SELECT id, response, error FROM {prefix}mailsvc_log_attempts
		WHERE log_id IN (`+in+`)`), args, func(row RowScanner) error {
		var c change
		if err := row.Scan(&c.id, &c.response, &c.error); err != nil {
			return err
		}
		if r, e := er.text(c.response), er.text(c.error); r != c.response || e != c.error {
			changes = append(changes, change{c.id, r, e})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range changes {
		if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_log_attempts SET response = ?, error = ? WHERE id = ?`),
			c.response, c.error, c.id); err != nil {
			return fmt.Errorf("erase attempt %d: %w", c.id, err)
		}
	}
	return nil
}
