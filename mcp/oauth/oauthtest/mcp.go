package oauthtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// prmPath is where the PRM is served ("" for none).
func (s *Server) prmPath() string {
	switch s.opts.PRM {
	case PRMHeader:
		return "/custom/metadata/prm.json"
	case PRMPath:
		return "/.well-known/oauth-protected-resource/mcp"
	case PRMRoot:
		return "/.well-known/oauth-protected-resource"
	}
	return ""
}

// resource is the PRM's resource: the override, else the server's URL
// (the origin for a root document).
func (s *Server) resource() string {
	switch {
	case s.opts.Resource != "":
		return s.opts.Resource
	case s.opts.PRM == PRMRoot:
		return s.mcp.URL
	}
	return s.URL()
}

func (s *Server) routeMCP(mux *http.ServeMux) {
	if p := s.prmPath(); p != "" {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
			doc := map[string]any{"resource": s.resource(), "authorization_servers": []string{s.Issuer()}}
			if s.opts.PRMScopes != nil {
				doc["scopes_supported"] = s.opts.PRMScopes
			}
			writeJSON(w, http.StatusOK, doc)
		})
	}
	mux.HandleFunc("POST /mcp", s.serveMCP)
}

// challenge is the WWW-Authenticate value of a refusal.
func (s *Server) challenge(errCode, scope string) string {
	parts := []string{}
	if errCode != "" {
		parts = append(parts, fmt.Sprintf("error=%q", errCode))
	}
	if scope != "" {
		parts = append(parts, fmt.Sprintf("scope=%q", scope))
	}
	if s.opts.PRM == PRMHeader {
		parts = append(parts, fmt.Sprintf("resource_metadata=%q", s.mcp.URL+s.prmPath()))
	}
	return "Bearer " + strings.Join(parts, ", ")
}

func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	open := s.opts.OpenInitialize && (msg.Method == "initialize" || msg.Method == "notifications/initialized")
	s.mu.Lock()
	tok, hasTok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	g, valid := s.access[tok]
	if valid && !s.now.Before(g.expiry) {
		valid = false
	}
	wantResource := s.resource()
	s.mu.Unlock()
	if !open {
		if !valid || g.resource != wantResource {
			code := ""
			if hasTok {
				code = "invalid_token"
			}
			w.Header().Set("WWW-Authenticate", s.challenge(code, s.opts.ChallengeScope))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if msg.Method == "tools/call" && s.opts.CallScope != "" && (s.opts.StubbornCallScope || !scopeHolds(g.scope, s.opts.CallScope)) {
		w.Header().Set("WWW-Authenticate", s.challenge("insufficient_scope", s.opts.CallScope))
		http.Error(w, "insufficient scope", http.StatusForbidden)
		return
	}
	if len(msg.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	switch msg.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "oauthtest", "version": "1"}}
	case "tools/list":
		result = map[string]any{"tools": []any{map[string]any{"name": "whoami", "description": "says which scope the call carried",
			"inputSchema": map[string]any{"type": "object"}}}}
	case "tools/call":
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "scope: " + g.scope}}}
	case "ping":
		result = map[string]any{}
	default:
		writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "unknown method"}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
}
