package xds

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
)

// resourceVersion returns the version of a resource serialized as b: 48
// bits of its SHA-256, as 8 characters of unpadded URL-safe base64. A
// Delta response carries one per resource — thousands in a wildcard
// client's first responses — so it is as short as it can be and still
// tell a resource's versions apart: two versions of one name collide
// with a chance of 2^-48, and only a client naming one on reconnecting
// (initial_resource_versions, a SotW version_info) compares them.
func resourceVersion(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:6])
}

// digest identifies a set of (name, version) pairs — the resources of one
// type a client holds — by content alone: it is the sum, in each of two
// 64-bit lanes modulo 2^64, of a hash of every pair. Sums do not depend
// on order, so two streams holding the same resources at the same versions
// have the same digest on any server, whatever the history that led
// there; and adding or removing a pair costs one addition or subtraction,
// so a stream keeps the digest of what it holds as it sends, never
// rescanning its names.
//
// SotW responses carry it as version_info and Delta responses as
// system_version_info. A client reconnecting, maybe to another replica,
// names its last accepted version_info; the server compares it with the
// digest of what it would send and, if equal, sends nothing.
type digest struct{ a, b uint64 }

// digestLen is the length of a digest's string form: 32 hex digits.
const digestLen = 32

// pairDigest returns the hash of one resource name at one version: the
// first 128 bits of SHA-256 over the name's length, the name and the
// version, so that no two distinct pairs hash the same input.
func pairDigest(name, version string) digest {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(name)))])
	h.Write([]byte(name))
	h.Write([]byte(version))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return digest{a: binary.BigEndian.Uint64(sum[0:8]), b: binary.BigEndian.Uint64(sum[8:16])}
}

func (d *digest) add(p digest) { d.a += p.a; d.b += p.b }

func (d *digest) sub(p digest) { d.a -= p.a; d.b -= p.b }

// String returns the digest as 32 lowercase hex digits. It is built on
// the stack: every response's version costs one allocation.
func (d digest) String() string {
	var b [16]byte
	var out [digestLen]byte
	binary.BigEndian.PutUint64(b[0:8], d.a)
	binary.BigEndian.PutUint64(b[8:16], d.b)
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// parseDigest reads the String form of a digest; ok is false for any other
// string, such as a version from a server of another kind.
func parseDigest(s string) (d digest, ok bool) {
	if len(s) != digestLen {
		return digest{}, false
	}
	var b [16]byte
	if _, err := hex.Decode(b[:], []byte(s)); err != nil {
		return digest{}, false
	}
	return digest{a: binary.BigEndian.Uint64(b[0:8]), b: binary.BigEndian.Uint64(b[8:16])}, true
}
