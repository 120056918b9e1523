package main

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Listener limits and their defaults (the defaults of serverLimits' flags). A connection that sends its headers
// or body too slowly is cut off after the read timeouts; a response must be written within WriteTimeout of the
// request's headers (it covers the body read, the handler and the write: GraphQL pages have a 5 s deadline each,
// gateway bodies are bounded by the gateway's size limit); an idle keep-alive connection is closed after
// IdleTimeout.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 30 * time.Second
	defaultWriteTimeout      = 60 * time.Second
	defaultIdleTimeout       = 120 * time.Second
	// defaultMaxHeaderBytes bounds the request line and headers (431 above; a GET /graphql query string too).
	defaultMaxHeaderBytes = 64 << 10
)

// serverLimits are the timeouts and header bound of an HTTP listener (the API and the metrics listeners).
type serverLimits struct {
	ReadHeaderTimeout time.Duration `help:"Time to read a request's headers." default:"10s" env:"HEADWATER_HTTP_READ_HEADER_TIMEOUT" yaml:"readHeaderTimeout"`
	ReadTimeout       time.Duration `help:"Time to read a whole request, body included (slow bodies are cut off)." default:"30s" env:"HEADWATER_HTTP_READ_TIMEOUT" yaml:"readTimeout"`
	WriteTimeout      time.Duration `help:"Time from a request's headers to the end of its response." default:"60s" env:"HEADWATER_HTTP_WRITE_TIMEOUT" yaml:"writeTimeout"`
	IdleTimeout       time.Duration `help:"Time an idle keep-alive connection is kept open." default:"120s" env:"HEADWATER_HTTP_IDLE_TIMEOUT" yaml:"idleTimeout"`
	MaxHeaderBytes    int           `help:"Largest request line plus headers in bytes (431 above)." default:"65536" env:"HEADWATER_HTTP_MAX_HEADER_BYTES" yaml:"maxHeaderBytes"`
}

// defaultServerLimits are the defaults, for listeners built without flags.
var defaultServerLimits = serverLimits{ReadHeaderTimeout: defaultReadHeaderTimeout, ReadTimeout: defaultReadTimeout,
	WriteTimeout: defaultWriteTimeout, IdleTimeout: defaultIdleTimeout, MaxHeaderBytes: defaultMaxHeaderBytes}

// Validate checks the listener limits.
func (l serverLimits) Validate() error {
	switch {
	case l.ReadHeaderTimeout <= 0 || l.ReadTimeout <= 0 || l.WriteTimeout <= 0 || l.IdleTimeout <= 0:
		return errors.New("http.read-header-timeout, read-timeout, write-timeout, idle-timeout: must be positive")
	case l.ReadHeaderTimeout > l.ReadTimeout:
		return fmt.Errorf("http.read-header-timeout: must not exceed read-timeout (%s), got %s", l.ReadTimeout, l.ReadHeaderTimeout)
	case l.MaxHeaderBytes < minHeaderBytes:
		return fmt.Errorf("http.max-header-bytes: must be at least %d, got %d", minHeaderBytes, l.MaxHeaderBytes)
	}
	return nil
}

// minHeaderBytes is the smallest accepted header bound (a JWT bearer token needs a few KB).
const minHeaderBytes = 8 << 10

// server is an http.Server for addr with these limits.
func (l serverLimits) server(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes}
}
