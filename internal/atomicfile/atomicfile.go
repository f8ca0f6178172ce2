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
