package http

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"
)

// BodyDecoder reads a request's JSON object body into dst with the
// server's rules (Routes.DecodeJSON, or the server's own).
type BodyDecoder func(w http.ResponseWriter, r *http.Request, dst any) error

// Respond ends a handler that reads or does one thing for the request:
// it answers 200 with what get returns as JSON, or returns get's error.
func Respond[T any](w http.ResponseWriter, r *http.Request, get func(context.Context) (T, error)) error {
	return respondStatus(w, r, http.StatusOK, get)
}

// respondStatus answers status with what get returns as JSON, or returns
// get's error.
func respondStatus[T any](w http.ResponseWriter, r *http.Request, status int, get func(context.Context) (T, error)) error {
	v, err := get(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, status, v)
	return nil
}

// RespondBody decodes the request's JSON body with decode and answers
// what do returns for it, as Respond does.
func RespondBody[B, T any](decode BodyDecoder, w http.ResponseWriter, r *http.Request, do func(context.Context, B) (T, error)) error {
	return respondBodyStatus(decode, w, r, http.StatusOK, do)
}

// RespondCreated is RespondBody answering 201 Created: do creates what
// the body describes.
func RespondCreated[B, T any](decode BodyDecoder, w http.ResponseWriter, r *http.Request, do func(context.Context, B) (T, error)) error {
	return respondBodyStatus(decode, w, r, http.StatusCreated, do)
}

// respondBodyStatus decodes the request's JSON body with decode and
// answers status with what do returns for it, as respondStatus does.
func respondBodyStatus[B, T any](decode BodyDecoder, w http.ResponseWriter, r *http.Request, status int, do func(context.Context, B) (T, error)) error {
	var body B
	if err := decode(w, r, &body); err != nil {
		return err
	}
	return respondStatus(w, r, status, func(ctx context.Context) (T, error) { return do(ctx, body) })
}

// respondID answers what get returns for the path's id (a 404 when the
// id is not a positive integer), as Respond does.
func respondID[T any](w http.ResponseWriter, r *http.Request, get func(context.Context, int64) (T, error)) error {
	id, err := pathID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	return Respond(w, r, func(ctx context.Context) (T, error) { return get(ctx, id) })
}

// respondIDBody answers what do returns for the path's id and the
// request's JSON body, as respondID and RespondBody do.
func respondIDBody[B, T any](decode BodyDecoder, w http.ResponseWriter, r *http.Request, do func(context.Context, int64, B) (T, error)) error {
	id, err := pathID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	return RespondBody(decode, w, r, func(ctx context.Context, body B) (T, error) { return do(ctx, id, body) })
}

// deleteByID deletes what the path's id names with del and answers
// {"deleted": true, "id": id}.
func deleteByID(w http.ResponseWriter, r *http.Request, del func(context.Context, int64) error) error {
	return respondID(w, r, func(ctx context.Context, id int64) (map[string]any, error) {
		if err := del(ctx, id); err != nil {
			return nil, err
		}
		return map[string]any{"deleted": true, "id": id}, nil
	})
}

// deleteIDs deletes the ids of the request's body ({"ids": [...]}) with
// del and answers {"deleted": n}, n being how many del deleted.
func deleteIDs(decode BodyDecoder, w http.ResponseWriter, r *http.Request, del func(context.Context, []int64) (int, error)) error {
	return RespondBody(decode, w, r, func(ctx context.Context, body idsBody) (map[string]any, error) {
		n, err := del(ctx, body.IDs)
		if err != nil {
			return nil, err
		}
		return map[string]any{"deleted": n}, nil
	})
}
