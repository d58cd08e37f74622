package telegram

import (
	"context"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Chat is a chat a bot can post to, as DetectChats reports it. Title is
// the group's or channel's title, or the person's name for a private
// chat; Username is without the @.
type Chat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"` // private, group, supergroup or channel
	Title    string `json:"title"`
	Username string `json:"username,omitempty"`
}

// apiChat is a chat as updates carry it.
type apiChat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title"`
	Username  string `json:"username"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

func (c *apiChat) chat() Chat {
	title := c.Title
	if title == "" {
		title = strings.TrimSpace(c.FirstName + " " + c.LastName)
	}
	return Chat{ID: c.ID, Type: c.Type, Title: title, Username: c.Username}
}

// update is the part of a Bot API Update that names a chat.
type update struct {
	UpdateID          int64                   `json:"update_id"`
	Message           *struct{ Chat apiChat } `json:"message"`
	EditedMessage     *struct{ Chat apiChat } `json:"edited_message"`
	ChannelPost       *struct{ Chat apiChat } `json:"channel_post"`
	EditedChannelPost *struct{ Chat apiChat } `json:"edited_channel_post"`
	MyChatMember      *struct {
		Chat          apiChat `json:"chat"`
		NewChatMember struct {
			Status string `json:"status"`
		} `json:"new_chat_member"`
	} `json:"my_chat_member"`
}

// AllowedUpdates are the update kinds DetectChats asks for.
var AllowedUpdates = []string{"message", "edited_message", "channel_post", "edited_channel_post", "my_chat_member"}

// DetectChats returns the chats the bot with botToken can post to, as
// far as its pending updates tell: chats of messages, edited messages and
// channel posts, and chats where the bot was added (my_chat_member), each
// once, in the order first seen; a chat the bot was last removed from
// (left, kicked) is left out. It first checks the token with getMe: a
// token Telegram refuses gives a permanent error that is a validation
// error on bot_token and ErrBotToken, without the token in its text. It
// does not confirm the updates, so they stay for the next call. apiBase
// "" means the real Bot API; client nil means a plain client.
func DetectChats(ctx context.Context, client *http.Client, apiBase, botToken string) ([]Chat, error) {
	if client == nil {
		client = httpClient
	}
	api := APIBase(apiBase)
	botToken = strings.TrimSpace(botToken)
	if !tokenPattern.MatchString(botToken) {
		return nil, validateTokenError()
	}
	if err := call(ctx, client, api, botToken, "getMe", struct{}{}, nil); err != nil {
		return nil, err
	}
	var updates []update
	params := map[string]any{"allowed_updates": AllowedUpdates, "limit": 100, "timeout": 0}
	if err := call(ctx, client, api, botToken, "getUpdates", params, &updates); err != nil {
		return nil, err
	}
	var order []int64
	seen := map[int64]Chat{}
	gone := map[int64]bool{}
	add := func(c *apiChat) {
		if c.ID == 0 {
			return
		}
		if _, ok := seen[c.ID]; !ok {
			order = append(order, c.ID)
		}
		seen[c.ID] = c.chat()
		gone[c.ID] = false
	}
	for _, u := range updates {
		switch {
		case u.Message != nil:
			add(&u.Message.Chat)
		case u.EditedMessage != nil:
			add(&u.EditedMessage.Chat)
		case u.ChannelPost != nil:
			add(&u.ChannelPost.Chat)
		case u.EditedChannelPost != nil:
			add(&u.EditedChannelPost.Chat)
		case u.MyChatMember != nil:
			add(&u.MyChatMember.Chat)
			switch u.MyChatMember.NewChatMember.Status {
			case "left", "kicked":
				gone[u.MyChatMember.Chat.ID] = true
			}
		}
	}
	chats := []Chat{}
	for _, id := range order {
		if !gone[id] {
			chats = append(chats, seen[id])
		}
	}
	return chats, nil
}

// validateTokenError is the error of a token that cannot be one.
func validateTokenError() error {
	return core.Permanent(&tokenError{field: core.InvalidField(KeyBotToken,
		"Must be a bot token as @BotFather gives it: digits, a colon, then letters, digits, - and _.")})
}
