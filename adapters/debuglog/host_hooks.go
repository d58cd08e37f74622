package debuglog

import (
	"context"

	"github.com/mailsvc/mailsvc/core"
)

// hostRequestKeys are the keys of the mail_svc_api_debug payload (see
// delivery's debugAttempt) that describe the request; the others, but the
// driver, describe the response.
var hostRequestKeys = map[string]bool{
	"log_id": true, "connection_id": true, "from": true, "recipients": true,
	"subject": true, "attachments": true,
}

// RegisterHostMailer adds an action on the mail_svc_api_debug hook that
// records it for the host's hooks as do_action('mail_svc_api_debug',
// $driver, $request, $response), redacted as the MAILER lines are (the
// secret visibility constants). With the Mailer channel off, or no host,
// it registers nothing: the host hook exists only with MAIL_SVC_DEBUG_MAILER.
func (l *Log) RegisterHostMailer(hooks *core.Hooks, host core.HostHooks) {
	if l == nil || !l.opts.Mailer || hooks == nil || host == nil {
		return
	}
	hooks.AddAction(core.HookAPIDebug, func(args ...any) {
		ctx := context.Background()
		if len(args) == 0 || !host.Listens(ctx, core.HookAPIDebug) {
			return
		}
		payload, ok := l.redactor().Value(jsonValue(args[0])).(map[string]any)
		if !ok {
			return
		}
		driver, _ := payload["driver"].(string)
		request, response := map[string]any{}, map[string]any{}
		for k, v := range payload {
			switch {
			case k == "driver":
			case hostRequestKeys[k]:
				request[k] = v
			default:
				response[k] = v
			}
		}
		if err := host.Record(ctx, []core.HostHook{{Name: core.HookAPIDebug, Args: []any{driver, request, response}}}); err != nil {
			l.write(TagMailer, map[string]any{"error": "record the host hook: " + err.Error()})
		}
	})
}
