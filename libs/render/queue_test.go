package render

import (
	"context"
	"testing"
	"time"
)

// The render queue is tested inside the package: its slots are the process's, and a
// test through Markdown could only guess which render holds which.

func TestAQueueKeepsASlotForOtherTenants(t *testing.T) {
	q := newQueue(4)
	var held []func()
	for range 3 {
		release, err := q.acquire(context.Background(), "bomber", time.Second)
		if err != nil || release == nil {
			t.Fatalf("a lone tenant gets 3 of 4 slots: %v", err)
		}
		held = append(held, release)
	}
	if release, _ := q.acquire(context.Background(), "bomber", 20*time.Millisecond); release != nil {
		t.Fatal("a tenant took the last slot")
	}
	release, err := q.acquire(context.Background(), "victim", 20*time.Millisecond)
	if err != nil || release == nil {
		t.Fatal("another tenant waited beside a tenant that holds all slots but one")
	}
	release()
	for _, r := range held {
		r()
	}
	if q.free != 4 || len(q.held) != 0 || len(q.waiting) != 0 || len(q.turns) != 0 {
		t.Errorf("after every release: free %d held %v waiting %v turns %v", q.free, q.held, q.waiting, q.turns)
	}
}

func TestAFreedSlotGoesToTheTenantsInTurn(t *testing.T) {
	q := newQueue(3)
	var held []func()
	for _, tenant := range []string{"x", "y", "z"} {
		release, _ := q.acquire(context.Background(), tenant, time.Second)
		held = append(held, release)
	}
	order := make(chan string, 4)
	wait := func(tenant string) {
		release, err := q.acquire(context.Background(), tenant, 5*time.Second)
		if err != nil || release == nil {
			t.Errorf("%s got no slot: %v", tenant, err)
			return
		}
		order <- tenant
		release()
	}
	// a queues three renders, then b one: b's comes second, not fourth.
	for _, tenant := range []string{"a", "a", "a", "b"} {
		go wait(tenant)
		time.Sleep(20 * time.Millisecond)
	}
	held[2]()
	var got []string
	for range 4 {
		got = append(got, <-order)
	}
	held[0]()
	held[1]()
	if got[0] != "a" || got[1] != "b" {
		t.Errorf("slots went to %v, want a then b", got)
	}
}

func TestAWaiterThatGivesUpLeavesTheQueue(t *testing.T) {
	q := newQueue(2)
	r1, _ := q.acquire(context.Background(), "a", time.Second)
	r2, _ := q.acquire(context.Background(), "b", time.Second)
	if release, err := q.acquire(context.Background(), "c", 10*time.Millisecond); release != nil || err != nil {
		t.Errorf("a full queue: release %v, err %v; want neither (timed out)", release != nil, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.acquire(ctx, "c", time.Second); err != context.Canceled {
		t.Errorf("a cancelled wait: %v", err)
	}
	r1()
	r2()
	if q.free != 2 || len(q.waiting) != 0 || len(q.turns) != 0 {
		t.Errorf("free %d waiting %v turns %v", q.free, q.waiting, q.turns)
	}
}
