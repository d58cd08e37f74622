package cli

import (
	"log/slog"
	"net/http"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/core"
)

// hostHooks returns, beside WordPress, the host hooks (published
// listeners, the outbox) and the runner that asks the site to run them
// after every commit that wrote some (docs/hooks.md). Standalone, there
// is no host: both are nil.
func (rt *runtime) hostHooks(log *slog.Logger) (core.HostHooks, *wordpress.HookRunner, error) {
	if rt.standalone() {
		return nil, nil, nil
	}
	src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
	if err != nil {
		return nil, nil, err
	}
	hh := &wordpress.HostHooks{Options: src, Outbox: rt.db.HostHooks(), Logger: log}
	homes, err := rt.siteHomes()
	if err != nil {
		return nil, nil, err
	}
	runner := &wordpress.HookRunner{
		Sites:  homes,
		Salter: wordpress.NewSalter(rt.saltConstants(), nil, src),
		URL:    rt.consts.String("MAILSVC_HOOK_RUNNER_URL"),
		Client: &http.Client{},
		Logger: log,
	}
	rt.db.HostHooks().NotifyHostHooks(runner.Nudge)
	return hh, runner, nil
}
