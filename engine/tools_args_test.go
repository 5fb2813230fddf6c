package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"tai/engine/tool"
)

func TestToolArgumentErrors(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"required string missing", "read_file", map[string]any{}, `argument "path" is missing: give it as a string`},
		{"required string null", "read_file", map[string]any{"path": nil}, `argument "path" is missing: give it as a string`},
		{"required string empty", "glob", map[string]any{"pattern": ""}, `argument "pattern" is empty`},
		{"string of the wrong type", "list_dir", map[string]any{"path": 3.0}, `argument "path" is a float64: give it as a string`},
		{"fraction for a whole number", "read_file", map[string]any{"path": "f", "start_line": 1.5}, `argument "start_line" is 1.5: give a whole number`},
		{"huge whole number", "record_read", map[string]any{"id": "x", "offset": 1e300}, `argument "offset" is 1e+300: give a whole number`},
		{"string for a whole number", "grep", map[string]any{"pattern": "x", "max_matches": "10"}, `argument "max_matches" is a string: give a whole number`},
		{"string for a boolean", "edit_file", map[string]any{"path": "f", "old_string": "a", "new_string": "b", "replace_all": "yes"}, `argument "replace_all" is a string: give true or false`},
		{"list item of the wrong type", "shell", map[string]any{"argv": []any{"ls", 1.0}}, `argument "argv" item 1 is a float64: give a list of strings`},
		{"string for a list", "fork", map[string]any{"task": "t", "tools": "shell"}, `argument "tools" is a string: give a list of strings`},
		{"the first bad argument is named", "secret_set", map[string]any{"name": 1.0, "value": 2.0}, `argument "name" is a float64: give it as a string`},
		{"write_file without content", "write_file", map[string]any{"path": "f", "append": "no"}, `argument "content" is missing: give it as a string`},
		{"write_file append of the wrong type", "write_file", map[string]any{"path": "f", "content": "", "append": "no"}, `argument "append" is a string: give true or false`},
		{"shell form", "shell", map[string]any{"cwd": "."}, `give exactly one of command (a shell command line) or argv (a list: program, arguments)`},
		{"types are checked before the form", "shell", map[string]any{"cwd": 1.0}, `argument "cwd" is a float64: give it as a string`},
		{"shell cwd of the wrong type", "shell", map[string]any{"command": "true", "cwd": 1.0}, `argument "cwd" is a float64: give it as a string`},
		{"profile_create name first", "profile_create", map[string]any{"model": 1.0}, `argument "name" is missing: give it as a string`},
		{"profile_create field", "profile_create", map[string]any{"name": "p", "tools": []any{"a", true}}, `argument "tools" item 1 is a bool: give a list of strings`},
		{"profile_create max_tokens", "profile_create", map[string]any{"name": "p", "max_tokens": 0.5}, `argument "max_tokens" is 0.5: give a whole number`},
		{"range checks follow the type checks", "audit_tail", map[string]any{"n": 0.0, "kind": 1.0}, `argument "kind" is a float64: give it as a string`},
		{"range", "audit_tail", map[string]any{"n": 0.0}, `audit_tail: n 0 is out of range: give 1 to 500`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := dispatch(t, e, tt.tool, tt.args)
			if !res.IsError || res.Text() != tt.want {
				t.Errorf("%s(%v) = %q (isError %v); want %q", tt.tool, tt.args, res.Text(), res.IsError, tt.want)
			}
		})
	}
}

func TestArgReader(t *testing.T) {
	args := map[string]any{
		"s": "text", "empty": "", "null": nil,
		"f": 42.0, "i": 7, "i64": int64(-3), "neg": -2.0,
		"yes":  true,
		"list": []any{"a", "b"}, "typed": []string{"c"},
	}
	a := tool.ReadArgs(args)
	got := []any{
		a.Str("s", true), a.Str("empty", false), a.Str("null", false), a.Str("absent", false),
		a.Int("f", 0), a.Int("i", 0), a.Int("i64", 0), a.Int("neg", 0), a.Int("null", 5), a.Int("absent", 9),
		a.Bool("yes"), a.Bool("null"), a.Bool("absent"),
		a.Strings("list"), a.Strings("typed"), a.Strings("null"),
	}
	want := []any{
		"text", "", "", "",
		42, 7, -3, -2, 5, 9,
		true, false, false,
		[]string{"a", "b"}, []string{"c"}, []string(nil),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reads = %#v\nwant    %#v", got, want)
	}
	if err := a.Err(); err != nil {
		t.Errorf("err = %v, want nil", err)
	}

	a = tool.ReadArgs(args)
	if v := a.Int("s", 3); v != 0 {
		t.Errorf("a bad whole number reads as %d, want 0", v)
	}
	if v := a.Str("f", false); v != "" {
		t.Errorf("a bad string reads as %q, want empty", v)
	}
	if v := a.Strings("s"); v != nil {
		t.Errorf("a bad list reads as %q, want nil", v)
	}
	if err := a.Err(); err == nil || err.Error() != `argument "s" is a string: give a whole number` {
		t.Errorf("err = %v; want the first error only", err)
	}
}

func TestUnknownArgumentsAreRejected(t *testing.T) {
	p := &prompter{allow: false}
	e := newEngine(t, nil, &Options{Prompter: p})
	ran := false
	addTool(t, e.Tools(), tool.Tool{Name: "open_schema", Safe: true,
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"a": tool.Prop("string", "")}},
		Run: func(context.Context, map[string]any) (tool.Result, error) {
			ran = true
			return tool.TextResult("ran"), nil
		}})
	addTool(t, e.Tools(), tool.Tool{Name: "closed_schema", Safe: true,
		Parameters: map[string]any{"type": "object", "additionalProperties": false},
		Run: func(context.Context, map[string]any) (tool.Result, error) {
			ran = true
			return tool.TextResult("ran"), nil
		}})
	tests := []struct {
		tool    string
		args    map[string]any
		want    []string
		wantRun bool
	}{
		{tool: "read_file", args: map[string]any{"path": "a.txt", "offset": 2.0, "limit": 1.0},
			want: []string{`read_file does not take "limit", "offset"`, "end_line, path (required), start_line"}},
		{tool: "write_file", args: map[string]any{"file_path": "a.txt", "content": "x"},
			want: []string{`"file_path"`, "append, content (required), path (required)"}},
		{tool: "profile_list", args: map[string]any{"verbose": true}, want: []string{"takes no arguments"}},
		{tool: "closed_schema", args: map[string]any{"x": 1.0}, want: []string{"takes no arguments"}},
		{tool: "open_schema", args: map[string]any{"a": "1", "x": 1.0}, want: []string{"ran"}, wantRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			ran = false
			res, err := newSession(t, e).Dispatch(turnCtx(t), tt.tool, tt.args)
			if err != nil {
				t.Fatalf("Dispatch: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text(), w) {
					t.Errorf("result lacks %q:\n%s", w, res.Text())
				}
			}
			if res.IsError == tt.wantRun || ran != tt.wantRun {
				t.Errorf("isError %v, ran %v; want the call to run: %v", res.IsError, ran, tt.wantRun)
			}
		})
	}
	if len(p.seen()) != 0 {
		t.Errorf("approval was asked for calls that cannot run: %+v", p.seen())
	}
	for _, toolName := range e.Tools().NativeTools() {
		if toolName.Parameters["additionalProperties"] != false && toolName.Name != "open_schema" {
			t.Errorf("%s's schema does not say additionalProperties: false, but unknown arguments are refused", toolName.Name)
		}
	}
}
