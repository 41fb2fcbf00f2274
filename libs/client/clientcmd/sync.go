package clientcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/wire"
)

// create publishes a note that has no publication yet: with its path (unless --new makes
// a copy) and title, and every image it shows.
func (r *run) create(ctx context.Context, p *prepared) (*publishedFile, []wire.Warning, any, error) {
	if err := r.checkLimits(ctx, p, p.images, 0); err != nil {
		return nil, nil, nil, err
	}
	images, closeAll := r.open(p.images)
	defer closeAll()
	req := wire.PublishRequest{Content: p.content, Title: &p.title}
	if !r.opts.fresh {
		req.Path = &p.path
	}
	res, err := r.cl.Publish(ctx, req, images)
	if err != nil {
		return nil, nil, nil, err
	}
	state := after(nil, p, res.Cuid, res.URL, res.ETag)
	state.NoPath = r.opts.fresh
	return state, res.Warnings, res, nil
}

// update changes a publication in place, with If-Match: nothing is sent when nothing
// changed (prev itself is returned), a JSON PATCH when only text changed, a multipart
// PATCH when images changed.
func (r *run) update(ctx context.Context, p *prepared, prev *publishedFile) (*publishedFile, []wire.Warning, any, error) {
	c := diff(prev, p)
	if c.none() {
		// Printed as the publish answer it would have been, with nothing to warn of.
		return prev, nil, &wire.PublishResponse{Ref: wire.Ref{Cuid: prev.Cuid, URL: prev.URL}, ETag: prev.ETag, Warnings: []wire.Warning{}}, nil
	}
	if err := r.checkLimits(ctx, p, c.images, c.replaced); err != nil {
		return nil, nil, nil, err
	}
	var u wire.NoteUpdate
	if c.content {
		u.Content = &p.content
	}
	if c.title {
		u.Title = wire.Set(p.title)
	}
	if c.path {
		u.Path = wire.Set(p.path)
	}
	var res *wire.OwnerNote
	var err error
	if len(c.images) > 0 {
		images, closeAll := r.open(c.images)
		defer closeAll()
		res, err = r.cl.UpdateWithImages(ctx, prev.Cuid, u, images, prev.ETag)
	} else {
		res, err = r.cl.Update(ctx, prev.Cuid, u, prev.ETag)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return after(prev, p, res.Cuid, res.URL, res.ETag), res.Warnings, res, nil
}

// checkLimits refuses, before anything is sent, images over the free image storage or
// over what one request may carry. replaced is the size of the images they replace.
func (r *run) checkLimits(ctx context.Context, p *prepared, send []*localImage, replaced int64) error {
	if len(send) == 0 {
		return nil
	}
	var images int64
	for _, img := range send {
		images += img.size
	}
	if total := images + int64(len(p.content)); total > routes.MultipartLimit {
		return fmt.Errorf("the note and its new images are %s; one request carries at most %s: nothing was sent",
			humanBytes(total), humanBytes(routes.MultipartLimit))
	}
	profile, err := r.cl.Settings(ctx)
	if err != nil {
		return err
	}
	s := profile.Storage
	if free := s.ImageLimitBytes - s.ImageBytesUsed; images-replaced > free {
		return fmt.Errorf("the images need %s of image storage, and %s of your %s is free: nothing was sent",
			humanBytes(images-replaced), humanBytes(max(free, 0)), humanBytes(s.ImageLimitBytes))
	}
	return nil
}

// open opens the images to send, counted by a progress bar on a terminal when they are
// large; closeAll closes them and ends the bar.
func (r *run) open(send []*localImage) (images []client.Image, closeAll func()) {
	var bodies []io.ReadCloser
	var total int64
	closeBodies := func() {
		for _, b := range bodies {
			b.Close()
		}
	}
	for _, img := range send {
		bodies = append(bodies, img.body())
		total += img.size
	}
	var bar *progress
	if total >= largeUpload && isTerminal(r.env.Stderr) {
		bar = &progress{w: r.env.Stderr, total: total}
	}
	for i, img := range send {
		images = append(images, client.Image{Name: img.name, ContentType: img.contentType, Body: bar.reader(bodies[i])})
	}
	return images, func() { closeBodies(); bar.done() }
}

// noteError says what a failure means for the note, and what to do.
func noteError(err error, prev *publishedFile) error {
	var apiErr *client.Error
	if !errors.As(err, &apiErr) {
		if prev == nil {
			return fmt.Errorf("%w\nthe note may or may not have been published: `sharenote list` shows it if it was", err)
		}
		return fmt.Errorf("%w\nthe update may or may not have been made: `sharenote versions %s` shows it if it was", err, prev.Cuid)
	}
	switch apiErr.Status {
	case http.StatusTooManyRequests:
		return fmt.Errorf("rate limited, retry in %d s (%w)", int(apiErr.RetryAfter.Seconds()), err)
	case http.StatusPreconditionFailed:
		return fmt.Errorf("%w\n%s was changed elsewhere since this machine last published it, and was left as it is: "+
			"see its versions with `sharenote versions %s`, or publish a new copy with --new", err, prev.URL, prev.Cuid)
	case http.StatusNotFound:
		if prev != nil {
			return fmt.Errorf("%w\n%s, where this file was published, no longer exists (unshared?): the next publish publishes it anew", err, prev.URL)
		}
	}
	return err
}
