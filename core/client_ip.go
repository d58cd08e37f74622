package core

import "context"

type clientIPKey struct{}

// WithClientIP returns ctx carrying the address of the client a request
// or an SMTP session came from, as the edge that received it found it
// (the peer, or the address a trusted proxy forwarded for).
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey{}, ip)
}

// ClientIP returns the address WithClientIP put in ctx, or "".
func ClientIP(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey{}).(string)
	return ip
}
