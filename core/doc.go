// Package core is the domain of mailsvc: connections, messages, settings,
// users, the transport registry, hooks and the error codes that the HTTP edge
// maps to the spec's error shape. It imports the standard library only.
package core
