package http

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/core"
)

// NotificationService is what the alert channel routes need
// (*alerts.Channels).
type NotificationService interface {
	List(ctx context.Context) ([]*core.NotificationChannel, error)
	Create(ctx context.Context, in alerts.ChannelInput) (*core.NotificationChannel, error)
	Update(ctx context.Context, id int64, in alerts.ChannelInput) (*core.NotificationChannel, error)
	Delete(ctx context.Context, id int64) error
	Bulk(ctx context.Context, action string, ids []int64) (int, error)
	Test(ctx context.Context, in alerts.TestInput) (*alerts.TestResult, error)
	DetectTelegramChats(ctx context.Context, botToken string) ([]alerts.Chat, error)
}

// notificationRoutes registers the spec's Notifications routes. The fixed
// paths come before /notifications/{id}.
func (s *Server) notificationRoutes(api *mux.Router) {
	s.private(api, "GET", "/notifications", s.listNotifications)
	s.private(api, "POST", "/notifications", s.createNotification)
	s.private(api, "POST", "/notifications/bulk", s.bulkNotifications)
	s.private(api, "POST", "/notifications/test", s.testNotification)
	s.private(api, "POST", "/notifications/telegram/detect-chats", s.detectTelegramChats)
	s.private(api, "PUT", "/notifications/{id}", s.updateNotification)
	s.private(api, "DELETE", "/notifications/{id}", s.deleteNotification)
}

// channelBody is the JSON body of POST and PUT /notifications.
type channelBody struct {
	Name     *string   `json:"name"`
	Type     *string   `json:"type"`
	IsActive *bool     `json:"is_active"`
	Events   *[]string `json:"events"`
	// ThresholdCount and ThresholdMinutes: see core.NotificationChannel.
	ThresholdCount   *int           `json:"threshold_count"`
	ThresholdMinutes *int           `json:"threshold_minutes"`
	Settings         map[string]any `json:"settings"`
}

func (b channelBody) input() alerts.ChannelInput {
	return alerts.ChannelInput{Name: b.Name, Type: b.Type, IsActive: b.IsActive, Events: b.Events,
		ThresholdCount: b.ThresholdCount, ThresholdMinutes: b.ThresholdMinutes, Settings: b.Settings}
}

func (s *Server) listNotifications(w http.ResponseWriter, r *http.Request) error {
	list, err := s.Notifications.List(r.Context())
	if err != nil {
		return err
	}
	// Every channel in one page: a site has a handful.
	writeList(w, list, len(list), Page{Page: 1, PerPage: max(len(list), 1)})
	return nil
}

func (s *Server) createNotification(w http.ResponseWriter, r *http.Request) error {
	return RespondCreated(s.decodeJSON, w, r, func(ctx context.Context, body channelBody) (*core.NotificationChannel, error) {
		return s.Notifications.Create(ctx, body.input())
	})
}

func (s *Server) updateNotification(w http.ResponseWriter, r *http.Request) error {
	return respondIDBody(s.decodeJSON, w, r, func(ctx context.Context, id int64, body channelBody) (*core.NotificationChannel, error) {
		return s.Notifications.Update(ctx, id, body.input())
	})
}

func (s *Server) deleteNotification(w http.ResponseWriter, r *http.Request) error {
	return deleteByID(w, r, s.Notifications.Delete)
}

func (s *Server) bulkNotifications(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Action string  `json:"action"`
		IDs    []int64 `json:"ids"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	n, err := s.Notifications.Bulk(r.Context(), body.Action, body.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"action": body.Action, "count": n})
	return nil
}

func (s *Server) testNotification(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ID      *int64       `json:"id"`
		Channel *channelBody `json:"channel"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	in := alerts.TestInput{ID: body.ID}
	if body.ID != nil && *body.ID < 1 {
		return core.Errorf(core.ENOTFOUND, "Notification channel %d not found.", *body.ID)
	}
	if body.Channel != nil {
		ch := body.Channel.input()
		in.Channel = &ch
	}
	res, err := s.Notifications.Test(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) detectTelegramChats(w http.ResponseWriter, r *http.Request) error {
	return RespondBody(s.decodeJSON, w, r, func(ctx context.Context, body telegramTokenBody) (map[string]any, error) {
		chats, err := s.Notifications.DetectTelegramChats(ctx, body.BotToken)
		if err != nil {
			return nil, err
		}
		return map[string]any{"chats": chats}, nil
	})
}

// telegramTokenBody is the body of a Telegram chat detection: the bot's
// token.
type telegramTokenBody struct {
	BotToken string `json:"bot_token"`
}
