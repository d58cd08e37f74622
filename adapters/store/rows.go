package store

import (
	"context"
	"fmt"
	"strings"
)

// EachRow runs query on q and calls scan for each row it returns, in
// order, closing the rows however it ends: the one row-scan loop of the
// range queries. An error (the query's, scan's or the rows') is returned
// wrapped with what.
func EachRow(ctx context.Context, q Querier, what, query string, args []any, scan func(r RowScanner) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// IDList returns "?,?,..." and the arguments of an IN list of ids.
func IDList(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?,", len(ids)), ","), args
}

// idChunk bounds the ids of one IN list.
const idChunk = 500

// AppendRows returns a scan for EachRow that appends to *out what read
// makes of each row; an error of read stops the loop.
func AppendRows[B any](out *[]B, read func(RowScanner) (B, error)) func(RowScanner) error {
	return func(r RowScanner) error {
		b, err := read(r)
		if err != nil {
			return err
		}
		*out = append(*out, b)
		return nil
	}
}

// column runs query on q and returns the one column of its rows, in
// order (ids, names); an error is wrapped with what, as EachRow wraps it.
func column[T any](ctx context.Context, q Querier, what, query string, args []any) ([]T, error) {
	var out []T
	err := EachRow(ctx, q, what, query, args, AppendRows(&out, func(r RowScanner) (T, error) {
		var v T
		err := r.Scan(&v)
		return v, err
	}))
	return out, err
}
