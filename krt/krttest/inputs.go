package krttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/meshd/meshd/krt"
)

// NewStatic returns a static collection of g holding items, made with
// opts as by krt.NewStatic.
func NewStatic[T any](g *krt.Graph, items []T, opts ...krt.Option) krt.Static[T] {
	s := krt.NewStatic[T](g, opts...)
	if len(items) > 0 {
		s.Set(items...)
	}
	return s
}

// FromJSON decodes doc into items of T and fails t if it cannot: doc is
// either one JSON array of objects, or objects one after another. Fields
// T does not have are an error, so a typo in a test input is found.
func FromJSON[T any](t testing.TB, doc string) []T {
	t.Helper()
	items, err := decodeJSON[T](doc)
	if err != nil {
		t.Fatalf("krttest.FromJSON[%T]: %v", *new(T), err)
	}
	return items
}

func decodeJSON[T any](doc string) ([]T, error) {
	trimmed := bytes.TrimSpace([]byte(doc))
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var items []T
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := dec.Decode(&items); err != nil {
			return nil, withOffset(err, dec)
		}
		return items, nil
	}
	for {
		var v T
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return items, nil
		}
		if err != nil {
			return nil, withOffset(err, dec)
		}
		items = append(items, v)
	}
}

// withOffset adds where in the document decoding stopped.
func withOffset(err error, dec *json.Decoder) error {
	return &decodeError{offset: dec.InputOffset(), err: err}
}

type decodeError struct {
	offset int64
	err    error
}

func (e *decodeError) Error() string {
	return "at byte " + strconv.FormatInt(e.offset, 10) + ": " + e.err.Error()
}
func (e *decodeError) Unwrap() error { return e.err }
