package stdlib_test

import (
	"reflect"
	"testing"
)

// A turn the provider reported no usage for says so; it never shows as
// "0 in · 0 out".
func TestUsageLineSaysWhenNothingWasReported(t *testing.T) {
	got := run(t, `
		local chat = require("chat")
		return chat.usage_line({usage = {input_tokens = 0, output_tokens = 0}}, {input = 0, output = 0}),
			chat.usage_line({}, {input = 0, output = 0}),
			chat.usage_line({usage = {}}, {input = 1603, output = 14}),
			chat.usage_line({usage = {input_tokens = 1603, output_tokens = 14}}, {input = 6477, output = 45})`)
	want := []any{
		"usage not reported by the provider",
		"usage not reported by the provider",
		"usage not reported · session 1,603 in · 14 out",
		"1,603 in · 14 out · session 6,477 in · 45 out",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// closest names the listed models nearest to a name the list lacks.
func TestClosestModels(t *testing.T) {
	got := run(t, `
		local chat = require("chat")
		local list = {"gpt-4o", "gpt-4o-mini", "o3-mini", "claude-sonnet-4-5", "gpt-4.1"}
		return table.concat(chat.closest("gpt-4o-mni", list, 3), ","),
			table.concat(chat.closest("sonnet", list, 1), ","),
			table.concat(chat.closest("GPT-4.1", list, 1), ","),
			#chat.closest("x", {}, 3)`)
	want := []any{"gpt-4o-mini,gpt-4o,gpt-4.1", "claude-sonnet-4-5", "gpt-4.1", int64(0)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
