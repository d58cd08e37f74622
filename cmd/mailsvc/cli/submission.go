package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailsvc/mailsvc/adapters/smtpserver"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/core"
)

// startSubmission starts the SMTP submission listener when
// MAILSVC_SMTP_LISTEN is set; it returns nil when it is off.
func startSubmission(rt *runtime, auth smtpserver.Authenticator, queue smtpserver.Queue, hooks *core.Hooks, log *slog.Logger) (*smtpserver.Server, error) {
	addr := rt.consts.String("MAILSVC_SMTP_LISTEN")
	if addr == "" {
		return nil, nil
	}
	cfg := smtpserver.Config{
		Addr:         addr,
		MaxBytes:     rt.consts.Int("MAILSVC_SMTP_MAX_BYTES", smtpserver.DefaultMaxBytes),
		Capability:   rt.consts.String("MAILSVC_REST_CAPABILITY"),
		Hooks:        hooks,
		Logger:       log,
		WithRemoteIP: wordpress.ContextWithRemoteIP,
	}
	certFile, keyFile := rt.consts.String("MAILSVC_SMTP_TLS_CERT"), rt.consts.String("MAILSVC_SMTP_TLS_KEY")
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("MAILSVC_SMTP_TLS_CERT/MAILSVC_SMTP_TLS_KEY: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	srv, err := smtpserver.Start(cfg, auth, queue)
	if err != nil {
		return nil, err
	}
	log.Info("SMTP submission listening", "addr", srv.Addr().String(), "starttls", cfg.TLS != nil, "max_bytes", cfg.MaxBytes)
	return srv, nil
}

// stopSubmission stops the listener, giving open sessions a few seconds.
func stopSubmission(srv *smtpserver.Server, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("SMTP submission listener did not stop cleanly", "err", err)
	}
}
