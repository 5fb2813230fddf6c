package vault

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// serverRow is an mcp_servers value: the Server with its headers either in
// the clear (Headers) or sealed (HeadersSealed, the JSON object encrypted).
type serverRow struct {
	Server
	HeadersSealed []byte `json:"headers_sealed,omitempty"`
}

func headersAAD(server string) []byte { return []byte("headers\x00" + server) }

// headers returns the row's headers, opening them with k when sealed.
func (r *serverRow) headers(k *sealKey) (map[string]string, error) {
	if r.HeadersSealed == nil {
		return r.Headers, nil
	}
	if k == nil {
		return nil, fmt.Errorf("vault: server %q has sealed headers but the vault has no seal record: the vault file was altered", r.Name)
	}
	plain, err := k.open(r.HeadersSealed, headersAAD(r.Name))
	if err != nil {
		return nil, fmt.Errorf("vault: server %q headers do not decrypt (%v): the vault file was altered", r.Name, err)
	}
	var h map[string]string
	if err := json.Unmarshal(plain, &h); err != nil {
		return nil, fmt.Errorf("vault: server %q headers are invalid JSON (%v): add the server again", r.Name, err)
	}
	return h, nil
}

// setHeaders stores h in the row, sealed with k when k is not nil.
func (r *serverRow) setHeaders(h map[string]string, k *sealKey) error {
	r.Headers, r.HeadersSealed = nil, nil
	if len(h) == 0 {
		return nil
	}
	if k == nil {
		r.Headers = h
		return nil
	}
	plain, err := json.Marshal(h)
	if err != nil {
		return err
	}
	r.HeadersSealed = k.seal(plain, headersAAD(r.Name))
	return nil
}

// decodeServer decodes an mcp_servers value, opening sealed headers (which
// needs the key: errNeedKey until it is derived).
func (s *Store) decodeServer(tx *bolt.Tx, name string, data []byte) (Server, error) {
	var row serverRow
	if err := json.Unmarshal(data, &row); err != nil {
		return Server{}, fmt.Errorf("vault: server %q is stored as invalid JSON (%v): add it again", name, err)
	}
	row.Name = name
	var k *sealKey
	if row.HeadersSealed != nil {
		var err error
		if k, err = s.opener(tx); err != nil {
			return Server{}, err
		}
	}
	h, err := row.headers(k)
	if err != nil {
		return Server{}, err
	}
	row.Server.Headers = h
	return row.Server, nil
}

// ServerPut stores srv under srv.Name, replacing any row of that name. It
// keeps the stored Created (setting it on the first put) and sets Updated.
// Headers are sealed at rest when the seal is on.
func (s *Store) ServerPut(srv Server) error {
	if err := validName("server", srv.Name); err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := bumpServers(tx); err != nil {
			return err
		}
		b, err := bucket(tx, bucketServers)
		if err != nil {
			return err
		}
		k, err := s.sealer(tx)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		row := serverRow{Server: srv}
		row.Created, row.Updated = now, now
		if old := b.Get([]byte(srv.Name)); old != nil {
			var prev serverRow
			if json.Unmarshal(old, &prev) == nil && !prev.Created.IsZero() {
				row.Created = prev.Created
			}
		}
		if err := row.setHeaders(srv.Headers, k); err != nil {
			return fmt.Errorf("vault: server %q headers: %w", srv.Name, err)
		}
		data, err := json.Marshal(row)
		if err != nil {
			return fmt.Errorf("vault: server %q: %w", srv.Name, err)
		}
		return b.Put([]byte(srv.Name), data)
	})
}

// ServerGet returns the server name; a missing one is ErrNotFound.
func (s *Store) ServerGet(name string) (Server, error) {
	var srv Server
	err := s.view(func(tx *bolt.Tx) error {
		data := get(tx, bucketServers, []byte(name))
		if data == nil {
			return fmt.Errorf("%w: server %q: add it first (mcp_add)", ErrNotFound, name)
		}
		var err error
		srv, err = s.decodeServer(tx, name, data)
		return err
	})
	return srv, err
}

// ServerList returns every server, sorted by name.
func (s *Store) ServerList() ([]Server, error) {
	var out []Server
	err := s.view(func(tx *bolt.Tx) error {
		out = out[:0]
		b := tx.Bucket(bucketServers)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			srv, err := s.decodeServer(tx, string(k), v)
			if err != nil {
				return err
			}
			out = append(out, srv)
			return nil
		})
	})
	return out, err
}

// ServerDelete removes the server name with its profile rows, tool pins and
// cached tools, in one transaction. A missing server is ErrNotFound (any
// rows left under its name are removed all the same). On a sealed vault it
// needs the passphrase. The deletion is audited.
func (s *Store) ServerDelete(name string) error {
	missing := false
	err := s.update(func(tx *bolt.Tx) error {
		if err := bumpServers(tx); err != nil {
			return err
		}
		if err := s.needKey(tx); err != nil {
			return err
		}
		for _, bn := range [][]byte{bucketServerProfiles, bucketPins, bucketTools} {
			if err := deletePrefix(tx, bn, prefixKey(name)); err != nil {
				return err
			}
		}
		b := tx.Bucket(bucketServers)
		if b == nil || b.Get([]byte(name)) == nil {
			missing = true
			return nil
		}
		return b.Delete([]byte(name))
	})
	if err == nil && missing {
		err = fmt.Errorf("%w: server %q: nothing to remove", ErrNotFound, name)
	}
	if err != nil {
		return err
	}
	return s.auditDelete("server", name)
}

func deletePrefix(tx *bolt.Tx, bucketName, prefix []byte) error {
	b := tx.Bucket(bucketName)
	if b == nil {
		return nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// requireServer fails with ErrNotFound unless server is stored.
func requireServer(tx *bolt.Tx, server string) error {
	if b := tx.Bucket(bucketServers); b != nil && b.Get([]byte(server)) != nil {
		return nil
	}
	return fmt.Errorf("%w: server %q is not stored: add the server before its profiles, pins or tools", ErrNotFound, server)
}

// ServerProfileSet enables or disables server for profile. The server must
// be stored.
func (s *Store) ServerProfileSet(server, profile string, enabled bool) error {
	if err := validName("profile", profile); err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := bumpServers(tx); err != nil {
			return err
		}
		if err := requireServer(tx, server); err != nil {
			return err
		}
		b, err := bucket(tx, bucketServerProfiles)
		if err != nil {
			return err
		}
		v := []byte("false")
		if enabled {
			v = []byte("true")
		}
		return b.Put(compositeKey(server, profile), v)
	})
}

// ServerProfiles returns server's profile rows: profile name -> enabled.
// A server without rows gives an empty map.
func (s *Store) ServerProfiles(server string) (map[string]bool, error) {
	var out map[string]bool
	err := s.view(func(tx *bolt.Tx) (err error) {
		out, err = serverProfilesTx(tx, server)
		return err
	})
	if out == nil {
		out = map[string]bool{}
	}
	return out, err
}

// serverProfilesTx reads server's profile rows in tx.
func serverProfilesTx(tx *bolt.Tx, server string) (map[string]bool, error) {
	out := map[string]bool{}
	err := forPrefix(tx, bucketServerProfiles, server, func(profile string, v []byte) error {
		var on bool
		if err := json.Unmarshal(v, &on); err != nil {
			return fmt.Errorf("vault: profile row %s/%s is invalid (%v): set it again", server, profile, err)
		}
		out[profile] = on
		return nil
	})
	return out, err
}

// forPrefix calls fn for every row of server in bucket name, in key order
// (sorted by the second name).
func forPrefix(tx *bolt.Tx, name []byte, server string, fn func(second string, v []byte) error) error {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	prefix := prefixKey(server)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		_, second, err := splitKey(k)
		if err != nil {
			return err
		}
		if err := fn(second, v); err != nil {
			return err
		}
	}
	return nil
}

// PinPut stores the pin p (server, tool, hash), setting Updated when zero.
// The server must be stored.
func (s *Store) PinPut(p ToolPin) error {
	if err := validName("tool", p.Tool); err != nil {
		return err
	}
	if p.Updated.IsZero() {
		p.Updated = time.Now().UTC()
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := bumpServers(tx); err != nil {
			return err
		}
		if err := requireServer(tx, p.Server); err != nil {
			return err
		}
		b, err := bucket(tx, bucketPins)
		if err != nil {
			return err
		}
		data, err := json.Marshal(p)
		if err != nil {
			return err
		}
		return b.Put(compositeKey(p.Server, rowKey(p.Kind, p.Tool)), data)
	})
}

// Pins returns server's tool pins sorted by tool name (its other pins
// are ServerState.OfferPins).
func (s *Store) Pins(server string) ([]ToolPin, error) {
	var out []ToolPin
	err := s.view(func(tx *bolt.Tx) (err error) {
		out, _, err = pinsTx(tx, server)
		return err
	})
	return out, err
}

// pinsTx reads server's pins in tx: its tools', sorted by tool name, and
// the others (prompts, instructions), sorted by kind and name.
func pinsTx(tx *bolt.Tx, server string) (tools, others []ToolPin, err error) {
	err = forPrefix(tx, bucketPins, server, func(key string, v []byte) error {
		kind, tool := splitRowKey(key)
		var p ToolPin
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("vault: pin %s/%s is invalid JSON (%v): re-pin the server's tools", server, tool, err)
		}
		p.Server, p.Kind, p.Tool = server, kind, tool
		if kind == "" {
			tools = append(tools, p)
		} else {
			others = append(others, p)
		}
		return nil
	})
	return tools, others, err
}

// ToolsReplace replaces server's cached tool list with tools in one
// transaction, setting each tool's Server and (when zero) Updated. The
// server must be stored. Cached rows of other kinds stay.
func (s *Store) ToolsReplace(server string, tools []ServerTool) error {
	return s.ListingReplace(server, "", tools)
}

// ListingReplace replaces server's cached rows of kind ("" for tools,
// KindPrompt, KindInstructions) with rows, each of which takes that kind,
// in one transaction. The server must be stored.
func (s *Store) ListingReplace(server, kind string, rows []ServerTool) error {
	for i := range rows {
		rows[i].Kind = kind
	}
	encoded, err := encodeTools(server, rows)
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := bumpServers(tx); err != nil {
			return err
		}
		if err := requireServer(tx, server); err != nil {
			return err
		}
		if err := deleteKind(tx, bucketTools, server, kind); err != nil {
			return err
		}
		return putRows(tx, bucketTools, server, encoded)
	})
}

// rowKey is the second half of the key of a pin or cached row: a tool's
// name as it is, another kind's name after a NUL-framed kind, which no
// tool name (validName refuses control characters) can begin with.
func rowKey(kind, name string) string {
	if kind == "" {
		return name
	}
	return "\x00" + kind + "\x00" + name
}

// splitRowKey decodes rowKey.
func splitRowKey(key string) (kind, name string) {
	rest, ok := strings.CutPrefix(key, "\x00")
	if !ok {
		return "", key
	}
	kind, name, _ = strings.Cut(rest, "\x00")
	return kind, name
}

// deleteKind deletes server's rows of kind in the bucket called name.
func deleteKind(tx *bolt.Tx, name []byte, server, kind string) error {
	if kind != "" {
		return deletePrefix(tx, name, compositeKey(server, rowKey(kind, "")))
	}
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	var keys [][]byte
	prefix := prefixKey(server)
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) > len(prefix) && k[len(prefix)] == 0 {
			continue
		}
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Tools returns server's cached tools sorted by tool name (its other
// cached rows are ServerState.Offers).
func (s *Store) Tools(server string) ([]ServerTool, error) {
	var out []ServerTool
	err := s.view(func(tx *bolt.Tx) (err error) {
		out, _, err = toolsTx(tx, server)
		return err
	})
	return out, err
}

// toolsTx reads server's cached rows in tx: its tools, sorted by tool
// name, and the others (prompts, instructions), sorted by kind and name.
func toolsTx(tx *bolt.Tx, server string) (tools, others []ServerTool, err error) {
	err = forPrefix(tx, bucketTools, server, func(key string, v []byte) error {
		kind, tool := splitRowKey(key)
		var t ServerTool
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("vault: cached tool %s/%s is invalid JSON (%v): list the server's tools again", server, tool, err)
		}
		t.Server, t.Kind, t.Tool = server, kind, tool
		if kind == "" {
			tools = append(tools, t)
		} else {
			others = append(others, t)
		}
		return nil
	})
	return tools, others, err
}

// ServerRegister stores a new server with its registering profile's row,
// its pins and its tool cache in one transaction, so a registration is
// kept whole or not at all. A name already stored is ErrExists; with
// r.MaxServers servers stored already it is ErrTooMany. Two processes
// registering at once are serialized by the file lock: both land, and the
// cap holds across them.
func (s *Store) ServerRegister(r Registration) error {
	srv := r.Server
	if err := validName("server", srv.Name); err != nil {
		return err
	}
	if err := validName("profile", r.Profile); err != nil {
		return err
	}
	pins, err := encodePins(srv.Name, r.Pins)
	if err != nil {
		return err
	}
	tools, err := encodeTools(srv.Name, r.Tools)
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := bumpServers(tx); err != nil {
			return err
		}
		b, err := bucket(tx, bucketServers)
		if err != nil {
			return err
		}
		if b.Get([]byte(srv.Name)) != nil {
			return fmt.Errorf("%w: server %q is registered already: remove it first to register it again", ErrExists, srv.Name)
		}
		if r.MaxServers > 0 {
			if n := countKeys(b); n >= r.MaxServers {
				return fmt.Errorf("%w: %d servers are registered, the most tai keeps (MCP_MAX_SERVERS): remove one first", ErrTooMany, n)
			}
		}
		k, err := s.sealer(tx)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		row := serverRow{Server: srv}
		row.Created, row.Updated = now, now
		if err := row.setHeaders(srv.Headers, k); err != nil {
			return fmt.Errorf("vault: server %q headers: %w", srv.Name, err)
		}
		data, err := json.Marshal(row)
		if err != nil {
			return fmt.Errorf("vault: server %q: %w", srv.Name, err)
		}
		if err := b.Put([]byte(srv.Name), data); err != nil {
			return err
		}
		// Rows left under the name by an interrupted removal go first.
		for _, bn := range [][]byte{bucketServerProfiles, bucketPins, bucketTools} {
			if err := deletePrefix(tx, bn, prefixKey(srv.Name)); err != nil {
				return err
			}
		}
		pb, err := bucket(tx, bucketServerProfiles)
		if err != nil {
			return err
		}
		if err := pb.Put(compositeKey(srv.Name, r.Profile), []byte(fmt.Sprint(r.Enabled))); err != nil {
			return err
		}
		if err := putRows(tx, bucketPins, srv.Name, pins); err != nil {
			return err
		}
		return putRows(tx, bucketTools, srv.Name, tools)
	})
}

// countKeys counts b's keys.
func countKeys(b *bolt.Bucket) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

func encodePins(server string, pins []ToolPin) (map[string][]byte, error) {
	now := time.Now().UTC()
	rows := make(map[string][]byte, len(pins))
	for _, p := range pins {
		if err := validName("tool", p.Tool); err != nil {
			return nil, err
		}
		p.Server = server
		if p.Updated.IsZero() {
			p.Updated = now
		}
		data, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("vault: pin %s/%s: %w", server, p.Tool, err)
		}
		rows[rowKey(p.Kind, p.Tool)] = data
	}
	return rows, nil
}

func encodeTools(server string, tools []ServerTool) (map[string][]byte, error) {
	now := time.Now().UTC()
	rows := make(map[string][]byte, len(tools))
	for _, t := range tools {
		if err := validName("tool", t.Tool); err != nil {
			return nil, err
		}
		if _, dup := rows[rowKey(t.Kind, t.Tool)]; dup {
			return nil, fmt.Errorf("vault: server %q lists tool %q twice: give each tool once", server, t.Tool)
		}
		t.Server = server
		if t.Updated.IsZero() {
			t.Updated = now
		}
		data, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("vault: tool %s/%s: %w", server, t.Tool, err)
		}
		rows[rowKey(t.Kind, t.Tool)] = data
	}
	return rows, nil
}

func putRows(tx *bolt.Tx, name []byte, server string, rows map[string][]byte) error {
	b, err := bucket(tx, name)
	if err != nil {
		return err
	}
	for second, data := range rows {
		if err := b.Put(compositeKey(server, second), data); err != nil {
			return err
		}
	}
	return nil
}

// ServerConsent records digest as the spawn a person consented to for
// server (see Server.Consented).
func (s *Store) ServerConsent(server, digest string) error {
	return s.update(func(tx *bolt.Tx) error {
		if err := bumpServers(tx); err != nil {
			return err
		}
		b := tx.Bucket(bucketServers)
		var data []byte
		if b != nil {
			data = b.Get([]byte(server))
		}
		if data == nil {
			return fmt.Errorf("%w: server %q: add it first (mcp_add)", ErrNotFound, server)
		}
		var row serverRow
		if err := json.Unmarshal(data, &row); err != nil {
			return fmt.Errorf("vault: server %q is stored as invalid JSON (%v): add it again", server, err)
		}
		row.Consented = digest
		row.Updated = time.Now().UTC()
		out, err := json.Marshal(row)
		if err != nil {
			return err
		}
		return b.Put([]byte(server), out)
	})
}

// ServerStates returns every server with its profile rows, pins and cached
// tools, read in one transaction (so they agree), sorted by name.
func (s *Store) ServerStates() ([]ServerState, error) {
	var out []ServerState
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		out, err = s.serverStates(tx)
		return err
	})
	return out, err
}

func (s *Store) serverStates(tx *bolt.Tx) ([]ServerState, error) {
	var out []ServerState
	b := tx.Bucket(bucketServers)
	if b == nil {
		return nil, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		srv, err := s.decodeServer(tx, string(k), v)
		if err != nil {
			return err
		}
		st := ServerState{Server: srv}
		if st.Profiles, err = serverProfilesTx(tx, srv.Name); err != nil {
			return err
		}
		if st.Pins, st.OfferPins, err = pinsTx(tx, srv.Name); err != nil {
			return err
		}
		if st.Tools, st.Offers, err = toolsTx(tx, srv.Name); err != nil {
			return err
		}
		out = append(out, st)
		return nil
	})
	return out, err
}

var serversGenKey = []byte("servers_gen")

// bumpServers increments the servers generation in tx: every change to a
// server, its profile rows, pins or tool cache does, so a reader can tell
// cheaply whether anything changed (ServerStatesSince).
func bumpServers(tx *bolt.Tx) error {
	b, err := bucket(tx, bucketMeta)
	if err != nil {
		return err
	}
	return b.Put(serversGenKey, seqKey(readServersGen(tx)+1))
}

func readServersGen(tx *bolt.Tx) uint64 {
	v := get(tx, bucketMeta, serversGenKey)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// ServerStatesSince is ServerStates for a reader that already holds the
// states of generation gen: when nothing changed since, it returns gen and
// changed false without decoding any row. The generation counts every
// change to the servers' rows, by any process.
func (s *Store) ServerStatesSince(gen uint64) (states []ServerState, cur uint64, changed bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		cur = readServersGen(tx)
		if cur == gen && gen != 0 {
			changed = false
			return nil
		}
		changed = true
		states, err = s.serverStates(tx)
		return err
	})
	return states, cur, changed, err
}
