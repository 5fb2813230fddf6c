package elicit

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParseForm: any schema gives questions or a refusal (an
// *Unshowable), never a panic; the questions it gives take their own
// defaults, and empty answers make content the form accepts.
func FuzzParseForm(f *testing.F) {
	f.Add([]byte(everything), "1")
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"const":"x"}]},"minItems":1}}}`), "x")
	f.Add([]byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":-1e300,"maximum":1e300}}}`), "1e400")
	f.Add([]byte(`{"type":"object","properties":{"s":{"type":"string","pattern":"(","minLength":2,"format":"date-time"}},"required":["s"]}`), "")
	f.Fuzz(func(t *testing.T, schema []byte, answer string) {
		form, err := ParseForm(json.RawMessage(schema))
		if err != nil {
			var u *Unshowable
			if !errors.As(err, &u) {
				t.Fatalf("ParseForm gave a %T, not an Unshowable: %v", err, err)
			}
			return
		}
		values := map[string]any{}
		for i := range form.Fields {
			fl := &form.Fields[i]
			_ = fl.Hint()
			if fl.Default != nil {
				if _, err := fl.Check(fl.Default); err != nil {
					t.Fatalf("field %q refuses its own default %#v: %v", fl.Name, fl.Default, err)
				}
				if v, err := fl.Parse(fl.DefaultText()); err != nil && fl.Kind != String {
					t.Fatalf("field %q refuses its default typed as %q: %v (%v)", fl.Name, fl.DefaultText(), err, v)
				}
			}
			if v, err := fl.Parse(answer); err == nil && v != nil {
				values[fl.Name] = v
			}
		}
		if c, err := form.Content(values); err == nil {
			if _, err := json.Marshal(c); err != nil {
				t.Fatalf("content does not encode: %v", err)
			}
		}
	})
}
