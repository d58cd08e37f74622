// Package oauthdrivertest holds what the tests of the OAuth mail drivers
// (outlook, gmail, zoho, and SMTP with XOAUTH2) share: a core.TokenSource
// that plays the OAuth service and counts what the driver asked of it,
// the check of a refused token (CheckRefused), and the check that a send
// the provider's fake fails gives a classified error (SendErrors).
package oauthdrivertest

import (
	"context"
	"sync"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.TokenSource = (*Tokens)(nil)

// Tokens is a core.TokenSource that hands out access tokens from a list:
// AccessToken gives the current one, Refreshed moves to the next one when
// the rejected token is the current one (the last one stays current) and
// gives it. It counts both calls and records the rejected tokens. It is
// safe for concurrent use.
type Tokens struct {
	mu        sync.Mutex
	list      []string
	cur       int
	err       error
	gets      int
	refreshes int
	rejected  []string
}

// NewTokens returns a source handing out list in order; with no list its
// access token is "".
func NewTokens(list ...string) *Tokens { return &Tokens{list: list} }

// Failing returns a source whose AccessToken fails with err, as the OAuth
// service does when a connection needs a new authorization or the
// authorization server is down.
func Failing(err error) *Tokens { return &Tokens{err: err} }

// AccessToken returns the current token, or the source's error.
func (s *Tokens) AccessToken(context.Context, int64) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	if s.err != nil {
		return "", s.err
	}
	return s.current(), nil
}

// Refreshed records rejected, moves to the next token when rejected is the
// current one, and returns the current token.
func (s *Tokens) Refreshed(_ context.Context, _ int64, rejected string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshes++
	s.rejected = append(s.rejected, rejected)
	if rejected == s.current() && s.cur+1 < len(s.list) {
		s.cur++
	}
	return s.current(), nil
}

func (s *Tokens) current() string {
	if len(s.list) == 0 {
		return ""
	}
	return s.list[s.cur]
}

// Current returns the token AccessToken would give now.
func (s *Tokens) Current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current()
}

// Gets returns how many times AccessToken was called.
func (s *Tokens) Gets() int { return s.count(&s.gets) }

// Refreshes returns how many times Refreshed was called.
func (s *Tokens) Refreshes() int { return s.count(&s.refreshes) }

// Rejected returns the tokens passed to Refreshed, oldest first.
func (s *Tokens) Rejected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.rejected...)
}

// count returns the counter n of the source, read under its lock.
func (s *Tokens) count(n *int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *n
}
