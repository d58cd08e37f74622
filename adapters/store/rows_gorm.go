package store

import (
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/mailsvc/mailsvc/core"
)

// TakeByID reads the row of id from q (a table's query) and converts it
// with to: the one lookup by id of the tables read through gorm. No row
// is ENOTFOUND saying notFound (a format whose one verb is the id);
// another error is wrapped as "find <what> <id>".
func TakeByID[R, T any](q *gorm.DB, id int64, what, notFound string, to func(*R) (T, error)) (T, error) {
	var row R
	err := q.Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		var zero T
		return zero, core.Errorf(core.ENOTFOUND, notFound, id)
	} else if err != nil {
		var zero T
		return zero, fmt.Errorf("find %s %d: %w", what, id, err)
	}
	return to(&row)
}

// ConvertRows converts each of rows with to, in order, and stops at the
// first error.
func ConvertRows[R, T any](rows []R, to func(*R) (T, error)) ([]T, error) {
	out := make([]T, 0, len(rows))
	for i := range rows {
		v, err := to(&rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
