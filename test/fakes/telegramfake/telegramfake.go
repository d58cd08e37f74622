// Package telegramfake is a local stand-in for the Telegram Bot API
// (https://api.telegram.org) that speaks its wire format: methods at
// /bot<token>/<method> (names case-insensitive, GET or POST, JSON or form
// parameters), answers in the envelope {"ok":true,"result":...} or
// {"ok":false,"error_code":n,"description":"...","parameters":{...}}.
//
// It serves getMe, getUpdates (a queue of updates the test adds: messages
// in private chats, groups and supergroups, channel posts, the bot's own
// membership changes; offset forgets older updates; allowed_updates
// filters and is recorded) and sendMessage (recorded; chat_id and text
// required; with parse_mode HTML the text must be well-formed Telegram
// HTML, as Telegram demands). An unknown token answers 401 Unauthorized.
// FailNext makes the next requests fail in Telegram's shape, 429 with
// parameters.retry_after included.
package telegramfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Chat is a Telegram chat as updates carry it.
type Chat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"` // private, group, supergroup or channel
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
}

// SentMessage is one accepted sendMessage call.
type SentMessage struct {
	MessageID             int64
	ChatID                string // as sent: a number or @channelname
	Text                  string
	ParseMode             string
	DisableWebPagePreview bool
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL is the API base URL, in place of
	// https://api.telegram.org.
	*faults.Server

	token string
	botID int64

	mu             sync.Mutex
	updates        []map[string]any
	nextUpdateID   int64
	nextMessageID  int64
	sent           []SentMessage
	allowedUpdates []string
	webhookSet     bool
}

// New starts a fake whose only valid bot token is token (as BotFather
// gives them: "<bot id>:<secret>").
func New(token string) *Server {
	s := &Server{token: token, nextUpdateID: 100000, nextMessageID: 1}
	s.botID, _ = strconv.ParseInt(strings.SplitN(token, ":", 2)[0], 10, 64)
	s.Server = faults.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Bot is the user the bot is, as getMe answers it.
func (s *Server) Bot() map[string]any {
	return map[string]any{"id": s.botID, "is_bot": true, "first_name": "mailsvc test", "username": "mailsvc_test_bot",
		"can_join_groups": true, "can_read_all_group_messages": false, "supports_inline_queries": false}
}

// FailNext makes the next n requests, whatever their method, fail with
// errorCode in Telegram's shape; retryAfter, when positive, is given as
// parameters.retry_after (Telegram sends it with 429).
func (s *Server) FailNext(n, errorCode, retryAfter int) {
	desc := map[int]string{
		400: "Bad Request: chat not found",
		401: "Unauthorized",
		403: "Forbidden: bot was kicked from the group chat",
		409: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
		429: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter),
	}[errorCode]
	if desc == "" {
		desc = http.StatusText(errorCode)
	}
	s.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) {
		answer := map[string]any{"ok": false, "error_code": errorCode, "description": desc}
		if retryAfter > 0 {
			answer["parameters"] = map[string]any{"retry_after": retryAfter}
		}
		writeJSON(w, errorCode, answer)
	})
}

// AddMessage queues a message update from chat (private, group or
// supergroup) and returns its update_id.
func (s *Server) AddMessage(chat Chat, text string) int64 {
	return s.addUpdate("message", s.message(chat, text))
}

// AddEditedMessage queues an edited_message update from chat.
func (s *Server) AddEditedMessage(chat Chat, text string) int64 {
	return s.addUpdate("edited_message", s.message(chat, text))
}

// AddChannelPost queues a channel_post update from a channel chat.
func (s *Server) AddChannelPost(chat Chat, text string) int64 {
	m := s.message(chat, text)
	delete(m, "from") // channel posts have a sender_chat instead
	m["sender_chat"] = chat
	return s.addUpdate("channel_post", m)
}

// AddMyChatMember queues a my_chat_member update: the bot's status in
// chat changed from oldStatus to newStatus (member, administrator, left,
// kicked, ...).
func (s *Server) AddMyChatMember(chat Chat, oldStatus, newStatus string) int64 {
	bot := s.Bot()
	return s.addUpdate("my_chat_member", map[string]any{
		"chat":            chat,
		"from":            map[string]any{"id": 7, "is_bot": false, "first_name": "Admin"},
		"date":            1700000000,
		"old_chat_member": map[string]any{"status": oldStatus, "user": bot},
		"new_chat_member": map[string]any{"status": newStatus, "user": bot},
	})
}

// Messages returns every accepted sendMessage call, oldest first.
func (s *Server) Messages() []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SentMessage(nil), s.sent...)
}

// SetWebhook sets or deletes the bot's webhook; while one is set,
// getUpdates answers 409 Conflict, as Telegram does.
func (s *Server) SetWebhook(set bool) { faults.Set(&s.mu, &s.webhookSet, set) }

// AllowedUpdates returns the allowed_updates of the last getUpdates call
// that gave them.
func (s *Server) AllowedUpdates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.allowedUpdates...)
}

func (s *Server) message(chat Chat, text string) map[string]any {
	s.mu.Lock()
	id := s.nextMessageID
	s.nextMessageID++
	s.mu.Unlock()
	return map[string]any{
		"message_id": id,
		"from":       map[string]any{"id": 7, "is_bot": false, "first_name": "Admin"},
		"chat":       chat,
		"date":       1700000000,
		"text":       text,
	}
}

func (s *Server) addUpdate(kind string, payload map[string]any) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextUpdateID
	s.nextUpdateID++
	s.updates = append(s.updates, map[string]any{"update_id": id, kind: payload})
	return id
}

var methodPath = regexp.MustCompile(`^/bot([^/]+)/([A-Za-z]+)$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	m := methodPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	if m[1] != s.token {
		fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	params, err := readParams(r)
	if err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	switch strings.ToLower(m[2]) {
	case "getme":
		ok(w, s.Bot())
	case "getupdates":
		s.getUpdates(w, params)
	case "sendmessage":
		s.sendMessage(w, params)
	default:
		fail(w, http.StatusNotFound, "Not Found: method not found")
	}
}

func (s *Server) getUpdates(w http.ResponseWriter, p map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webhookSet {
		fail(w, http.StatusConflict, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
		return
	}
	if allowed, ok := p["allowed_updates"]; ok {
		s.allowedUpdates = nil
		switch v := allowed.(type) {
		case []any:
			for _, a := range v {
				s.allowedUpdates = append(s.allowedUpdates, fmt.Sprint(a))
			}
		case string: // a form parameter carries the JSON array
			_ = json.Unmarshal([]byte(v), &s.allowedUpdates)
		}
	}
	if off := intParam(p["offset"]); off > 0 {
		kept := s.updates[:0]
		for _, u := range s.updates {
			if intParam(u["update_id"]) >= off {
				kept = append(kept, u)
			}
		}
		s.updates = kept
	}
	limit := intParam(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	out := []map[string]any{}
	for _, u := range s.updates {
		if int64(len(out)) == limit {
			break
		}
		if s.allowed(u) {
			out = append(out, u)
		}
	}
	ok(w, out)
}

// allowed reports whether update u is of a kind allowed_updates names
// (every kind but chat_member when none were named).
func (s *Server) allowed(u map[string]any) bool {
	for kind := range u {
		if kind == "update_id" {
			continue
		}
		if len(s.allowedUpdates) == 0 {
			return kind != "chat_member"
		}
		for _, a := range s.allowedUpdates {
			if a == kind {
				return true
			}
		}
	}
	return false
}

func (s *Server) sendMessage(w http.ResponseWriter, p map[string]any) {
	chatID := strParam(p["chat_id"])
	text := strParam(p["text"])
	mode := strParam(p["parse_mode"])
	switch {
	case chatID == "":
		fail(w, http.StatusBadRequest, "Bad Request: chat_id is empty")
		return
	case strings.TrimSpace(text) == "":
		fail(w, http.StatusBadRequest, "Bad Request: message text is empty")
		return
	case len([]rune(text)) > 4096:
		fail(w, http.StatusBadRequest, "Bad Request: message is too long")
		return
	}
	if strings.EqualFold(mode, "HTML") {
		if err := checkHTML(text); err != nil {
			fail(w, http.StatusBadRequest, "Bad Request: can't parse entities: "+err.Error())
			return
		}
	}
	s.mu.Lock()
	id := s.nextMessageID
	s.nextMessageID++
	s.sent = append(s.sent, SentMessage{MessageID: id, ChatID: chatID, Text: text, ParseMode: mode,
		DisableWebPagePreview: p["disable_web_page_preview"] == true || p["disable_web_page_preview"] == "true"})
	s.mu.Unlock()
	chat := map[string]any{"id": chatID, "type": "private"}
	if n, err := strconv.ParseInt(chatID, 10, 64); err == nil {
		chat["id"] = n
		if n < 0 {
			chat["type"] = "supergroup"
			chat["title"] = "Alerts"
		}
	} else {
		chat["id"] = int64(-1000000000001)
		chat["type"] = "channel"
		chat["username"] = strings.TrimPrefix(chatID, "@")
	}
	ok(w, map[string]any{"message_id": id, "chat": chat, "date": 1700000000, "text": text})
}

// htmlTags are the tags Telegram's HTML parse mode knows.
var htmlTags = map[string]bool{"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "a": true, "code": true, "pre": true, "span": true,
	"tg-spoiler": true, "tg-emoji": true, "blockquote": true}

var entity = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]+|#x[0-9a-fA-F]+);`)

// checkHTML checks text the way Telegram parses HTML: known tags, closed
// in order, and no bare < or & outside a tag or an entity.
func checkHTML(text string) error {
	var open []string
	for i := 0; i < len(text); {
		switch text[i] {
		case '&':
			m := entity.FindString(text[i:])
			if m == "" {
				return fmt.Errorf("unsupported start of an entity at byte offset %d", i)
			}
			i += len(m)
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return fmt.Errorf("unclosed start tag at byte offset %d", i)
			}
			tag := text[i+1 : i+end]
			closing := strings.HasPrefix(tag, "/")
			name := strings.ToLower(strings.Fields(strings.TrimPrefix(tag, "/") + " ")[0])
			if !htmlTags[name] {
				return fmt.Errorf("unsupported start tag %q at byte offset %d", name, i)
			}
			if closing {
				if len(open) == 0 || open[len(open)-1] != name {
					return fmt.Errorf("unmatched end tag at byte offset %d", i)
				}
				open = open[:len(open)-1]
			} else {
				open = append(open, name)
			}
			i += end + 1
		case '>':
			return fmt.Errorf("bare > at byte offset %d", i)
		default:
			i++
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("can't find end tag corresponding to start tag %q", open[len(open)-1])
	}
	return nil
}

// readParams reads a method's parameters from the query string and a JSON
// or form body.
func readParams(r *http.Request) (map[string]any, error) {
	p := map[string]any{}
	for k, v := range r.URL.Query() {
		p[k] = v[0]
	}
	if r.Method != http.MethodPost {
		return p, nil
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body map[string]any
		dec := json.NewDecoder(r.Body)
		dec.UseNumber()
		if err := dec.Decode(&body); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		for k, v := range body {
			p[k] = v
		}
		return p, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	for k, v := range r.PostForm {
		p[k] = v[0]
	}
	return p, nil
}

func strParam(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

func intParam(v any) int64 {
	n, _ := strconv.ParseInt(strParam(v), 10, 64)
	return n
}

func ok(w http.ResponseWriter, result any) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

func fail(w http.ResponseWriter, code int, desc string) {
	writeJSON(w, code, map[string]any{"ok": false, "error_code": code, "description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	faults.WriteJSON(w, status, string(b))
}
