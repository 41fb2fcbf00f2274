package noteapi

import (
	"errors"
	"net/http"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
)

// Translate is the one translation of the domain's errors (the sentinels and typed errors
// of packages note and account) into the status, code and message of docs/api.md
// "Errors"; nil for an error that is none of them. The domain knows nothing of HTTP: its
// errors say what went wrong, and this table says how a client hears of it. Messages are
// safe to show: the reasons the domain wraps into its errors are written for the author,
// bounded in length, and carry nothing from storage. The router hands it to
// errs.Middleware, so every handler passes the domain's errors on as they are.
func Translate(err error) *errs.Error {
	var (
		field *account.FieldError
		many  *note.TooManyImagesError
		large *note.ImageTooLargeError
		src   *note.SourceError
		taken *note.PathTakenError
	)
	switch {
	case errors.As(err, &field):
		return errs.New(http.StatusBadRequest, errs.InvalidField, "Field "+field.Error()+".")
	case errors.As(err, &many):
		return tooManyImages(many)
	case errors.As(err, &large):
		return errs.Newf(http.StatusRequestEntityTooLarge, errs.ImageTooLarge, "Image %q is larger than %d bytes.", large.Filename, note.MaxImageBytes)
	case errors.Is(err, note.ErrUploadExpired):
		return errs.Unavailable(err)
	case errors.As(err, &src):
		return httpx.ReadError(src.Err)
	case errors.Is(err, note.ErrNotFound), errors.Is(err, account.ErrNotFound):
		return errs.NotFoundError()
	case errors.Is(err, account.ErrUnauthorized):
		return errs.UnauthorizedError()
	case errors.Is(err, account.ErrInvalid), errors.Is(err, note.ErrInvalidText):
		return errs.New(http.StatusBadRequest, errs.InvalidField, sentence(err))
	case errors.As(err, &taken):
		return &errs.Error{Status: http.StatusBadRequest, Code: errs.InvalidField, Cuid: taken.Holder,
			Message: "The path " + taken.Path + " is taken by another of your notes (cuid " + taken.Holder + ")."}
	case errors.Is(err, note.ErrInvalidExpiry):
		return errs.New(http.StatusBadRequest, errs.InvalidField, "expires_at: "+sentence(err))
	case errors.Is(err, note.ErrInvalidProperties):
		return errs.New(http.StatusBadRequest, errs.InvalidProperties, sentence(err))
	case errors.Is(err, note.ErrInvalidImage):
		return errs.New(http.StatusBadRequest, errs.InvalidImage, sentence(err))
	case errors.Is(err, note.ErrInvalidCursor):
		return errs.New(http.StatusBadRequest, errs.InvalidCursor, "The cursor was not issued by this service for this account.")
	case errors.Is(err, note.ErrStale):
		return errs.New(http.StatusPreconditionFailed, errs.PreconditionFailed,
			"The publication has changed since the etag in If-Match; read it again and reapply your change.")
	case errors.Is(err, note.ErrBusy):
		return errs.New(http.StatusServiceUnavailable, errs.ServiceUnavailable,
			"The publication kept changing while this change was made; send it again.")
	case errors.Is(err, note.ErrNoteTooLarge):
		return errs.New(http.StatusRequestEntityTooLarge, errs.NoteTooLarge, sentence(err))
	case errors.Is(err, note.ErrQuotaExceeded):
		return errs.New(http.StatusRequestEntityTooLarge, errs.StorageQuotaExceeded, "The account's image storage quota would be exceeded.")
	case errors.Is(err, note.ErrTooManyImages):
		return errs.New(http.StatusRequestEntityTooLarge, errs.TooManyImages, sentence(err))
	default:
		return nil
	}
}

// tooManyImages names the image limit a publish would pass, and what the author can do.
func tooManyImages(e *note.TooManyImagesError) *errs.Error {
	if e.PerAccount {
		return errs.Newf(http.StatusRequestEntityTooLarge, errs.TooManyImages,
			"An account keeps at most %d images of published notes; unpublish notes to publish more images.", e.Limit)
	}
	return errs.Newf(http.StatusRequestEntityTooLarge, errs.TooManyImages, "A publish carries at most %d images.", e.Limit)
}

// sentence turns a wrapped domain error into a message: its text with a capital letter
// and a full stop.
func sentence(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	if s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	if s[len(s)-1] != '.' {
		s += "."
	}
	return s
}
