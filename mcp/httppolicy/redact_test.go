package httppolicy

import "testing"

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8765/mcp", "http://127.0.0.1:8765/mcp"},
		{"https://u:p@host/x?token=1#frag", "https://host/x?…"},
		{"https://host/x#frag", "https://host/x"},
		{"http://[::1/?k=v", "http://[::1/…"},
	}
	for _, tc := range tests {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
