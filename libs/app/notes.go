package app

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
)

// noteCases are the note domain's use cases of a process: each built when the process's
// targets together need what it needs (Needs), nil otherwise. A target reaches them
// through the accessors of Deps, which check its own Needs.
type noteCases struct {
	publisher *note.Publisher
	renders   *note.Renders
	reader    *note.Reader
	cards     *note.Cards
	images    *note.Images
	history   *note.History
}

// What each use case needs of a target's dependencies.
var (
	needsPublisher = Needs{Database: ReadWrite, ObjectStore: true, Renderer: true}
	needsRenders   = Needs{Database: ReadWrite, Renderer: true}
	needsReader    = Needs{Database: ReadOnly, Renderer: true}
	needsCards     = Needs{Database: ReadOnly}
	needsImages    = Needs{Database: ReadOnly, ObjectStore: true}
	needsHistory   = Needs{Database: ReadWrite}
)

// newNoteCases builds the use cases the needs allow, over the process's stores, renderer
// and object store.
func (a *App) newNoteCases(cfg note.Config, renderer note.Renderer) noteCases {
	var n noteCases
	has := func(want Needs) bool { return a.needs.lacks(want) == "" }
	if has(needsPublisher) {
		n.publisher = note.NewPublisher(a.notes, a.notes, renderer, a.blobs, cfg)
	}
	if has(needsRenders) {
		n.renders = note.NewRenders(a.notes, renderer, cfg)
	}
	reads := notedb.NewReads(a.db)
	if has(needsReader) {
		n.reader = note.NewReader(reads, renderer, cfg)
	}
	if has(needsCards) {
		n.cards = note.NewCards(reads, cfg)
	}
	if has(needsImages) {
		n.images = note.NewImages(reads, a.blobs, cfg)
	}
	if has(needsHistory) {
		n.history = note.NewHistory(a.notes)
	}
	return n
}

// noteConfig is the use cases' configuration, their changes told to notifier and their
// renders counted in reg.
func noteConfig(cfg config.Config, d Deps, notifier note.Notifier, reg prometheus.Registerer) note.Config {
	renders := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sharenote_note_renders_total",
		Help: "Renders of notes' Markdown, by cause (publish, update, background) and outcome (final, temporary)."},
		[]string{"cause", "outcome"})
	reg.MustRegister(renders)
	return note.Config{Now: d.Now, PublicURL: cfg.PublicURL, Quota: cfg.ImageQuotaBytes, Notifier: notifier, Log: d.Log,
		Rendered: func(cause, outcome string) { renders.WithLabelValues(cause, outcome).Inc() }}
}

// Publisher is the note domain's publish, update and unpublish, for a target that needs a
// read-write database, the object store and the renderer.
func (d Deps) Publisher() (*note.Publisher, error) {
	return useCase(d, "Publisher", needsPublisher, d.notes.publisher)
}

// Renders is the note domain's background renders and name indexing, for a target that
// needs a read-write database and the renderer.
func (d Deps) Renders() (*note.Renders, error) {
	return useCase(d, "Renders", needsRenders, d.notes.renders)
}

// Reader is the note domain's public pages, for a target that needs the database and the
// renderer.
func (d Deps) Reader() (*note.Reader, error) {
	return useCase(d, "Reader", needsReader, d.notes.reader)
}

// Cards is the note domain's preview cards, for a target that needs the database.
func (d Deps) Cards() (*note.Cards, error) {
	return useCase(d, "Cards", needsCards, d.notes.cards)
}

// Images is the note domain's public images, for a target that needs the database and
// the object store.
func (d Deps) Images() (*note.Images, error) {
	return useCase(d, "Images", needsImages, d.notes.images)
}

// History is the note domain's list of an owner's notes and their versions, for a target
// that needs a read-write database.
func (d Deps) History() (*note.History, error) {
	return useCase(d, "History", needsHistory, d.notes.history)
}

// useCase returns the use case uc, named name, unless the target d was given to does not
// declare what it needs (want): then an error naming what its Needs lack, which fails
// the process's start.
func useCase[T any](d Deps, name string, want Needs, uc *T) (*T, error) {
	if missing := d.needs.lacks(want); missing != "" {
		return nil, fmt.Errorf("the note domain's %s needs %s, which the target's Needs do not declare", name, missing)
	}
	return uc, nil
}

// lacks names what want needs that n does not declare ("" when nothing).
func (n Needs) lacks(want Needs) string {
	var missing []string
	if n.Database < want.Database {
		missing = append(missing, "a "+want.Database.String()+" database")
	}
	if want.ObjectStore && !n.ObjectStore {
		missing = append(missing, "the object store")
	}
	if want.Renderer && !n.Renderer {
		missing = append(missing, "the renderer")
	}
	return strings.Join(missing, " and ")
}
