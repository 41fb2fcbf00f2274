package app

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Access is what a target may do in the database.
type Access int

const (
	// NoDatabase: the target never touches the database.
	NoDatabase Access = iota
	// ReadOnly: the target only reads (SELECT); its database role may hold nothing more.
	ReadOnly
	// ReadWrite: the target reads and writes rows (SELECT, INSERT, UPDATE, DELETE).
	ReadWrite
)

func (a Access) String() string {
	return [...]string{"none", "read-only", "read-write"}[a]
}

// The background jobs a target may declare (Needs.Jobs). A Job of a target's Parts must
// carry one of the names its Needs declare.
const (
	// JobRender renders again the stored renders that are temporary or of an older
	// renderer (note.Renders.RenderPending).
	JobRender = "render"
	// JobNames indexes the names the link index lacks (note.Renders.IndexNames).
	JobNames = "names"
	// JobReap is the in-process reap that SHARE_REAP_INTERVAL asks for (reapJob), the
	// embedded default's stand-in for the CronJob's `sharenote reap`.
	JobReap = "reap"
	// JobPurge sends the changes the outbox holds for the edge to SHARE_EDGE_PURGE_URLS
	// (edge.Worker), when an edge is configured.
	JobPurge = "purge"
)

// Needs are what a target uses of a process's dependencies, as each module of Loki lists
// its dependencies: New opens, checks (/readyz, sharenote_dependency_up) and builds only
// the union of its targets' needs, and runs only the jobs they declare.
type Needs struct {
	Database Access
	// Redis holds the rate limits every route counts toward (when SHARE_REDIS_URL is
	// set) and carries the change feed.
	Redis bool
	// ObjectStore is SHARE_BLOB_URL, where image bytes live.
	ObjectStore bool
	// Renderer is the Markdown renderer (libs/render): publishes and updates render, and
	// pages resolve their note links.
	Renderer bool
	// ChangeFeed keeps the per-process caches (public reads, sessions) current; a target
	// that caches nothing has no use for it.
	ChangeFeed bool
	// Jobs are the background jobs the target runs while it serves.
	Jobs []string
}

// Union is what a process serving every target of targets needs.
func Union(targets []Target) Needs {
	var n Needs
	for _, t := range targets {
		n.Database = max(n.Database, t.Needs.Database)
		n.Redis = n.Redis || t.Needs.Redis
		n.ObjectStore = n.ObjectStore || t.Needs.ObjectStore
		n.Renderer = n.Renderer || t.Needs.Renderer
		n.ChangeFeed = n.ChangeFeed || t.Needs.ChangeFeed
		for _, j := range t.Needs.Jobs {
			if !slices.Contains(n.Jobs, j) {
				n.Jobs = append(n.Jobs, j)
			}
		}
	}
	return n
}

// declares reports an error when a job of the target's parts is not among its declared
// needs, so that the needs stay the truth.
func (t Target) declares(jobs []Job) error {
	for _, j := range jobs {
		if !slices.Contains(t.Needs.Jobs, j.Name) {
			return fmt.Errorf("target %s runs the job %s, which its Needs do not declare", t.Name, j.Name)
		}
	}
	return nil
}

// PrintNeeds writes the needs of targets as a Markdown table, one row per target: what
// `sharenote routes --needs` prints and docs/architecture.md "What each target needs"
// holds.
func PrintNeeds(w io.Writer, targets []Target) error {
	yes := map[bool]string{true: "yes", false: "–"}
	var b strings.Builder
	b.WriteString("| target | database | redis | object store | renderer | change feed | background jobs |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, t := range targets {
		n := t.Needs
		jobs := strings.Join(n.Jobs, ", ")
		if jobs == "" {
			jobs = "–"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", t.Name, n.Database, yes[n.Redis],
			yes[n.ObjectStore], yes[n.Renderer], yes[n.ChangeFeed], jobs)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
