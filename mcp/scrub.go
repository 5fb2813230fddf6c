package mcp

import (
	"errors"
	"net/url"
)

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
