// Command auth runs the auth service: `auth` serves, `auth licenses …` manages licenses.
package main

import "github.com/sharenote/sharenote/services/auth"

func main() { auth.Program.Exec() }
