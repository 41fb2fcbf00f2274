// Command publish runs the publish service.
package main

import "github.com/sharenote/sharenote/services/publish"

func main() { publish.Program.Exec() }
