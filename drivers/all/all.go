// Package all registers every built-in mail transport driver. Import it for
// its side effects:
//
//	import _ "github.com/mailsvc/mailsvc/drivers/all"
package all

import (
	// Each driver registers itself with core.Register in its init.
	_ "github.com/mailsvc/mailsvc/drivers/brevo"
	_ "github.com/mailsvc/mailsvc/drivers/cloudflare"
	_ "github.com/mailsvc/mailsvc/drivers/elasticemail"
	_ "github.com/mailsvc/mailsvc/drivers/emailit"
	_ "github.com/mailsvc/mailsvc/drivers/gmail"
	_ "github.com/mailsvc/mailsvc/drivers/mailersend"
	_ "github.com/mailsvc/mailsvc/drivers/mailgun"
	_ "github.com/mailsvc/mailsvc/drivers/mailjet"
	_ "github.com/mailsvc/mailsvc/drivers/mailtrap"
	_ "github.com/mailsvc/mailsvc/drivers/mandrill"
	_ "github.com/mailsvc/mailsvc/drivers/outlook"
	_ "github.com/mailsvc/mailsvc/drivers/postmark"
	_ "github.com/mailsvc/mailsvc/drivers/resend"
	_ "github.com/mailsvc/mailsvc/drivers/sendgrid"
	_ "github.com/mailsvc/mailsvc/drivers/sendlayer"
	_ "github.com/mailsvc/mailsvc/drivers/ses"
	_ "github.com/mailsvc/mailsvc/drivers/smtp"
	_ "github.com/mailsvc/mailsvc/drivers/smtp2go"
	_ "github.com/mailsvc/mailsvc/drivers/smtpcom"
	_ "github.com/mailsvc/mailsvc/drivers/sparkpost"
	_ "github.com/mailsvc/mailsvc/drivers/zoho"
)
