// Package pro holds the use cases of the Pro add-on that the free service
// knows nothing of: the licence (signed keys verified offline, an optional
// licence server) and the Pro settings scope, which it turns into the
// delivery engine's Policy. It is joined to the binary from cmd/ (the
// free packages never import it); its routes and screens are
// adapters/http/pro, its tables adapters/pro/store (except the provider
// event and analytics tables, still in the service's own store:
// docs/architecture.md), and its other adapters the packages under
// adapters/pro. The sub-packages hold the other Pro features, each with
// its own types and ports (routing: routing rules and sender groups, and
// the RoutingStore port; suppression, webhooks, analytics, transfer,
// sesid, domaincheck).
package pro
