package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
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

func TestRecordDelete(t *testing.T) {
	s := newStore(t, nil)
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		id, err := s.RecordPut(text, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.RecordDelete(ids[1]); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, want string
	}{
		{ids[1], "record r2 was deleted"},
		{"r9", "record r9 was never stored: the newest record is r3"},
		{"x", "record ids look like r12"},
	}
	for _, tt := range tests {
		for name, op := range map[string]func() error{
			"RecordGet":    func() error { _, _, err := s.RecordGet(tt.id, 0, 0); return err },
			"RecordDelete": func() error { return s.RecordDelete(tt.id) },
		} {
			if err := op(); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s(%q) = %v, want ErrNotFound saying %q", name, tt.id, err, tt.want)
			}
		}
	}
	list, err := s.RecordList(0)
	if err != nil || len(list) != 2 || list[0].ID != ids[2] || list[1].ID != ids[0] {
		t.Fatalf("RecordList after delete = %+v, %v", list, err)
	}
	// Ids are never reused, even for the deleted one.
	if id, err := s.RecordPut("four", nil); err != nil || id != "r4" {
		t.Fatalf("next id = %q, %v; want r4", id, err)
	}
	empty := newStore(t, nil)
	if _, _, err := empty.RecordGet("r1", 0, 0); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no records yet") {
		t.Fatalf("RecordGet on an empty vault = %v", err)
	}
}

func TestRecordRetentionKeepsNewest(t *testing.T) {
	opts := testOptions("", nil)
	opts.RecordLimit = 10_000
	s := newStore(t, opts)
	text := func(i int) string { return fmt.Sprintf("%04d", i) + strings.Repeat("x", 996) } // 1000 bytes
	for i := 1; i <= 25; i++ {
		id, err := s.RecordPut(text(i), nil)
		if err != nil {
			t.Fatal(err)
		}
		list, err := s.RecordList(0)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, r := range list {
			total += r.Size
		}
		if total > 10_000 {
			t.Fatalf("after %d puts the records hold %d bytes, over the 10000 limit", i, total)
		}
		if list[0].ID != id {
			t.Fatalf("the newest record is %s, want %s", list[0].ID, id)
		}
	}
	list, err := s.RecordList(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 10 {
		t.Fatalf("kept %d records, want the newest 10", len(list))
	}
	for j, rec := range list {
		want := 25 - j
		if got, _, err := s.RecordGet(rec.ID, 0, 4); err != nil || got != fmt.Sprintf("%04d", want) || rec.ID != fmt.Sprintf("r%d", want) {
			t.Fatalf("kept record %d = %s %q, %v; want r%d", j, rec.ID, got, err, want)
		}
	}
	_, _, err = s.RecordGet("r15", 0, 0)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "record r15 was dropped to make room") || !strings.Contains(err.Error(), "9.8 KiB") {
		t.Fatalf("RecordGet of a dropped record = %v", err)
	}
	// A deleted record above the dropped ones is reported as deleted.
	if err := s.RecordDelete("r20"); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordDelete("r20"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "r20 was deleted") {
		t.Fatalf("second RecordDelete = %v", err)
	}
}

func TestRecordTooLargeRefused(t *testing.T) {
	opts := testOptions("", nil)
	opts.RecordLimit = 1 << 20
	s := newStore(t, opts)
	if _, err := s.RecordPut("kept", nil); err != nil {
		t.Fatal(err)
	}
	_, err := s.RecordPut(strings.Repeat("y", 1<<20+1), nil)
	if err == nil || !strings.Contains(err.Error(), "more than the 1 MiB the vault keeps") {
		t.Fatalf("RecordPut over the limit = %v", err)
	}
	if got, _, err := s.RecordGet("r1", 0, 0); err != nil || got != "kept" {
		t.Fatalf("a refused put dropped older records: %q, %v", got, err)
	}
	// Exactly the limit fits, dropping everything older.
	id, err := s.RecordPut(strings.Repeat("y", 1<<20), nil)
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := s.RecordList(0); len(list) != 1 || list[0].ID != id {
		t.Fatalf("records after a put of the whole limit = %+v", list)
	}
}

func TestRecordNoLimit(t *testing.T) {
	opts := testOptions("", nil)
	opts.RecordLimit = -1
	s := newStore(t, opts)
	for range 5 {
		if _, err := s.RecordPut(strings.Repeat("z", 1000), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.RecordPrune(); n != 0 || err != nil {
		t.Fatalf("RecordPrune without a policy = %d, %v", n, err)
	}
	if list, _ := s.RecordList(0); len(list) != 5 {
		t.Fatalf("kept %d records without a limit, want 5", len(list))
	}
}

func TestRecordPruneAfterLowering(t *testing.T) {
	s := newStore(t, nil)
	for range 6 {
		if _, err := s.RecordPut(strings.Repeat("a", 1000), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Another Store on the same file with a lower limit prunes on demand.
	opts := testOptions("", nil)
	opts.RecordLimit = 2500
	low, err := Open(s.Path(), opts)
	if err != nil {
		t.Fatal(err)
	}
	n, err := low.RecordPrune()
	if err != nil || n != 4 {
		t.Fatalf("RecordPrune = %d, %v; want 4 dropped", n, err)
	}
	if list, _ := s.RecordList(0); len(list) != 2 || list[0].ID != "r6" || list[1].ID != "r5" {
		t.Fatalf("records after prune = %+v", list)
	}
}

func TestRecordMaxAge(t *testing.T) {
	opts := testOptions("", nil)
	opts.RecordMaxAge = time.Hour
	s := newStore(t, opts)
	for _, text := range []string{"old one", "old two", "recent"} {
		if _, err := s.RecordPut(text, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Backdate the first two records' creation times.
	if err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		for seq := uint64(1); seq <= 2; seq++ {
			var rec Record
			if err := json.Unmarshal(b.Get(seqKey(seq)), &rec); err != nil {
				return err
			}
			rec.Created = rec.Created.Add(-2 * time.Hour)
			data, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := b.Put(seqKey(seq), data); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordPut("new", nil); err != nil {
		t.Fatal(err)
	}
	list, err := s.RecordList(0)
	if err != nil || len(list) != 2 || list[0].ID != "r4" || list[1].ID != "r3" {
		t.Fatalf("records after an aged put = %+v, %v", list, err)
	}
	if _, _, err := s.RecordGet("r1", 0, 0); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "none older than 1h0m0s") {
		t.Fatalf("RecordGet of an aged-out record = %v", err)
	}
	if _, err := Open(s.Path(), &Options{RecordMaxAge: -time.Second}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("Open with a negative RecordMaxAge = %v", err)
	}
}

func TestByteSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{1023, "1023 bytes"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{DefaultRecordLimit, "256 MiB"},
		{3 << 30, "3 GiB"},
	}
	for _, tt := range tests {
		if got := byteSize(tt.n); got != tt.want {
			t.Errorf("byteSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestRecordRetentionBoundsFile: three writers spilling 300 KB records keep
// the vault file near the record limit instead of growing with every put.
func TestRecordRetentionBoundsFile(t *testing.T) {
	opts := testOptions("", nil)
	opts.RecordLimit = 2 << 20
	s := newStore(t, opts)
	const writers, puts, size = 3, 60, 300_000 // 54 MB written in all
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := Open(s.Path(), opts)
			if err != nil {
				t.Error(err)
				return
			}
			for range puts {
				if _, err := st.RecordPut(strings.Repeat(string(rune('a'+w)), size), nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if limit := 8 * opts.RecordLimit; fi.Size() > limit {
		t.Fatalf("the vault file is %s after writing %s of records with a %s limit; want at most %s",
			byteSize(fi.Size()), byteSize(writers*puts*size), byteSize(opts.RecordLimit), byteSize(limit))
	}
	list, err := s.RecordList(0)
	if err != nil || len(list) != int(opts.RecordLimit/size) {
		t.Fatalf("kept %d records, %v; want %d", len(list), err, opts.RecordLimit/size)
	}
}
