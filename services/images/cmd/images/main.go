// Command images runs the images service.
package main

import "github.com/sharenote/sharenote/services/images"

func main() { images.Program.Exec() }
