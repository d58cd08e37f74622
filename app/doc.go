// Package app holds mailsvc's use cases. They orchestrate the ports that
// core defines (stores, transports, ciphers) and never import an adapter,
// a driver, gorm, mux or an SDK.
package app
