// Package server runs the HTTP front end of the job queue.
package server

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// ErrClosed is returned by Serve after Shutdown.
var ErrClosed = errors.New("server: closed")

const defaultTimeout = 30 * time.Second

// Server answers job requests over HTTP.
type Server struct {
	addr    string
	handler http.Handler
	timeout time.Duration
	closed  bool
}

// Option configures a Server.
type Option func(*Server)

// WithTimeout sets how long a request may take before it is cancelled.
func WithTimeout(d time.Duration) Option {
	return func(s *Server) { s.timeout = d }
}

// New returns a server listening on addr.
func New(addr string, h http.Handler, opts ...Option) *Server {
	s := &Server{addr: addr, handler: h, timeout: defaultTimeout}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// Serve accepts connections until the context is cancelled.
func (s *Server) Serve(ctx context.Context) error {
	if s.closed {
		return ErrClosed
	}
	srv := &http.Server{Addr: s.addr, Handler: http.TimeoutHandler(s.handler, s.timeout, "timeout")}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	return srv.ListenAndServe()
}

func (s *Server) Shutdown() { s.closed = true }
