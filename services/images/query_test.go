package images_test

import (
	"testing"

	"github.com/sharenote/sharenote/libs/testkit"
)

func TestImageReadsIgnoreTheirQueryString(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		acc := f.NewAccount(t, "owner")
		_, paths := f.publish(t, acc, nil, pngs(t, 1)...)
		for _, query := range []string{"?%%%garbage", "?utm_source=x&fbclid=y", "?limit=-1&cursor=%zz", "?a=1;b=2"} {
			f.get(t, paths[0]+query, nil).Expect(t, 200, "")
		}
	})
}
