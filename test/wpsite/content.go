package wpsite

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// WriteContent writes files into the site's wp-content: each path (e.g.
// "mu-plugins/setup.php") to its content, its directories made.
func (s *Site) WriteContent(t testing.TB, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(s.ContentDir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// PHPMailerSMTPPlugin is a must-use plugin that sends WordPress's own
// mail (PHPMailer, which the bridge never uses) to the SMTP server at
// 127.0.0.1:port, without login or TLS, as an SMTP plugin's
// phpmailer_init hook does. more is PHP added to the hook, with
// $phpmailer in scope, or "".
func PHPMailerSMTPPlugin(port int, more string) string {
	return fmt.Sprintf(`<?php
add_action( 'phpmailer_init', function ( $phpmailer ) {
	$phpmailer->isSMTP();
	$phpmailer->Host        = '127.0.0.1';
	$phpmailer->Port        = %d;
	$phpmailer->SMTPAuth    = false;
	$phpmailer->SMTPAutoTLS = false;
	$phpmailer->SMTPSecure  = '';
%s} );
`, port, more)
}
