package mcp

import (
	"encoding/json"
	"errors"
)

// ParseToolCall reads the params of a tools/call request: the tool's name
// ("" when it is absent or null) and the raw arguments (nil when absent),
// a subslice of params. It fails when params is not one JSON object or
// the name is neither a string nor null. A name is decoded as
// encoding/json decodes it (escapes resolved, invalid UTF-8 as U+FFFD).
func ParseToolCall(params json.RawMessage) (name string, args json.RawMessage, err error) {
	name, args, _, err = ParseToolCallMeta(params)
	return name, args, err
}

// ErrProgressToken is ParseToolCallMeta's error for a _meta.progressToken
// that is neither a string nor a number (an object, an array, a boolean).
var ErrProgressToken = errors.New("_meta.progressToken must be a string or an integer")

// ParseToolCallMeta is ParseToolCall that also returns the request's
// _meta.progressToken (nil when absent or null; a subslice of params, a
// string or a number as the spec allows, anything else an error).
func ParseToolCallMeta(params json.RawMessage) (name string, args, progressToken json.RawMessage, err error) {
	var rawName, meta []byte
	err = eachMember(params, validating, func(key, val []byte) {
		switch string(key) {
		case "name":
			rawName = val
		case "arguments":
			args = val
		case "_meta":
			meta = val
		}
	})
	if err != nil {
		return "", nil, nil, err
	}
	if len(meta) > 0 && meta[0] == '{' {
		_ = eachMember(meta, trusted, func(key, val []byte) {
			if string(key) == "progressToken" {
				progressToken = val
			}
		})
		switch {
		case isNull(progressToken):
			progressToken = nil
		case progressToken[0] != '"' && progressToken[0] != '-' && (progressToken[0] < '0' || progressToken[0] > '9'):
			return "", nil, nil, ErrProgressToken
		}
	}
	if rawName == nil || string(rawName) == "null" {
		return "", args, progressToken, nil
	}
	name, ok := jsonString(rawName)
	if !ok {
		return "", nil, nil, errors.New("the name is not a string")
	}
	return name, args, progressToken, nil
}

// AppendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it.
func AppendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
