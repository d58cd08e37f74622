// Package all registers every built-in alert channel type: import it for
// its side effect.
package all

import (
	_ "github.com/mailsvc/mailsvc/adapters/notify/discord"  // the discord channel type
	_ "github.com/mailsvc/mailsvc/adapters/notify/email"    // the email channel type
	_ "github.com/mailsvc/mailsvc/adapters/notify/slack"    // the slack channel type
	_ "github.com/mailsvc/mailsvc/adapters/notify/teams"    // the teams channel type
	_ "github.com/mailsvc/mailsvc/adapters/notify/telegram" // the telegram channel type
	_ "github.com/mailsvc/mailsvc/adapters/notify/twilio"   // the twilio (SMS) channel type
	_ "github.com/mailsvc/mailsvc/adapters/notify/webhook"  // the webhook channel type
)
