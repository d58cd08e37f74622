// Package telegram is the "telegram" alert channel type: alerts go
// straight to the Telegram Bot API with the site's own bot (no relay):
// POST {api}/bot<token>/sendMessage with JSON {chat_id, text, parse_mode:
// "HTML", disable_web_page_preview: true}, the alert's text escaped for
// Telegram's HTML. DetectChats lists the chats a bot can post to, for
// POST /notifications/telegram/detect-chats.
//
// Telegram answers {"ok":true,"result":...} or {"ok":false,"error_code":n,
// "description":"...","parameters":{"retry_after":s,
// "migrate_to_chat_id":id}}: 429 and 5xx are temporary (retry_after kept,
// see notify.RetryAfter), anything else permanent. The API base is the
// operator's (core.NotifierEnv.TelegramAPI, a local Bot API server or a
// test fake), not a URL a user typed, so it is reached with a plain HTTP
// client rather than the private address guard's. The bot token is part
// of every request's path and is kept out of every error.
package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
)

// Slug is the channel type's slug.
const Slug = "telegram"

// Settings keys.
const (
	KeyBotToken = "bot_token"
	KeyChatID   = "chat_id"
)

// DefaultAPI is the Bot API base URL.
const DefaultAPI = "https://api.telegram.org"

// textLimit is the most characters a message may hold.
const textLimit = 4096

var (
	tokenPattern  = regexp.MustCompile(`^[0-9]+:[A-Za-z0-9_-]+$`)
	chatIDPattern = regexp.MustCompile(`^(-?[0-9]+|@[A-Za-z][A-Za-z0-9_]{3,31})$`)
)

// httpClient reaches the operator's Bot API base.
var httpClient = &http.Client{Timeout: 30 * time.Second}

func init() { core.RegisterChannelType(Type()) }

// Type returns the channel type as it is registered.
func Type() core.ChannelType {
	return core.ChannelType{
		Slug: Slug,
		Name: "Telegram",
		Fields: []core.Field{
			{Key: KeyBotToken, Label: "Bot token", Type: core.FieldPassword, Required: true,
				Help: "From @BotFather: 123456789:AA..."},
			{Key: KeyChatID, Label: "Chat ID", Type: core.FieldString, Required: true,
				Help: "A numeric chat id (groups and channels are negative) or @channelusername. Detect chats lists the ones the bot can post to."},
		},
		Validate: validate,
		New:      New,
	}
}

func validate(s core.Settings) map[string]string {
	return notify.ValidatePatterns(s,
		notify.PatternRule{Key: KeyBotToken, Pattern: tokenPattern,
			Message: "Must be a bot token as @BotFather gives it: digits, a colon, then letters, digits, - and _."},
		notify.PatternRule{Key: KeyChatID, Pattern: chatIDPattern, Message: "Must be a numeric chat id or @channelusername."})
}

// Notifier sends alerts to one chat with one bot.
type Notifier struct {
	api    string
	token  string
	chatID string
	client *http.Client
}

// New returns the Notifier of a Telegram channel.
func New(ch *core.NotificationChannel, env core.NotifierEnv) (core.Notifier, error) {
	n := &Notifier{
		api:    APIBase(env.TelegramAPI),
		token:  strings.TrimSpace(ch.Settings.String(KeyBotToken)),
		chatID: strings.TrimSpace(ch.Settings.String(KeyChatID)),
		client: httpClient,
	}
	if n.token == "" || n.chatID == "" {
		return nil, core.Invalid(map[string]string{KeyBotToken: "A bot token and a chat id are required."})
	}
	return n, nil
}

// APIBase returns base without trailing slashes, or DefaultAPI when empty.
func APIBase(base string) string {
	if base = strings.TrimRight(base, "/"); base != "" {
		return base
	}
	return DefaultAPI
}

// SendMessage is the sendMessage request body.
type SendMessage struct {
	// ChatID is a json.Number for a numeric id, a string for @channelname.
	ChatID                any    `json:"chat_id"`
	Text                  string `json:"text"`
	ParseMode             string `json:"parse_mode"`
	DisableWebPagePreview bool   `json:"disable_web_page_preview"`
}

// escape escapes what Telegram's HTML parse mode reserves.
var escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// Text returns a as Telegram HTML: the title in bold, the message, then a
// line per fact, within Telegram's 4096 characters (the message is cut
// first, before escaping, so no entity is split).
func Text(a core.Alert) string {
	title := "<b>" + escape(notify.Truncate(notify.Title(a), 256)) + "</b>"
	var facts strings.Builder
	for _, f := range notify.Facts(a) {
		facts.WriteString("\n<b>" + f.Name + ":</b> " + escape(notify.Truncate(f.Value, 512)))
	}
	msg := []rune(strings.TrimSpace(a.Message))
	for {
		text := title
		if len(msg) > 0 {
			text += "\n" + escape(string(msg))
		}
		text += "\n" + facts.String()
		over := len([]rune(text)) - textLimit
		if over <= 0 || len(msg) == 0 {
			return text
		}
		keep := len(msg) - over - 1
		if keep <= 0 {
			msg = nil
			continue
		}
		msg = append(msg[:keep:keep], '…')
	}
}

// Request returns the sendMessage body of a for chatID.
func Request(chatID string, a core.Alert) SendMessage {
	var id any = chatID
	if _, err := strconv.ParseInt(chatID, 10, 64); err == nil {
		id = json.Number(chatID)
	}
	return SendMessage{ChatID: id, Text: Text(a), ParseMode: "HTML", DisableWebPagePreview: true}
}

// Notify sends a to the chat and returns Telegram's answer in words.
func (n *Notifier) Notify(ctx context.Context, a core.Alert) (string, error) {
	var msg struct {
		MessageID int64 `json:"message_id"`
		Chat      Chat  `json:"chat"`
	}
	if err := call(ctx, n.client, n.api, n.token, "sendMessage", Request(n.chatID, a), &msg); err != nil {
		return "", err
	}
	where := msg.Chat.Title
	if where == "" && msg.Chat.Username != "" {
		where = "@" + msg.Chat.Username
	}
	if where == "" {
		where = strconv.FormatInt(msg.Chat.ID, 10)
	}
	return fmt.Sprintf("Telegram accepted the message (message_id %d) in chat %s.", msg.MessageID, where), nil
}

// envelope is every Bot API answer.
type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter      int   `json:"retry_after"`
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}

// call invokes a Bot API method with a JSON body and decodes its result
// into out. Errors are classified and never show the token.
func call(ctx context.Context, client *http.Client, api, token, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return core.Permanent(fmt.Errorf("telegram %s: encoding the request: %w", method, err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/bot"+token+"/"+method, strings.NewReader(string(body)))
	if err != nil {
		return notify.Scrub(core.Permanent(fmt.Errorf("telegram %s: the API base URL cannot be used", method)), token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", notify.UserAgent)
	resp, err := client.Do(req)
	if err != nil {
		return notify.Scrub(notify.TransportError("Telegram "+method, err), token)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return notify.Scrub(core.Temporary(fmt.Errorf("telegram %s: reading the answer: %w", method, err)), token)
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		if resp.StatusCode/100 != 2 {
			return notify.Scrub(notify.StatusError("Telegram "+method, resp.StatusCode, resp.Header, notify.Summary(data)), token)
		}
		return core.Temporary(fmt.Errorf("telegram %s: the answer is not JSON", method))
	}
	if !env.OK {
		return notify.Scrub(apiError(method, resp.StatusCode, &env), token)
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return core.Permanent(fmt.Errorf("telegram %s: unexpected result: %w", method, err))
		}
	}
	return nil
}

// ErrBotToken is in the chain of the error for a token Telegram does not
// know (401, or 404 for a malformed one).
var ErrBotToken = errors.New("the bot token is not accepted by Telegram")

// apiError classifies an ok:false answer.
func apiError(method string, status int, env *envelope) error {
	code := env.ErrorCode
	if code == 0 {
		code = status
	}
	desc := env.Description
	if desc == "" {
		desc = http.StatusText(code)
	}
	err := fmt.Errorf("telegram %s: %d %s", method, code, desc)
	switch {
	case code == http.StatusUnauthorized || (code == http.StatusNotFound && strings.EqualFold(desc, "Not Found")):
		return core.Permanent(&tokenError{field: core.InvalidField(KeyBotToken,
			"Telegram does not accept this bot token (it answered "+strconv.Itoa(code)+" "+desc+").")})
	case env.Parameters.MigrateToChatID != 0:
		return core.Permanent(fmt.Errorf("%w; the group became a supergroup: use chat id %d", err, env.Parameters.MigrateToChatID))
	case code == http.StatusTooManyRequests || code >= 500:
		if env.Parameters.RetryAfter > 0 {
			return core.Temporary(&notify.RetryAfterError{After: time.Duration(env.Parameters.RetryAfter) * time.Second, Err: err})
		}
		return core.Temporary(err)
	}
	return core.Permanent(err)
}

// tokenError is a refused bot token: a validation error on bot_token (so
// the HTTP edge answers 422 on that field) that is also ErrBotToken.
type tokenError struct{ field error }

func (e *tokenError) Error() string   { return e.field.Error() }
func (e *tokenError) Unwrap() []error { return []error{e.field, ErrBotToken} }
