package systemtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// streamDocs is docs/api.md's Streams section.
func streamDocs(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "docs/api.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(raw), "\n## Streams\n")
	if !ok {
		t.Fatal("docs/api.md has no Streams section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}

// The Streams section's curl example, run against a gateway with streams
// on, gets as its first event the answer at the head, as the GET at that
// block gives it.
func TestDocStreamCurlExampleRuns(t *testing.T) {
	a, f, srv := streamApp(t, 64, 0)
	top := f.Node.BlockNumber
	a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: headAt(t, a, top)})
	var ran int
	for _, line := range strings.Split(streamDocs(t), "\n") {
		l := strings.TrimSpace(line)
		if !strings.HasPrefix(l, "curl -N ") {
			continue
		}
		ex, ok := parseExample("docs/api.md", l)
		if !ok || len(ex.headers) != 1 || ex.headers[0] != [2]string{"Accept", "text/event-stream"} {
			t.Fatalf("a stream example asks no localhost:8080 URL with Accept: text/event-stream: %s", l)
		}
		path := strings.TrimPrefix(ex.url, "localhost:8080")
		events, _ := follow(t, srv, path, "")
		ev := next(t, events)
		if ev.event != "answer" || ev.id != idOf(headAt(t, a, top)) || ev.data != plainAt(t, a, path, top) {
			t.Errorf("%s: first event %s %s, want the answer at %d", l, ev.event, ev.id, top)
		}
		ran++
	}
	if ran == 0 {
		t.Fatal("the Streams section shows no curl -N example")
	}
}

// eventSource stands in for the browser's EventSource under node (which
// has none before version 22): the events of one stream, as the browser
// hands them to listeners. The first console.log of the example ends the
// run.
const eventSource = `
globalThis.EventSource = class {
  constructor(url) { this.l = {}; this.run(url).catch((e) => { console.error(e); process.exit(2); }); }
  addEventListener(t, f) { (this.l[t] ||= []).push(f); }
  async run(url) {
    const r = await fetch(url, { headers: { Accept: "text/event-stream" } });
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of r.body) {
      buf += dec.decode(chunk, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let type = "message", id = "";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) type = line.slice(7);
          else if (line.startsWith("data: ")) data.push(line.slice(6));
          else if (line.startsWith("id: ")) id = line.slice(4);
        }
        if (data.length) for (const f of this.l[type] || []) f({ type, data: data.join("\n"), lastEventId: id });
      }
    }
  }
};
const log = console.log;
console.log = (...a) => { log(...a); process.exit(0); };
`

// The Streams section's JavaScript example, run by node against a
// gateway with streams on, prints the mark price at the head.
func TestDocStreamEventSourceExampleRuns(t *testing.T) {
	prereq.Programs(t, "node")
	a, f, srv := streamApp(t, 64, 0)
	top := f.Node.BlockNumber
	a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: headAt(t, a, top)})
	_, js, ok := strings.Cut(streamDocs(t), "```js\n")
	js, _, ok2 := strings.Cut(js, "```")
	if !ok || !ok2 {
		t.Fatal("the Streams section shows no js example")
	}
	js = strings.ReplaceAll(js, "http://localhost:8080", srv.URL)
	out, err := exec.Command("node", "-e", eventSource+js).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var mark struct {
		MarkPrice string `json:"markPrice"`
	}
	if err := json.Unmarshal([]byte(plainAt(t, a, streamMark, top)), &mark); err != nil {
		t.Fatal(err)
	}
	if want := "block " + strconv.FormatUint(top, 10) + ": mark price " + mark.MarkPrice; strings.TrimSpace(string(out)) != want {
		t.Fatalf("the example printed %q, want %q", out, want)
	}
}
