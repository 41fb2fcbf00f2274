// Package imagesapi serves GET /api/images/:userCuid/:noteCuid/:filename.
package imagesapi

import (
	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
)

// API serves image bytes.
type API struct {
	notes    *note.Core
	settings *account.SettingsCore
}

// New returns the API.
func New(notes *note.Core, settings *account.SettingsCore) *API {
	return &API{notes: notes, settings: settings}
}

// Read returns an image of an active publication with its stored media type. nosniff
// stops a browser from reinterpreting the bytes as anything but that image type.
func (a *API) Read(c *gin.Context) {
	user, noteID, name := c.Param("userCuid"), c.Param("noteCuid"), c.Param("filename")
	if !cuid.Valid(user) || !cuid.Valid(noteID) || !note.ValidFilename(name) {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	img, p, err := a.notes.ReadImage(c.Request.Context(), user, noteID, name)
	if err != nil {
		errs.Abort(c, noteapi.Error(err))
		return
	}
	prof, err := a.settings.Get(c.Request.Context(), p.AccountCUID)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("X-Content-Type-Options", "nosniff")
	noteapi.ServePublic(c, p, a.notes.Now(), prof.Settings.Indexable, img.MediaType, img.SHA256[:32], img.Data)
}
