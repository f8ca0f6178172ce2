package krt

// KeyOf returns the key c files v under: its ResourceName, or what c's
// WithKey option computes. v need not be in c.
func KeyOf[T any](c Collection[T], v T) string { return c.core().acc.key(v) }
