package noteapi_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
)

// domainCase is one error of the domain, as a handler passes it on, and what the client
// must see of it.
type domainCase struct {
	// kind names the sentinel or typed error of the domain that the case stands for, as
	// the code names it ("note.ErrNotFound", "account.FieldError").
	kind    string
	name    string
	err     error
	status  int
	code    string
	message string
}

// domainCases are every error of packages note and account, most of them made the way
// the domain makes them (wrapped with a reason and with the operation).
func domainCases(t *testing.T) []domainCase {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	_, expiryErr := note.ParseExpiry("tomorrow", now)
	_, _, propsErr := note.SplitFrontmatter("---\n- a\n---\nbody")
	_, imageErr := note.CheckImage("a.txt", "text/plain", nil)
	_, cursorErr := note.DecodeCursor([]byte("key"), "account", "not-a-cursor")
	for _, err := range []error{expiryErr, propsErr, imageErr, cursorErr} {
		if err == nil {
			t.Fatal("a domain parser accepted the bad input of a case")
		}
	}
	const (
		notFound  = "Not found."
		bad       = http.StatusBadRequest
		tooLarge  = http.StatusRequestEntityTooLarge
		staleText = "The publication has changed since the etag in If-Match; read it again and reapply your change."
	)
	return []domainCase{
		{"note.ErrNotFound", "a missing publication", fmt.Errorf("update: %w", note.ErrNotFound),
			http.StatusNotFound, errs.NotFound, notFound},
		{"account.ErrNotFound", "a missing account", fmt.Errorf("settings: %w", account.ErrNotFound),
			http.StatusNotFound, errs.NotFound, notFound},
		{"account.ErrUnauthorized", "any failed credential check", account.ErrUnauthorized,
			http.StatusUnauthorized, errs.Unauthorized, "Missing, invalid or expired credentials."},
		{"account.ErrInvalid", "an account input that cannot be stored", fmt.Errorf("%w: name must be 1 to 100 characters", account.ErrInvalid),
			bad, errs.InvalidField, "Account: invalid input: name must be 1 to 100 characters."},
		{"account.FieldError", "a bad settings field", fmt.Errorf("change settings: %w", &account.FieldError{Field: "theme", Reason: "must be one of system, light, dark"}),
			bad, errs.InvalidField, "Field theme must be one of system, light, dark."},
		{"note.ErrInvalidText", "text no column can hold", fmt.Errorf("publish: %w", fmt.Errorf("%w: content contains a NUL character or invalid UTF-8", note.ErrInvalidText)),
			bad, errs.InvalidField, "Publish: invalid text: content contains a NUL character or invalid UTF-8."},
		{"note.PathTakenError", "a path another note has", fmt.Errorf("publish: %w", &note.PathTakenError{Path: "A/B.md", Holder: "k3v9x2m0q8w1e7r4t6y5u2i0"}),
			bad, errs.InvalidField, "The path A/B.md is taken by another of your notes (cuid k3v9x2m0q8w1e7r4t6y5u2i0)."},
		{"note.ErrInvalidExpiry", "an expiry that does not parse", expiryErr,
			bad, errs.InvalidField, "expires_at: Invalid expiry: must be RFC 3339 (2026-11-22T10:00:00Z) or YYYY-MM-DD."},
		{"note.ErrInvalidProperties", "frontmatter that is not a mapping", propsErr,
			bad, errs.InvalidProperties, "Invalid properties: frontmatter line 2: the frontmatter must be a mapping of keys to values, not a list."},
		{"note.ErrInvalidImage", "a file that is not an image", imageErr,
			bad, errs.InvalidImage, "Invalid image: a.txt: the extension must be png, jpg, jpeg, gif or webp."},
		{"note.ErrInvalidCursor", "a cursor the service did not issue", cursorErr,
			bad, errs.InvalidCursor, "The cursor was not issued by this service for this account."},
		{"note.ErrStale", "an update against an old etag", fmt.Errorf("update: %w", note.ErrStale),
			http.StatusPreconditionFailed, errs.PreconditionFailed, staleText},
		{"note.ErrBusy", "an update of a note that kept changing while it was decided", fmt.Errorf("update: %w", note.ErrBusy),
			http.StatusServiceUnavailable, errs.ServiceUnavailable, "The publication kept changing while this change was made; send it again."},
		{"note.ErrNoteTooLarge", "note data over the limit", fmt.Errorf("%w: %d bytes, the limit is %d", note.ErrNoteTooLarge, 2_000_000, note.MaxNoteBytes),
			tooLarge, errs.NoteTooLarge, "Stored note data too large: 2000000 bytes, the limit is 1900000."},
		{"note.ErrQuotaExceeded", "images over the storage quota", fmt.Errorf("publish: %w", note.ErrQuotaExceeded),
			tooLarge, errs.StorageQuotaExceeded, "The account's image storage quota would be exceeded."},
		{"note.ErrTooManyImages", "too many images, limit unnamed", note.ErrTooManyImages,
			tooLarge, errs.TooManyImages, "Too many images."},
		{"note.ImageTooLargeError", "an image over the limit", fmt.Errorf("publish: %w", &note.ImageTooLargeError{Filename: "big.png"}),
			tooLarge, errs.ImageTooLarge, "Image \"big.png\" is larger than 5242880 bytes."},
		{"note.ErrUploadExpired", "an upload the reaper gave up on", fmt.Errorf("publish: %w", note.ErrUploadExpired),
			http.StatusServiceUnavailable, errs.ServiceUnavailable, "The service is temporarily unavailable; retry later."},
		{"note.SourceError", "a request body cut off in an image", &note.SourceError{Err: &http.MaxBytesError{Limit: 100}},
			tooLarge, errs.PayloadTooLarge, "The request body is larger than 100 bytes."},
		{"note.TooManyImagesError", "too many images in one publish", &note.TooManyImagesError{Limit: note.MaxImagesPerPublish},
			tooLarge, errs.TooManyImages, "A publish carries at most 100 images."},
		{"note.TooManyImagesError", "too many images in one account", fmt.Errorf("publish: %w", &note.TooManyImagesError{Limit: note.MaxImagesPerAccount, PerAccount: true}),
			tooLarge, errs.TooManyImages, "An account keeps at most 10000 images of published notes; unpublish notes to publish more images."},
	}
}

// TestEveryDomainErrorHasItsContractCode is the table of the one translation: every
// sentinel and typed error of the domain, as a handler passes it on, gets its status, code
// and message of docs/api.md "Errors".
func TestEveryDomainErrorHasItsContractCode(t *testing.T) {
	for _, c := range domainCases(t) {
		t.Run(c.kind+": "+c.name, func(t *testing.T) {
			got := errs.As(c.err, noteapi.Translate)
			if got.Status != c.status || got.Code != c.code || got.Message != c.message {
				t.Errorf("As(%v) = %d %s %q,\nwant %d %s %q", c.err, got.Status, got.Code, got.Message, c.status, c.code, c.message)
			}
		})
	}
}

// TestTheTranslationTableIsComplete fails when the domain gains an error that the table
// above does not cover: an exported Err… variable or …Error type of packages note and
// account.
func TestTheTranslationTableIsComplete(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range domainCases(t) {
		covered[c.kind] = true
	}
	for _, pkg := range []string{"note", "account"} {
		for _, name := range domainErrors(t, filepath.Join("..", pkg)) {
			if !covered[pkg+"."+name] {
				t.Errorf("%s.%s has no case in the translation table (and perhaps no translation)", pkg, name)
			}
		}
	}
}

// domainErrors returns the exported error sentinels (var Err…) and error types (type
// …Error) declared in the non-test files of the package in dir.
func domainErrors(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gen.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() && strings.HasPrefix(id.Name, "Err") {
							names = append(names, id.Name)
						}
					}
				case *ast.TypeSpec:
					if s.Name.IsExported() && strings.HasSuffix(s.Name.Name, "Error") {
						names = append(names, s.Name.Name)
					}
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("found no domain errors in %s", dir)
	}
	return names
}

// unavailable is a dependency failure as the stores report it.
type unavailable struct{}

func (unavailable) Error() string     { return "database unavailable: connection refused" }
func (unavailable) Unavailable() bool { return true }

func TestErrorsThatAreNotTheDomains(t *testing.T) {
	own := errs.New(http.StatusBadRequest, errs.InvalidBody, "The body is not valid JSON.")
	for _, c := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"an *Error of the edge is kept", fmt.Errorf("parse: %w", own), http.StatusBadRequest, errs.InvalidBody},
		{"an *Error wins over the domain error it wraps", &errs.Error{Status: http.StatusConflict, Code: "x", Cause: note.ErrNotFound}, http.StatusConflict, "x"},
		{"a dependency failure is a 503", fmt.Errorf("publish: %w", unavailable{}), http.StatusServiceUnavailable, errs.ServiceUnavailable},
		{"anything else is a 500", errors.New(`pq: syntax error at or near "SELECT"`), http.StatusInternalServerError, errs.InternalError},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := errs.As(c.err, noteapi.Translate)
			if got.Status != c.status || got.Code != c.code {
				t.Errorf("As(%v) = %d %s, want %d %s", c.err, got.Status, got.Code, c.status, c.code)
			}
			if got.Status >= 500 && strings.Contains(got.Message, "SELECT") {
				t.Errorf("a 5xx message leaks its cause: %q", got.Message)
			}
		})
	}
}
