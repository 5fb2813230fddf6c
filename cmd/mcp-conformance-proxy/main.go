package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv("TAI_MCP_KEY"), os.Stdout, os.Stderr))
}

// run parses the flags, listens and proxies until ctx ends.
func run(ctx context.Context, args []string, key string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp-conformance-proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "", "the MCP server's endpoint `URL`")
	listen := fs.String("listen", "127.0.0.1:0", "loopback `ADDR` to listen on")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	h, err := newProxy(*target, key)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-conformance-proxy: %v\n", err)
		return 2
	}
	host, _, err := net.SplitHostPort(*listen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(stderr, "mcp-conformance-proxy: -listen %q must be a loopback address and port: the proxy adds the key to whatever reaches it\n", *listen)
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-conformance-proxy: %v\n", err)
		return 1
	}
	u, _ := url.Parse(*target)
	fmt.Fprintf(stdout, "http://%s%s\n", ln.Addr(), u.Path)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "mcp-conformance-proxy: %v\n", err)
		return 1
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		return 0
	}
}

// newProxy returns the handler forwarding to target with the key added.
func newProxy(target, key string) (http.Handler, error) {
	if key == "" {
		return nil, errors.New("TAI_MCP_KEY is not set: the proxy adds it as the Bearer key")
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("-target %q must be the server's http(s) endpoint URL", target)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.URL.Path = r.In.URL.Path
			r.Out.URL.RawPath = r.In.URL.RawPath
			r.Out.Host = r.In.Host // the server must see the Host the client sent
			r.Out.Header.Set("Authorization", "Bearer "+key)
		},
		FlushInterval: -1,
	}, nil
}
