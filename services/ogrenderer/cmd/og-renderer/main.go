// Command og-renderer runs the og-renderer service.
package main

import "github.com/sharenote/sharenote/services/ogrenderer"

func main() { ogrenderer.Program.Exec() }
