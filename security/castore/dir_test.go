package castore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/meshd/meshd/security"
)

var td = spiffeid.RequireTrustDomainFromString("cluster.local")

func TestRootSurvivesRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ca")
	ctx := context.Background()
	first := security.NewAuthority(NewDir(dir), td)
	if err := first.Init(ctx); err != nil {
		t.Fatal(err)
	}
	// A new process: a new store and authority on the same directory.
	second := security.NewAuthority(NewDir(dir), td)
	if err := second.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if !first.View().Signer.Cert.Equal(second.View().Signer.Cert) {
		t.Fatal("the root changed across a restart")
	}
	for name, want := range map[string]os.FileMode{security.StateFile: 0o600, security.BundleFile: 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", name, fi.Mode().Perm(), want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d files, want 2 (no temporary left)", len(entries))
	}
}

func TestRacingCreatorsShareOneRoot(t *testing.T) {
	dir := t.TempDir()
	as := make([]*security.Authority, 4)
	var wg sync.WaitGroup
	errs := make([]error, len(as))
	for i := range as {
		as[i] = security.NewAuthority(NewDir(dir), td)
		wg.Go(func() { errs[i] = as[i].Init(context.Background()) })
	}
	wg.Wait()
	for i, a := range as {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !a.View().Signer.Cert.Equal(as[0].View().Signer.Cert) {
			t.Fatalf("authority %d signs with another root", i)
		}
	}
}

func TestUpdateConflicts(t *testing.T) {
	ctx := context.Background()
	d := NewDir(t.TempDir())
	st, err := d.Create(ctx, map[string][]byte{security.StateFile: []byte("one"), security.BundleFile: nil})
	if err != nil {
		t.Fatal(err)
	}
	next, err := d.Update(ctx, st.Revision, map[string][]byte{security.StateFile: []byte("two")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Update(ctx, st.Revision, map[string][]byte{security.StateFile: []byte("three")}); !errors.Is(err, security.ErrConflict) {
		t.Fatalf("update at a stale revision: %v, want ErrConflict", err)
	}
	got, _ := d.Load(ctx)
	if string(got.Files[security.StateFile]) != "two" || got.Revision != next.Revision {
		t.Fatalf("stored %q", got.Files[security.StateFile])
	}
}

func TestLoadEmpty(t *testing.T) {
	if _, err := NewDir(t.TempDir()).Load(context.Background()); !errors.Is(err, security.ErrNoState) {
		t.Fatalf("Load of an empty directory: %v", err)
	}
}
