package oauth

import (
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// Scopes of the providers per delivery mode.
const (
	ScopeGmailSend     = "https://www.googleapis.com/auth/gmail.send"
	ScopeGmailSMTP     = "https://mail.google.com/"
	ScopeOfflineAccess = "offline_access"
	ScopeGraphMailSend = "https://graph.microsoft.com/Mail.Send"
	// ScopeGraphMailRW lets the outlook driver build a draft for messages
	// whose attachments need an upload session (over 3 MB).
	ScopeGraphMailRW = "https://graph.microsoft.com/Mail.ReadWrite"
	// ScopeGraphUserRead lets a credentials check read the mailbox's user.
	ScopeGraphUserRead = "https://graph.microsoft.com/User.Read"
	ScopeOutlookSMTP   = "https://outlook.office.com/SMTP.Send"
	ScopeZohoSend      = "ZohoMail.messages.CREATE"
	ScopeZohoAccounts  = "ZohoMail.accounts.READ"
)

// Scopes returns the scopes a connection of provider asks for in delivery
// mode (oauthdriver.ModeAPI, the default for "", or oauthdriver.ModeSMTP),
// one scope per element; nil for an unknown provider. On the wire Google
// and Microsoft join them with spaces, Zoho with commas.
func Scopes(provider, mode string) []string {
	smtp := mode == oauthdriver.ModeSMTP
	switch provider {
	case core.ProviderGoogle:
		if smtp {
			return []string{ScopeGmailSMTP}
		}
		return []string{ScopeGmailSend}
	case core.ProviderMicrosoft:
		if smtp {
			return []string{ScopeOfflineAccess, ScopeOutlookSMTP}
		}
		return []string{ScopeOfflineAccess, ScopeGraphMailSend, ScopeGraphMailRW, ScopeGraphUserRead}
	case core.ProviderZoho:
		return []string{ScopeZohoSend, ScopeZohoAccounts}
	}
	return nil
}
