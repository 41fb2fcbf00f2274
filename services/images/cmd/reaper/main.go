// Command reaper is the reaper CronJob's one-shot run: it deletes the bytes of images of
// unpublished notes in bounded batches and exits.
package main

import "github.com/sharenote/sharenote/services/images"

func main() { images.ReaperProgram.Exec() }
