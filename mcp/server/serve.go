package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"tai/mcp"
)

// HTTP limits Serve sets, so idle or slow connections cannot hold the
// server: a client has ReadHeaderTimeout to send its headers and
// ReadTimeout for the whole request; an idle keep-alive connection is
// closed after IdleTimeout. WriteTimeout leaves room for the longest
// served call (a chat turn of up to mcp.MCP_CHAT_TIMEOUT).
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 2 * time.Minute
	WriteTimeout      = mcp.MCP_CHAT_TIMEOUT + time.Minute
	IdleTimeout       = 2 * time.Minute
	MaxHeaderBytes    = 64 << 10
)

// Serve answers on ln until ctx ends, then shuts down gracefully: it stops
// accepting, lets in-flight requests finish for Options.ShutdownGrace,
// cancels the ones still running, and closes every session. It sweeps idle
// sessions while it runs. It returns nil after a shutdown caused by ctx,
// else the listener's error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ErrorLog:          nil,
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()

	sweep := time.NewTicker(s.sweepEvery())
	defer sweep.Stop()
	for {
		select {
		case err := <-done:
			s.Close()
			return err
		case <-sweep.C:
			if n := s.Sweep(); n > 0 {
				s.logf("%d idle sessions dropped", n)
			}
		case <-ctx.Done():
			grace, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
			err := hs.Shutdown(grace)
			cancel()
			// Whatever still runs is cancelled; its handler answers at
			// once, and the connection is closed after a short wait.
			s.Close()
			if errors.Is(err, context.DeadlineExceeded) {
				wait, cancel := context.WithTimeout(context.Background(), time.Second)
				_ = hs.Shutdown(wait)
				cancel()
				hs.Close()
			}
			<-done
			return nil
		}
	}
}
