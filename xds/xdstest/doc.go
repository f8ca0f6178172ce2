// Package xdstest holds what tests of an xDS server would each write
// otherwise: a certificate authority, made in memory for one test, that
// issues server certificates for 127.0.0.1 and client certificates with
// URI SANs (SPIFFE IDs), and writes them as PEM files for the options and
// flags that take files.
package xdstest
