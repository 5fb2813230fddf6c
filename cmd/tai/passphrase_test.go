package main

import (
	"errors"
	"strings"
	"testing"
)

func TestReadLineEditsLikeATerminal(t *testing.T) {
	tests := []struct {
		name, typed, want string
		err               string
	}{
		{"enter", "secret\rrest", "secret", ""},
		{"newline", "secret\n", "secret", ""},
		{"backspace", "secrex\x7ft\n", "secret", ""},
		{"backspace over a multi-byte character", "pässé\x7f\x08\n", "päs", ""},
		{"backspace on an empty line", "\x7f\x7fok\n", "ok", ""},
		{"ctrl-u", "wrong\x15right\n", "right", ""},
		{"ctrl-c", "half\x03more\n", "", "cancelled"},
		{"ctrl-d on an empty line", "\x04", "", "no passphrase given"},
		{"ctrl-d inside a line is ignored", "ab\x04c\n", "abc", ""},
		{"end of input after text", "secret", "secret", ""},
		{"end of input at once", "", "", "no passphrase given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readLine(strings.NewReader(tt.typed))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := readLine(strings.NewReader("\x03")); !errors.Is(err, errCancelled) {
		t.Fatalf("Ctrl-C gives %v, want errCancelled", err)
	}
}
