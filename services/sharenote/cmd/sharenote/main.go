// Command sharenote is the one binary: `sharenote serve [--target LIST]` serves the API's
// targets; migrate, licenses, reap, config, routes and version are the operator's commands.
package main

import (
	// CA roots for images without a system certificate store (FROM scratch), so that
	// rediss://, postgres with TLS, S3 over https and OTLP over https verify their
	// servers. The system's roots are used wherever they exist.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/sharenote/sharenote/services/sharenote"
)

func main() { sharenote.Program.Exec() }
