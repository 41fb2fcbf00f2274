// Command sharenote is the all-in-one binary: `sharenote serve` runs every service in one
// process; `migrate`, `licenses` and `routes` are the operator's commands.
package main

import "github.com/sharenote/sharenote/services/allinone"

func main() { allinone.Program.Exec() }
