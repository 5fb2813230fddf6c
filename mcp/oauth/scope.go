package oauth

import (
	"slices"
	"strings"
)

// offlineAccess is the scope that asks for a refresh token.
const offlineAccess = "offline_access"

// chooseScope picks the scope to ask for: the challenge's scope, else all
// of the PRM's scopes_supported, else none; offline_access is added only
// when the authorization server lists it.
func chooseScope(challenged string, d *Discovery) string {
	s := splitScope(challenged)
	if len(s) == 0 && d.PRM != nil {
		s = slices.Clone(d.PRM.ScopesSupported)
	}
	if slices.Contains(d.Metadata.ScopesSupported, offlineAccess) && !slices.Contains(s, offlineAccess) {
		s = append(s, offlineAccess)
	}
	return strings.Join(s, " ")
}

// withOffline returns scope with offline_access added when it is not
// empty and the authorization server lists offline_access: a step-up
// keeps asking for the refresh token.
func withOffline(scope string, d *Discovery) string {
	if scope == "" || !slices.Contains(d.Metadata.ScopesSupported, offlineAccess) {
		return scope
	}
	return unionScope(scope, offlineAccess)
}

// splitScope splits a space-separated scope string, dropping empties.
func splitScope(s string) []string { return strings.Fields(s) }

// unionScope returns the scopes of a followed by those of b not in a.
func unionScope(a, b string) string {
	out := splitScope(a)
	for _, s := range splitScope(b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// holdsAll reports whether every scope of want is in held.
func holdsAll(held, want string) bool {
	h := splitScope(held)
	for _, s := range splitScope(want) {
		if !slices.Contains(h, s) {
			return false
		}
	}
	return true
}
