package clientcmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/wire"
)

var publishCommand = cli.Command{
	Name: "publish",
	Summary: "publish a Markdown file and the images it references ([[x.png]], ![](sub/x.png), relative to the file, in its folder or below); " +
		"again, it updates the same URL in place, sending nothing when nothing changed. Prints published|updated|unchanged, a tab, the URL",
	Usage:   "FILE.md [--new] [--server URL] [--json]",
	Example: "sharenote publish notes/trip.md\nsharenote publish notes/trip.md --json | jq -r .url",
	Flags:   func(fs *flag.FlagSet) { publishFlags(fs, new(common)) },
	Run:     runPublish,
}

func publishFlags(fs *flag.FlagSet, c *common) *bool {
	c.define(fs)
	return fs.Bool("new", false, "publish a new copy (another URL), even if this file was published from here before")
}

// largeUpload is the size of images from which a terminal shows the upload's progress.
const largeUpload = 1 << 20

// publishedFile is the state of the file's last publish or update from this machine: what
// the server holds, so that the next publish can send only what changed.
type publishedFile struct {
	Cuid          string `json:"cuid"`
	URL           string `json:"url"`
	ETag          string `json:"etag"`
	ContentSHA256 string `json:"content_sha256"`
	// Images are the images the publication holds, by name.
	Images map[string]publishedImage `json:"images"`
}

type publishedImage struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// publishedFiles is the mapping kept beside the token: server → absolute path → state.
type publishedFiles struct {
	Servers map[string]map[string]*publishedFile `json:"servers"`
}

const publishedFilesName = "published.json"

func runPublish(ctx context.Context, env cli.Env, args []string) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	var c common
	fresh := publishFlags(fs, &c)
	pos, err := parse(fs, args)
	if err == nil && len(pos) != 1 {
		err = fmt.Errorf("%w: publish takes one FILE.md", cli.ErrUsage)
	}
	if err != nil {
		return err
	}
	path, err := filepath.Abs(pos[0])
	if err != nil {
		return err
	}
	doc, err := prepare(path)
	if err != nil {
		return err
	}
	return withSession(ctx, env, c.server, func(cl *client.Client) error {
		var files publishedFiles
		if err := readPrivate(env.Getenv, publishedFilesName, &files); err != nil {
			return err
		}
		prev := files.Servers[cl.BaseURL][path]
		if *fresh {
			prev = nil
		}
		p := publisher{cl: cl, env: env, doc: doc, prev: prev, json: c.json}
		state, err := p.run(ctx)
		if err != nil || state == nil {
			return err
		}
		if files.Servers == nil {
			files.Servers = map[string]map[string]*publishedFile{}
		}
		if files.Servers[cl.BaseURL] == nil {
			files.Servers[cl.BaseURL] = map[string]*publishedFile{}
		}
		files.Servers[cl.BaseURL][path] = state
		if err := writePrivate(env.Getenv, publishedFilesName, files); err != nil {
			return fmt.Errorf("%s is published, but the next publish will not know it: %w", state.URL, err)
		}
		return nil
	})
}

// publisher publishes or updates one prepared note.
type publisher struct {
	cl   *client.Client
	env  cli.Env
	doc  *prepared
	prev *publishedFile // nil for a new publication
	json bool
}

// run sends what changed since prev and returns the new state; nil when nothing changed.
func (p *publisher) run(ctx context.Context) (*publishedFile, error) {
	sum := sha256.Sum256([]byte(p.doc.content))
	state := &publishedFile{ContentSHA256: hex.EncodeToString(sum[:]), Images: map[string]publishedImage{}}
	var send []*localImage
	var replaced int64
	if p.prev != nil {
		maps.Copy(state.Images, p.prev.Images)
	}
	for _, img := range p.doc.images {
		old, had := state.Images[img.name]
		if had && old.SHA256 == img.sha256 {
			continue
		}
		send = append(send, img)
		replaced += old.Bytes
		state.Images[img.name] = publishedImage{img.sha256, img.size}
	}
	contentChanged := p.prev == nil || p.prev.ContentSHA256 != state.ContentSHA256
	if !contentChanged && len(send) == 0 {
		// Printed as the publish answer it would have been, with nothing to warn of.
		return nil, p.print("unchanged", p.prev.URL, &wire.PublishResponse{Ref: wire.Ref{Cuid: p.prev.Cuid, URL: p.prev.URL}, ETag: p.prev.ETag, Warnings: []wire.Warning{}}, nil)
	}
	if err := p.checkLimits(ctx, send, replaced); err != nil {
		return nil, err
	}
	images, closeAll, err := p.open(send)
	if err != nil {
		return nil, err
	}
	defer closeAll()

	if p.prev == nil {
		res, err := p.cl.Publish(ctx, wire.PublishRequest{Content: p.doc.content}, images)
		if err != nil && !errors.As(err, new(*client.Error)) {
			return nil, fmt.Errorf("%w\nthe note may or may not have been published: `sharenote list` shows it if it was", err)
		}
		if err != nil {
			return nil, err
		}
		state.Cuid, state.URL, state.ETag = res.Cuid, res.URL, res.ETag
		return state, p.print("published", res.URL, res, res.Warnings)
	}
	var u wire.NoteUpdate
	if contentChanged {
		u.Content = &p.doc.content
	}
	var res *wire.OwnerNote
	if len(images) > 0 {
		res, err = p.cl.UpdateWithImages(ctx, p.prev.Cuid, u, images, p.prev.ETag)
	} else {
		res, err = p.cl.Update(ctx, p.prev.Cuid, u, p.prev.ETag)
	}
	if err != nil {
		return nil, p.updateError(err)
	}
	state.Cuid, state.URL, state.ETag = res.Cuid, res.URL, res.ETag
	return state, p.print("updated", res.URL, res, res.Warnings)
}

// checkLimits refuses, before anything is sent, images over the free image storage or
// over what one request may carry. replaced is the size of the images they replace.
func (p *publisher) checkLimits(ctx context.Context, send []*localImage, replaced int64) error {
	if len(send) == 0 {
		return nil
	}
	total := int64(len(p.doc.content))
	for _, img := range send {
		total += img.size
	}
	if total > routes.MultipartLimit {
		return fmt.Errorf("the note and its new images are %s; one request carries at most %s: nothing was sent",
			humanBytes(total), humanBytes(routes.MultipartLimit))
	}
	profile, err := p.cl.Settings(ctx)
	if err != nil {
		return err
	}
	s := profile.Storage
	if free := s.ImageLimitBytes - s.ImageBytesUsed; total-int64(len(p.doc.content))-replaced > free {
		return fmt.Errorf("the images need %s of image storage, and %s of your %s is free: nothing was sent",
			humanBytes(total-int64(len(p.doc.content))-replaced), humanBytes(max(free, 0)), humanBytes(s.ImageLimitBytes))
	}
	return nil
}

// open opens the images to send, counted by a progress bar on a terminal when they are
// large; closeAll closes them and ends the bar.
func (p *publisher) open(send []*localImage) (images []client.Image, closeAll func(), err error) {
	var files []*os.File
	var total int64
	closeFiles := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, img := range send {
		f, err := os.Open(img.path)
		if err != nil {
			closeFiles()
			return nil, nil, err
		}
		files = append(files, f)
		total += img.size
	}
	var bar *progress
	if total >= largeUpload && isTerminal(p.env.Stderr) {
		bar = &progress{w: p.env.Stderr, total: total}
	}
	for i, img := range send {
		images = append(images, client.Image{Name: img.name, ContentType: img.contentType, Body: bar.reader(files[i])})
	}
	return images, func() { closeFiles(); bar.done() }, nil
}

// updateError adds what to do to the errors of an update in place.
func (p *publisher) updateError(err error) error {
	var apiErr *client.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("%w\nthe update may or may not have been made: `sharenote versions %s` shows it if it was", err, p.prev.Cuid)
	}
	switch apiErr.Status {
	case http.StatusPreconditionFailed:
		return fmt.Errorf("%w\n%s was changed elsewhere since this machine last published it, and was left as it is: "+
			"see its versions with `sharenote versions %s`, or publish a new copy with --new", err, p.prev.URL, p.prev.Cuid)
	case http.StatusNotFound:
		return fmt.Errorf("%w\n%s, where this file was published, no longer exists (unshared?): publish it again with --new", err, p.prev.URL)
	}
	return err
}

// print reports the outcome: the API's JSON with --json, else the outcome and the URL;
// warnings go to stderr.
func (p *publisher) print(outcome, url string, res any, warnings []wire.Warning) error {
	for _, w := range warnings {
		fmt.Fprintf(p.env.Stderr, "warning: %s (%s: %s)\n", w.Message, w.Code, w.Ref)
	}
	if p.json {
		return printJSON(p.env.Stdout, res)
	}
	_, err := fmt.Fprintf(p.env.Stdout, "%s\t%s\n", outcome, url)
	return err
}
