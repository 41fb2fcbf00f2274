package changefeed

import "time"

// Trusts reports whether every change made since loadedAt has reached this process, so
// that an entry loaded then is still current unless an event dropped it.
func (f *Feed) Trusts(loadedAt time.Time) bool {
	since := f.trustedSince.Load()
	return since != 0 && loadedAt.UnixNano() >= since && !f.unsent.Load() &&
		time.Now().UnixNano()-f.lastSeen.Load() < int64(confirmWindow)
}

// Fresh reports whether an entry loaded at loadedAt (by the wall clock) may still be
// served: the feed vouches for it, or it is younger than MaxUntrustedAge.
func (f *Feed) Fresh(loadedAt time.Time) bool {
	return time.Since(loadedAt) < MaxUntrustedAge || f.Trusts(loadedAt)
}

// distrustBefore makes entries loaded before now untrusted (served at most
// MaxUntrustedAge old), while the subscription goes on vouching for those loaded after.
func (f *Feed) distrustBefore(now int64) {
	for {
		since := f.trustedSince.Load()
		if since == 0 || since >= now || f.trustedSince.CompareAndSwap(since, now) {
			return
		}
	}
}

// alive records a sign of life of the subscription at now, and counts a lapse when the
// previous one was a confirm window or more before: Trusts was false in between.
func (f *Feed) alive(now int64) {
	if prev := f.lastSeen.Swap(now); f.trustedSince.Load() != 0 && now-prev >= int64(confirmWindow) {
		f.lapses.Inc()
	}
}

func (f *Feed) untrust() {
	if f.trustedSince.Swap(0) != 0 {
		f.subscribed.Set(0)
		f.log.Warn("change feed subscription lost; cached reads are re-checked every second until it is back")
	}
}
