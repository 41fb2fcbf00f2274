package noteapi

// ParseRange is parseRange with the ranges as inclusive [first, last] pairs, as
// Content-Range writes them.
func ParseRange(header string, size int64) ([][2]int64, error) {
	rs, err := parseRange(header, size)
	if rs == nil {
		return nil, err
	}
	out := make([][2]int64, len(rs))
	for i, r := range rs {
		out[i] = [2]int64{r.start, r.end - 1}
	}
	return out, err
}

// Range errors, for tests.
var (
	ErrBadRange      = errBadRange
	ErrUnsatisfiable = errUnsatisfiable
)
