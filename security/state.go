package security

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"time"
)

// State files: the keys of a Store's files (a directory's file names, a
// Secret's data keys).
const (
	// StateFile holds the schedule with every root's key (JSON); keep it
	// private.
	StateFile = "ca.json"
	// BundleFile holds the trust bundle (PEM), for operators and tools
	// that want the roots without the keys.
	BundleFile = "root-cert.pem"
)

// stateVersion is the format of StateFile.
const stateVersion = 1

type stateJSON struct {
	Version int        `json:"version"`
	Roots   []rootJSON `json:"roots"`
}

type rootJSON struct {
	Cert      string    `json:"cert"`
	Key       string    `json:"key"`
	TrustFrom time.Time `json:"trustFrom"`
	SignFrom  time.Time `json:"signFrom"`
	RetireAt  time.Time `json:"retireAt,omitzero"`
}

// EncodeState returns the files a Store keeps for rs: StateFile and
// BundleFile (the bundle at now).
func EncodeState(rs Roots, now time.Time) (map[string][]byte, error) {
	st := stateJSON{Version: stateVersion}
	for _, r := range rs {
		key, err := EncodeKey(r.Key)
		if err != nil {
			return nil, err
		}
		st.Roots = append(st.Roots, rootJSON{
			Cert: string(EncodeCerts(append([]*x509.Certificate{r.Cert}, r.Chain...)...)), Key: string(key),
			TrustFrom: r.TrustFrom.UTC(), SignFrom: r.SignFrom.UTC(), RetireAt: r.RetireAt.UTC(),
		})
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding CA state: %w", err)
	}
	return map[string][]byte{StateFile: append(data, '\n'), BundleFile: EncodeCerts(rs.At(now).Bundle...)}, nil
}

// DecodeState parses the StateFile of a Store, checking every root.
func DecodeState(files map[string][]byte) (Roots, error) {
	data, ok := files[StateFile]
	if !ok {
		return nil, fmt.Errorf("CA state: no %s", StateFile)
	}
	var st stateJSON
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("CA state %s: %w", StateFile, err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("CA state %s: version %d, this meshd reads %d", StateFile, st.Version, stateVersion)
	}
	var rs Roots
	for i, r := range st.Roots {
		kp, err := NewKeyPair([]byte(r.Cert), []byte(r.Key), nil)
		if err != nil {
			return nil, fmt.Errorf("CA state %s: root %d: %w", StateFile, i+1, err)
		}
		rs = append(rs, Root{KeyPair: kp, TrustFrom: r.TrustFrom, SignFrom: r.SignFrom, RetireAt: r.RetireAt})
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("CA state %s: no root", StateFile)
	}
	return rs, nil
}
