package vault

import (
	"encoding/json"
	"strconv"
)

// appendEntryJSON appends e as json.Marshal encodes it, byte for byte,
// without reflection: an audit append encodes one entry per tool call.
// A string with a byte json.Marshal escapes (controls, quotes, <, >, &,
// anything past ASCII) is handed to json.Marshal; so is a time outside
// the years it encodes.
func appendEntryJSON(b []byte, e AuditEntry) ([]byte, error) {
	if y := e.Time.Year(); y < 0 || y > 9999 {
		line, err := json.Marshal(e)
		return append(b, line...), err
	}
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"time":"`...)
	b = e.Time.AppendFormat(b, timeRFC3339Nano)
	b = append(b, `","kind":`...)
	b = appendJSONString(b, e.Kind)
	b = append(b, `,"subject":`...)
	b = appendJSONString(b, e.Subject)
	b = append(b, `,"digest":`...)
	b = appendJSONString(b, e.Digest)
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, e.Outcome)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(e.Duration), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(e.Size), 10)
	if e.Session != "" {
		b = append(b, `,"session":`...)
		b = appendJSONString(b, e.Session)
	}
	b = append(b, `,"prev":`...)
	b = appendJSONString(b, e.Prev)
	b = append(b, `,"hash":`...)
	b = appendJSONString(b, e.Hash)
	if e.MAC != "" {
		b = append(b, `,"mac":`...)
		b = appendJSONString(b, e.MAC)
	}
	return append(b, '}'), nil
}

// timeRFC3339Nano is the layout time.Time's MarshalJSON writes.
const timeRFC3339Nano = "2006-01-02T15:04:05.999999999Z07:00"

// appendJSONString appends s quoted as json.Marshal quotes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
