package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{"first", "second"} {
		if err := Write(dir, "f.pem", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "f.pem"))
		if err != nil || string(got) != content {
			t.Fatalf("after writing %q: %q, %v", content, got, err)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "f.pem"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v (%v), want f.pem alone", entries, err)
	}
}

// TestTempThenLinkCreatesOnce: the create-only move a store uses fails
// when the name exists, leaving the first content.
func TestTempThenLinkCreatesOnce(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "state")
	for i, content := range []string{"first", "second"} {
		tmp, err := Temp(dir, "state", []byte(content), 0o600)
		if err != nil {
			t.Fatal(err)
		}
		err = os.Link(tmp, final)
		os.Remove(tmp)
		if (i == 0) != (err == nil) || (i == 1 && !errors.Is(err, fs.ErrExist)) {
			t.Fatalf("link %d: %v", i, err)
		}
	}
	if got, _ := os.ReadFile(final); string(got) != "first" {
		t.Fatalf("state = %q, want first", got)
	}
}

func TestWriteToMissingDirFails(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "missing"), "f", []byte("x"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Write into a missing directory: %v, want ErrNotExist", err)
	}
}

// TestWriteAllReplacesInOrder: every file holds its new content and no
// temporary file is left; a later file that cannot be written leaves the
// earlier ones unmoved.
func TestWriteAllReplacesInOrder(t *testing.T) {
	dir := t.TempDir()
	files := []File{{"root.pem", []byte("root"), 0o644}, {"key.pem", []byte("key"), 0o600}, {"cert.pem", []byte("cert"), 0o644}}
	if err := WriteAll(dir, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, f.Name))
		fi, _ := os.Stat(filepath.Join(dir, f.Name))
		if err != nil || string(got) != string(f.Data) || fi.Mode().Perm() != f.Mode {
			t.Fatalf("%s: %q (%v), mode %v; want %q, %v", f.Name, got, err, fi.Mode(), f.Data, f.Mode)
		}
	}
	bad := []File{{"root.pem", []byte("root2"), 0o644}, {"sub/key.pem", []byte("key2"), 0o600}}
	if err := WriteAll(dir, bad); err == nil {
		t.Fatal("WriteAll with a file it cannot create succeeded")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "root.pem")); string(got) != "root" {
		t.Fatalf("root.pem = %q after a failed WriteAll, want the old content", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(files) {
		t.Fatalf("directory holds %v, want the three files alone", entries)
	}
}
