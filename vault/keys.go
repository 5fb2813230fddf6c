package vault

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// compositeKey encodes the pair (a, b) unambiguously: the uvarint length of
// a, then a, then b. Every key of one a starts with prefixKey(a), and no
// other a's keys do, whatever bytes the names contain.
func compositeKey(a, b string) []byte {
	k := prefixKey(a)
	return append(k, b...)
}

// prefixKey is the common prefix of every compositeKey(a, _).
func prefixKey(a string) []byte {
	k := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(a)), uint64(len(a)))
	return append(k, a...)
}

// splitKey decodes a compositeKey.
func splitKey(k []byte) (a, b string, err error) {
	n, w := binary.Uvarint(k)
	if w <= 0 || uint64(len(k)-w) < n {
		return "", "", errors.New("vault: malformed composite key")
	}
	return string(k[w : w+int(n)]), string(k[w+int(n):]), nil
}

// seqKey is the big-endian key of sequence number n, so keys sort in order.
func seqKey(n uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, n)
}

// validName checks a server, profile or tool name used as a key.
func validName(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("vault: empty %s name: give the %s a name", kind, kind)
	case len(name) > 256:
		return fmt.Errorf("vault: %s name is %d bytes long: use at most 256", kind, len(name))
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] == 0x7f {
			return fmt.Errorf("vault: %s name %q contains a control character: use printable characters", kind, name)
		}
	}
	return nil
}
