package vault

import (
	"errors"
	"strings"
	"testing"
)

func TestRecordGet(t *testing.T) {
	s := newStore(t, nil)
	id, err := s.RecordPut("0123456789", map[string]any{"tool": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if id != "r1" {
		t.Fatalf("first id = %q, want r1", id)
	}
	tests := []struct {
		name           string
		offset, length int
		want, wantErr  string
	}{
		{"whole", 0, 0, "0123456789", ""},
		{"negative length is to the end", 3, -1, "3456789", ""},
		{"slice", 2, 3, "234", ""},
		{"length clamped", 8, 100, "89", ""},
		{"at the end", 10, 0, "", ""},
		{"past the end", 11, 0, "", "past its end (10 bytes)"},
		{"negative offset", -1, 0, "", "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rec, err := s.RecordGet(id, tt.offset, tt.length)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("RecordGet = %q, %v; want %q", got, err, tt.want)
			}
			if rec.ID != id || rec.Size != 10 || rec.Meta["tool"] != "x" || rec.Created.IsZero() {
				t.Fatalf("record = %+v", rec)
			}
		})
	}
	for _, bad := range []string{"", "r", "r0", "x1", "r99", "r1a", "12"} {
		if _, _, err := s.RecordGet(bad, 0, 0); !errors.Is(err, ErrNotFound) {
			t.Errorf("RecordGet(%q) = %v, want ErrNotFound", bad, err)
		}
	}
}

func TestRecordLargeAndList(t *testing.T) {
	s := newStore(t, nil)
	big := strings.Repeat("abcdefghij", 800_000) // 8 MB
	var ids []string
	for _, text := range []string{"first", big, "third"} {
		id, err := s.RecordPut(text, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	got, rec, err := s.RecordGet(ids[1], 0, 0)
	if err != nil || got != big || rec.Size != len(big) {
		t.Fatalf("big record: %d bytes, size %d, %v", len(got), rec.Size, err)
	}
	if got, _, _ := s.RecordGet(ids[1], 7_999_995, 0); got != "fghij" {
		t.Fatalf("tail of big record = %q", got)
	}
	list, err := s.RecordList(2)
	if err != nil || len(list) != 2 || list[0].ID != ids[2] || list[1].ID != ids[1] {
		t.Fatalf("RecordList(2) = %+v, %v", list, err)
	}
	if all, _ := s.RecordList(0); len(all) != 3 || all[2].ID != ids[0] {
		t.Fatalf("RecordList(0) = %+v", all)
	}
}

func TestRecordPutRedacts(t *testing.T) {
	s := newStore(t, nil)
	if err := s.SecretSet("api-key", "sk-live-123456", nil); err != nil {
		t.Fatal(err)
	}
	id, err := s.RecordPut("result with sk-live-123456 inside", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := s.RecordGet(id, 0, 0)
	if want := "result with [REDACTED:api-key] inside"; got != want {
		t.Fatalf("stored %q, want %q", got, want)
	}
}
