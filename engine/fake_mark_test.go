package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"tai/engine/tool"
	"tai/vault/vaulttest"
)

// fakeMark is what a hostile server or model sends: text that opens a
// redaction mark and runs on for megabytes before closing it.
var fakeMark = "boom [REDACTED:" + strings.Repeat("A", 3<<20) + "] end"

// A tool error holding a fake redaction mark is cut at MaxErrorText like
// any other; a mark the redaction wrote, falling on the cut, stays whole.
func TestErrorCapHoldsForAFakeMark(t *testing.T) {
	store := vaulttest.Open(t)
	if err := store.SecretSet("tok", "s3cr3t-token-value", nil); err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry(store, tool.NewApprover(tool.Yolo, nil))
	for _, tc := range []struct {
		name, msg, want string
	}{
		{"fake mark", fakeMark, ""},
		{"fake mark with a known name too long", "x[REDACTED:tok" + strings.Repeat("B", 3<<20) + "]", ""},
		{"real mark at the cut", strings.Repeat("x", tool.MaxErrorText-5) + "s3cr3t-token-value" + strings.Repeat("y", 1<<20), "[REDACTED:tok]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "fail_" + strings.ReplaceAll(tc.name, " ", "_")
			addTool(t, reg, tool.Tool{Name: name, Description: "fails", Safe: true, Run: func(context.Context, map[string]any) (tool.Result, error) {
				return tool.Result{}, errors.New(tc.msg)
			}})
			_, err := reg.Dispatch(context.Background(), name, nil)
			if err == nil {
				t.Fatal("no error")
			}
			got := err.Error()
			if len(got) > tool.MaxErrorText+200 || !strings.Contains(got, "bytes more were cut") {
				t.Fatalf("the error is %d bytes, want at most about %d and a note of the cut", len(got), tool.MaxErrorText)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("the mark %s was cut in two: …%s", tc.want, got[max(0, len(got)-200):])
			}
		})
	}
}

// record_read pages of a record holding fake marks stay within the page
// size asked for; a real mark on a page's end is kept whole.
func TestRecordReadPageHoldsForAFakeMark(t *testing.T) {
	e := newEngine(t, nil, &Options{Mode: tool.Yolo})
	if err := e.Store().SecretSet("tok", "s3cr3t-token-value", nil); err != nil {
		t.Fatal(err)
	}
	real := strings.Repeat("r", 100-5) + "s3cr3t-token-value" + strings.Repeat("z", 200)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"fake mark", fakeMark, ""},
		{"fake mark at the page end", strings.Repeat("p", 90) + "[REDACTED:" + strings.Repeat("A", 1<<20) + "]", ""},
		{"real mark at the page end", real, "[REDACTED:tok]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := e.Store().RecordPut(tc.text, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := newSession(t, e)
			out := dispatchText(t, s, "record_read", map[string]any{"id": id, "offset": float64(0), "length": float64(100)})
			header, page, _ := strings.Cut(out, "\n")
			if tc.want != "" {
				if !strings.HasSuffix(page, tc.want) {
					t.Fatalf("the page does not end in the whole mark %s: %q", tc.want, page)
				}
				return
			}
			if len(page) > 100 || !strings.Contains(header, fmt.Sprintf("bytes 0-%d of", len(page))) {
				t.Fatalf("a 100-byte page is %d bytes: %.200q", len(page), out)
			}
		})
	}
}
