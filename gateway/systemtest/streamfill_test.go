package systemtest

import (
	"fmt"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
)

// More streamed keys than fill slots: at a new head every topic asks for
// its answer at once, and each one's stream gets the answer at that head
// (equal to the GET at its block), none an error. Before, a topic past
// the fill bound (CLAMM_MAX_FILLS, here 1) was refused (503 OVERLOADED)
// and its stream sent that error and skipped the block: with 1,000 keys
// nearly every block was lost.
func TestStreamKeysBeyondFillSlotsAllAnswered(t *testing.T) {
	a, f, srv := streamAppWith(t, func(cfg *config.Config) { cfg.StreamsPerClient, cfg.MaxFills = 64, 1 })
	const keys = 8
	var paths []string
	var streams []<-chan sseEvent
	for i := range keys {
		path := fmt.Sprintf("%s?chainId=42161&optionMarket=%s&callsReach=%d&putsReach=1", gateway.PathStrikesChain, wethUSDC, 1+i)
		events, _ := follow(t, srv, path, "")
		paths, streams = append(paths, path), append(streams, events)
	}
	head := headAt(t, a, f.Node.BlockNumber)
	a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: head})
	got := make([]sseEvent, keys)
	for i, events := range streams {
		got[i] = next(t, events)
	}
	for i, ev := range got { // the GETs after: they would queue for the one slot
		if ev.event != "answer" || ev.id != idOf(head) || ev.data != plainAt(t, a, paths[i], head.Number) {
			t.Errorf("%s: %s %s %.200s, want the answer at %d", paths[i], ev.event, ev.id, ev.data, head.Number)
		}
	}
}
