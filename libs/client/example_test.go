package client_test

// These examples are compiled but not run: they need a server with every target, which a
// package under libs may not import, and an Example cannot start one (it has no
// *testing.T). services/sharenote's client*_test.go test the same calls against the real program.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/wire"
)

func Example() {
	ctx := context.Background()
	c := &client.Client{BaseURL: "http://127.0.0.1:8080"}
	tok, err := c.Login(ctx, os.Getenv("SHARE_LICENSE_KEY"), os.Getenv("SHARE_INSTANCE_ID"))
	if err != nil {
		log.Fatal(err)
	}
	c.Token = tok.Token
	for page, err := range c.Pages(ctx, 100) {
		if err != nil {
			log.Fatal(err)
		}
		for _, n := range page.Notes {
			fmt.Println(n.Cuid, n.URL)
		}
	}
}

// Update with the ETag of the state it changes: a change made elsewhere in between is
// refused with 412 precondition_failed instead of being overwritten.
func ExampleClient_Update() {
	ctx := context.Background()
	c := &client.Client{BaseURL: "http://127.0.0.1:8080", Token: os.Getenv("SHARE_TOKEN")}
	const cuid = "k3v9x2m0q8w1e7r4t6y5u2i0"
	content := "# New text"
	n, err := c.Update(ctx, cuid, wire.NoteUpdate{Content: &content, Summary: wire.Clear[string]()}, "")
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Update(ctx, cuid, wire.NoteUpdate{Title: wire.Set("Renamed")}, n.ETag)
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Code == "precondition_failed" {
		fmt.Println("changed elsewhere since; read it again")
	}
}

// Publish a note with an image streamed from its file: `![[map.png]]` in the content
// becomes the image's URL.
func ExampleClient_Publish() {
	ctx := context.Background()
	c := &client.Client{BaseURL: "http://127.0.0.1:8080", Token: os.Getenv("SHARE_TOKEN")}
	f, err := os.Open("map.png")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	res, err := c.Publish(ctx, wire.PublishRequest{Content: "---\ntitle: Trip\n---\n# Trip\n\n![[map.png]]\n"},
		[]client.Image{{Name: "map.png", Body: f}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.URL)
	for _, w := range res.Warnings {
		fmt.Println("warning:", w.Message)
	}
}

// Publish many notes within the account's budget of changes: with a Budget, each change
// waits while the budget the last answer told (RateLimit-* headers) is spent, instead of
// meeting a 429. A change refused all the same is never sent again: report it.
func ExampleBudget() {
	ctx := context.Background()
	budget := &client.Budget{}
	c := &client.Client{BaseURL: "http://127.0.0.1:8080", Token: os.Getenv("SHARE_TOKEN"), Budget: budget}
	for i := range 200 {
		_, err := c.Publish(ctx, wire.PublishRequest{Content: fmt.Sprintf("# Note %d", i)}, nil)
		if err != nil {
			fmt.Println("note", i, "failed:", err)
			continue
		}
		if rl, ok := budget.Last(); ok {
			fmt.Printf("%d of %d left; the next change waits %v\n", rl.Remaining, rl.Limit, budget.Delay())
		}
	}
}
