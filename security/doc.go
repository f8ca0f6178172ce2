// Package security is meshd's certificate authority: workload identities
// as SPIFFE IDs, the roots that sign them, the rotation of those roots,
// and the checks a certificate signing request must pass. It does no
// network I/O and imports no gRPC or Kubernetes client: the signing API
// lives in security/caserver, the Kubernetes Secret store and TokenReview
// in security/kube, the directory store in security/castore.
//
// # Identities
//
// A workload is a Kubernetes service account, Identity{Namespace,
// ServiceAccount}; its certificate names it by one URI SAN,
// spiffe://<trustDomain>/ns/<namespace>/sa/<serviceAccount>, and by
// nothing else.
//
// # Using the CA
//
//  1. a := NewAuthority(store, trustDomain, WithLogger(log)) — starts
//     nothing.
//  2. a.Init(ctx): loads the roots from the store, or generates a root
//     and creates it there; when two replicas race, the store keeps the
//     first and both sign with it.
//  3. a.Sign(csrPEM, id, ttl): checks the CSR (size, signature, key type,
//     that it names no other identity) and issues a leaf, with its chain
//     and the trust bundle.
//  4. a.Run(ctx): reloads the store now and then, so a rotation started
//     by one replica reaches the others, and starts a rotation when the
//     signing root nears its end.
//
// NewStaticAuthority serves an operator's own CA (a plug-in CA) instead:
// no store, no rotation.
//
// # Rotation
//
// Roots is a schedule: each root has a time from which it is trusted,
// one from which it signs and one at which it leaves the bundle. Roots.At
// evaluates it at an instant, so every replica holding the same schedule
// agrees on the bundle and the signer without talking to the others.
// Roots.Rotate adds a root that is trusted at once, signs only after the
// propagation time (every agent renews within half a leaf's life, and so
// learns the new bundle first), and retires the old root once the last
// leaf it signed has expired. No leaf is ever unverifiable by a peer that
// renewed within that time.
package security
