package mcp

import (
	"errors"
	"net/url"
	"sort"
	"strings"
)

// MinSecretLen is the shortest credential Scrub blanks out: a shorter
// value would blank out ordinary words.
const MinSecretLen = 6

// Scrub blanks every one of secrets of at least MinSecretLen bytes out of
// s (text from a server, which may echo a rejected credential back),
// longest first, so a whole value goes before a part of it.
func Scrub(s string, secrets ...string) string {
	if !sort.SliceIsSorted(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) }) {
		secrets = append([]string(nil), secrets...)
		sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	}
	for _, v := range secrets {
		if len(v) >= MinSecretLen {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// URLErrorCause returns the cause inside a *url.Error, whose own text
// repeats the method and the whole URL (query string and all), or err
// when it holds none.
func URLErrorCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
