package vault

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketConversations holds the REPL's conversations, one JSON row each,
// keyed by a big-endian sequence number.
var bucketConversations = []byte("conversations")

// Retention of conversations.
const (
	// ConversationKeep is how many conversations the vault keeps; saving
	// one more drops the least recently updated.
	ConversationKeep = 200
	// ConversationMaxSize bounds one conversation's stored messages.
	ConversationMaxSize = 8 << 20
	// ConversationMaxAge drops conversations not updated for this long.
	ConversationMaxAge = 90 * 24 * time.Hour
)

// Conversation is one kept conversation: where and when it happened, its
// first user line (the title) and its messages as JSON (the engine's
// message list; the vault does not read it beyond redaction).
type Conversation struct {
	ID       string          `json:"id"`
	Created  time.Time       `json:"created"`
	Updated  time.Time       `json:"updated"`
	Dir      string          `json:"dir,omitempty"`
	Title    string          `json:"title,omitempty"`
	Turns    int             `json:"turns"`
	Profile  string          `json:"profile,omitempty"`
	Messages json.RawMessage `json:"messages,omitempty"`
}

// ConversationPut stores c and returns its id: a new conversation (empty
// ID) gets one ("c" and a number never reused); an existing one is
// replaced, keeping its Created time. Every string in it is redacted
// first with one Redactor snapshot (known secret values never reach the
// row), and it is refused when the secrets cannot be read (see
// Store.Redactor). Then the retention limits apply: conversations older
// than ConversationMaxAge are dropped, and past ConversationKeep the least
// recently updated ones. A conversation whose messages exceed
// ConversationMaxSize is refused with an error saying to compact it.
func (s *Store) ConversationPut(c Conversation) (string, error) {
	red, err := s.Redactor()
	if err != nil {
		return "", fmt.Errorf("vault: the conversation is not kept: %w", err)
	}
	if len(c.Messages) > 0 {
		var v any
		if err := json.Unmarshal(c.Messages, &v); err != nil {
			return "", fmt.Errorf("vault: the conversation's messages are not JSON: %w", err)
		}
		clean, _ := RedactValue(red.Func(), v)
		b, err := json.Marshal(clean)
		if err != nil {
			return "", err
		}
		c.Messages = b
	}
	if len(c.Messages) > ConversationMaxSize {
		return "", &ConversationTooBigError{Size: int64(len(c.Messages))}
	}
	c.Dir, c.Title, c.Profile = red.Redact(c.Dir), red.Redact(c.Title), red.Redact(c.Profile)
	now := time.Now().UTC()
	err = s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketConversations)
		if err != nil {
			return err
		}
		var key []byte
		if c.ID == "" {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			key = conversationKey(seq)
			c.ID = "c" + strconv.FormatUint(seq, 10)
			c.Created = now
		} else {
			seq, ok := parseConversationID(c.ID)
			if !ok {
				return fmt.Errorf("vault: %q is not a conversation id (c and a number)", c.ID)
			}
			key = conversationKey(seq)
			if old := b.Get(key); old != nil {
				var prev Conversation
				if json.Unmarshal(old, &prev) == nil {
					c.Created = prev.Created
				}
			}
			if c.Created.IsZero() {
				c.Created = now
			}
		}
		c.Updated = now
		data, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if err := b.Put(key, data); err != nil {
			return err
		}
		return pruneConversations(b, now)
	})
	if err != nil {
		return "", err
	}
	return c.ID, nil
}

// pruneConversations applies the retention limits.
func pruneConversations(b *bolt.Bucket, now time.Time) error {
	type row struct {
		key     []byte
		updated time.Time
	}
	var rows []row
	err := b.ForEach(func(k, v []byte) error {
		var c Conversation
		if json.Unmarshal(v, &c) != nil {
			return nil
		}
		rows = append(rows, row{append([]byte(nil), k...), c.Updated})
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].updated.After(rows[j].updated) })
	for i, r := range rows {
		if i >= ConversationKeep || now.Sub(r.updated) > ConversationMaxAge {
			if err := b.Delete(r.key); err != nil {
				return err
			}
		}
	}
	return nil
}

// ConversationGet returns the conversation id, messages included; a
// missing one is ErrNotFound.
func (s *Store) ConversationGet(id string) (Conversation, error) {
	var c Conversation
	seq, ok := parseConversationID(id)
	if !ok {
		return c, &ConversationIDError{ID: id}
	}
	err := s.view(func(tx *bolt.Tx) error {
		data := get(tx, bucketConversations, conversationKey(seq))
		if data == nil {
			return fmt.Errorf("%w: conversation %s (never kept, deleted, or dropped by retention)", ErrNotFound, id)
		}
		return json.Unmarshal(data, &c)
	})
	return c, err
}

// ConversationList returns up to n conversations (n <= 0: all), the most
// recently updated first, without their messages. A non-empty dir keeps
// only those held in that folder.
func (s *Store) ConversationList(n int, dir string) ([]Conversation, error) {
	var out []Conversation
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketConversations)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var c Conversation
			if json.Unmarshal(v, &c) != nil {
				return nil
			}
			if dir != "" && c.Dir != dir {
				return nil
			}
			c.Messages = nil
			out = append(out, c)
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out, err
}

// ConversationUse marks the conversation id as used now in the folder
// dir (redacted, as ConversationPut keeps it): continuing it without a new
// turn yet (a resume) makes it the last used, which ConversationList puts
// first. A missing one is ErrNotFound.
func (s *Store) ConversationUse(id, dir string) error {
	seq, ok := parseConversationID(id)
	if !ok {
		return fmt.Errorf("%w: %q is not a conversation id", ErrNotFound, id)
	}
	red, err := s.Redactor()
	if err != nil {
		return fmt.Errorf("vault: the conversation is not marked as used: %w", err)
	}
	return s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketConversations)
		var data []byte
		if b != nil {
			data = b.Get(conversationKey(seq))
		}
		if data == nil {
			return fmt.Errorf("%w: conversation %s (never kept, deleted, or dropped by retention)", ErrNotFound, id)
		}
		var row map[string]json.RawMessage
		if err := json.Unmarshal(data, &row); err != nil {
			return fmt.Errorf("vault: conversation %s is damaged: %w", id, err)
		}
		now, _ := json.Marshal(time.Now().UTC())
		row["updated"] = now
		if dir != "" {
			row["dir"], _ = json.Marshal(red.Redact(dir))
		}
		out, err := json.Marshal(row)
		if err != nil {
			return err
		}
		return b.Put(conversationKey(seq), out)
	})
}

// ConversationDelete removes the conversation id; a missing one is
// ErrNotFound.
func (s *Store) ConversationDelete(id string) error {
	seq, ok := parseConversationID(id)
	if !ok {
		return fmt.Errorf("%w: %q is not a conversation id", ErrNotFound, id)
	}
	return s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketConversations)
		if b == nil || b.Get(conversationKey(seq)) == nil {
			return fmt.Errorf("%w: conversation %s: nothing to delete", ErrNotFound, id)
		}
		return b.Delete(conversationKey(seq))
	})
}

func conversationKey(seq uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, seq)
	return k
}

func parseConversationID(id string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, "c")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseUint(rest, 10, 64)
	return seq, err == nil && seq > 0
}

// ConversationTooBigError refuses a conversation of more than
// ConversationMaxSize bytes; the front end says how to make it smaller.
type ConversationTooBigError struct {
	Size int64 // its messages' size in bytes
}

func (e *ConversationTooBigError) Error() string {
	return fmt.Sprintf("vault: the conversation is %s, more than the %s kept for one", byteSize(e.Size), byteSize(ConversationMaxSize))
}

// ConversationIDError is a conversation id of the wrong form: it finds
// nothing (ErrNotFound); the front end says where ids are listed.
type ConversationIDError struct{ ID string }

func (e *ConversationIDError) Error() string {
	return fmt.Sprintf("%v: %q is not a conversation id (c and a number)", ErrNotFound, e.ID)
}

func (e *ConversationIDError) Unwrap() error { return ErrNotFound }
