package alerts

import (
	"context"
	"errors"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Chat is a Telegram chat a bot can post to.
type Chat struct {
	ID int64 `json:"id"`
	// Type is private, group, supergroup or channel.
	Type     string `json:"type"`
	Title    string `json:"title"`
	Username string `json:"username,omitempty"`
}

// ChatDetector lists the chats a Telegram bot can post to (from its
// getUpdates, including my_chat_member). It returns a Permanent error when
// Telegram refuses the token, a Temporary one when Telegram cannot be
// reached. The binary adapts the telegram package's DetectChats to it.
type ChatDetector func(ctx context.Context, botToken string) ([]Chat, error)

// DetectTelegramChats returns the chats a bot can post to. A missing token
// or one Telegram refuses is EINVALID on bot_token; the token never
// appears in an answer.
func (s *Channels) DetectTelegramChats(ctx context.Context, botToken string) ([]Chat, error) {
	botToken = strings.TrimSpace(botToken)
	if botToken == "" {
		return nil, core.InvalidField("bot_token", "This field is required.")
	}
	if s.DetectChats == nil {
		return nil, core.Errorf(core.EUNAVAILABLE, "Telegram chat detection is not available in this build.")
	}
	chats, err := s.DetectChats(ctx, botToken)
	if err != nil {
		text := strings.ReplaceAll(err.Error(), botToken, core.Mask)
		if core.ErrorCode(err) == core.EINVALID {
			// The detector's own verdict on the token (its text never
			// holds the token).
			msg := core.ErrorFields(err)["bot_token"]
			if msg == "" {
				msg = "Telegram refused this bot token: check it with @BotFather."
			}
			return nil, core.InvalidField("bot_token", strings.ReplaceAll(msg, botToken, core.Mask))
		}
		var de *core.DeliveryError
		if errors.As(err, &de) && !de.Temporary {
			s.logger().Warn("telegram refused chat detection", "err", text)
			return nil, core.InvalidField("bot_token", "Telegram refused this bot token: check it with @BotFather.")
		}
		s.logger().Warn("telegram chat detection failed", "err", text)
		return nil, core.Errorf(core.EUNAVAILABLE, "Telegram could not be reached; try again later.")
	}
	if chats == nil {
		chats = []Chat{}
	}
	return chats, nil
}
