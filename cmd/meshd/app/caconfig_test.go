package app

import (
	"strings"
	"testing"
)

func TestCAFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // "": valid
	}{
		{"folder mode", []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t"}, ""},
		{"plug-in CA", []string{"--ca", "--ca-cert", "c", "--ca-key", "k", "--ca-chain", "ch", "--ca-tokens", "t"}, ""},
		{"cluster mode", []string{"--ca", "--kubeconfig", "kc"}, ""},
		{"a CA flag without --ca", []string{"--ca-dir", "d"}, "--ca-dir needs --ca"},
		{"no root", []string{"--ca", "--ca-tokens", "t"}, "--ca needs a root"},
		{"no authentication", []string{"--ca", "--ca-dir", "d"}, "--ca needs a way to authenticate"},
		{"cert without key", []string{"--ca", "--ca-cert", "c", "--ca-tokens", "t"}, "--ca-cert and --ca-key"},
		{"chain without cert", []string{"--ca", "--ca-dir", "d", "--ca-chain", "c", "--ca-tokens", "t"}, "--ca-chain needs --ca-cert"},
		{"two roots", []string{"--ca", "--ca-dir", "d", "--ca-cert", "c", "--ca-key", "k", "--ca-tokens", "t"}, "give one"},
		{"a tiny TTL", []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t", "--ca-cert-ttl", "30s"}, "at least 2m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFlags(tc.args, nil)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("ParseFlags(%q): %v, want %q", tc.args, err, tc.want)
			}
		})
	}
}
