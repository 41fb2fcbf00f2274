// Command notes runs the notes service.
package main

import "github.com/sharenote/sharenote/services/notes"

func main() { notes.Program.Exec() }
