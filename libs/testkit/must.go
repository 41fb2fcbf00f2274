package testkit

// Must returns v, panicking on err: for a test's setup, which cannot go on without v.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
