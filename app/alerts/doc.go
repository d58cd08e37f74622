// Package alerts tells site owners when delivery breaks: alert channels
// (Channels: validation, secrets encrypted at rest and masked in every
// answer, test sends, Telegram chat detection) and the Dispatcher that
// delivers raised alerts to them in the background, folding repeats
// across replicas through database leases and retrying failed sends.
//
// The channel types themselves (telegram, slack, webhook, ...) live in
// adapters and register into core; this package reaches them only through
// core.LookupChannelType, as the dependency rule requires.
package alerts
