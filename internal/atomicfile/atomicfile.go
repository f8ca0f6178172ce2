package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Temp writes data with mode to a new temporary file in dir, named after
// name (".name.tmp-*"), syncs and closes it, and returns its path. The
// caller moves it into place and removes it if that fails; when Temp
// returns an error, it has removed the file.
func Temp(dir, name string, data []byte, mode fs.FileMode) (path string, err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-")
	if err != nil {
		return "", err
	}
	path = f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return path, f.Close()
}

// Write replaces dir/name with data, with mode, through Temp and a
// rename: a reader sees the old file or the new one.
func Write(dir, name string, data []byte, mode fs.FileMode) error {
	tmp, err := Temp(dir, name, data, mode)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// File is one file of a WriteAll.
type File struct {
	Name string
	Data []byte
	Mode fs.FileMode
}

// WriteAll replaces each of files in dir, in order, as Write does, but
// writes and syncs them all before it renames the first. A reader of two
// of them (a key and its certificate) can then only see a mix of old and
// new between two back-to-back renames, never across a disk sync, which
// on a busy disk takes long enough for a reader to hit it. On an error
// it removes the temporary files it has not moved; files moved stay.
func WriteAll(dir string, files []File) error {
	tmps := make([]string, 0, len(files))
	defer func() {
		for _, tmp := range tmps {
			os.Remove(tmp)
		}
	}()
	for _, f := range files {
		tmp, err := Temp(dir, f.Name, f.Data, f.Mode)
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp)
	}
	for len(tmps) > 0 {
		if err := os.Rename(tmps[0], filepath.Join(dir, files[0].Name)); err != nil {
			return err
		}
		tmps, files = tmps[1:], files[1:]
	}
	return nil
}
