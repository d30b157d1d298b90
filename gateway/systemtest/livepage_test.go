package systemtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// devtools is one page of a headless chromium, driven over the DevTools
// protocol.
type devtools struct {
	c  *websocket.Conn
	id int
}

// removeProfile deletes chromium's profile once its last helper has let
// go of it; a leftover in the system's temporary directory is not worth
// failing a test that has passed, so it gives up after a few tries.
func removeProfile(dir string) {
	for range 20 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var devtoolsURL = regexp.MustCompile(`DevTools listening on (ws://127\.0\.0\.1:(\d+)/\S+)`)

// openChromium starts Debian's chromium, headless, on url, and connects
// to the page's DevTools socket.
func openChromium(t *testing.T, url string) *devtools {
	t.Helper()
	prereq.Programs(t, "chromium")
	// The profile is not t.TempDir: chromium's helper processes outlive
	// the main one for a moment and keep writing into it, and the testing
	// package fails a test whose temporary directory will not empty.
	profile, err := os.MkdirTemp("", "clamm-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "chromium", "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", url)
	// Its own process group, so that stopping it stops the renderer and
	// zygote helpers too, not only the browser process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		removeProfile(profile)
	})
	var port string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := devtoolsURL.FindStringSubmatch(sc.Text()); m != nil {
			port = m[2]
			break
		}
	}
	if port == "" {
		t.Fatal("chromium printed no DevTools address")
	}
	go func() {
		for sc.Scan() { // drain, or chromium blocks on a full pipe
		}
	}()
	var page string
	eventually.True(t, "chromium lists the page", func() bool {
		resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var targets []struct{ Type, URL, WebSocketDebuggerURL string }
		_ = json.NewDecoder(resp.Body).Decode(&targets)
		for _, tg := range targets {
			if tg.Type == "page" && strings.HasPrefix(tg.URL, url) {
				page = tg.WebSocketDebuggerURL
			}
		}
		return page != ""
	})
	c, _, err := websocket.Dial(ctx, page, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 22)
	t.Cleanup(func() { c.CloseNow() })
	return &devtools{c: c}
}

// eval evaluates expr in the page and returns its value as text.
func (d *devtools) eval(t *testing.T, expr string) string {
	t.Helper()
	d.id++
	ctx := context.Background()
	msg, _ := json.Marshal(map[string]any{"id": d.id, "method": "Runtime.evaluate", "params": map[string]any{"expression": expr, "returnByValue": true}})
	if err := d.c.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := d.c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID     int `json:"id"`
			Result struct {
				Result struct {
					Value any `json:"value"`
				} `json:"result"`
			} `json:"result"`
		}
		if json.Unmarshal(b, &r) == nil && r.ID == d.id {
			return fmt.Sprint(r.Result.Result.Value)
		}
	}
}

// The live page (PathDocsLive), in headless chromium, draws the market's
// mark price and strikes chain from their streams and redraws as blocks
// come: three blocks that move the price are at least three updates, the
// last naming the last block and its price.
func TestLivePageUpdatesInChromium(t *testing.T) {
	a, f, srv := streamApp(t, 64, 0)
	a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: headAt(t, a, f.Node.BlockNumber)})
	d := openChromium(t, srv.URL+gateway.PathDocsLive)
	updates := func() int {
		n, _ := strconv.Atoi(d.eval(t, `document.getElementById("updates").textContent`))
		return n
	}
	eventually.True(t, "the page shows the first answers", func() bool { return updates() >= 2 })
	start := updates()
	var head block.Ref
	for range 3 {
		want := updates() + 1 // read before the block: its redraw may come at once
		head = nextBlock(t, f, a)
		a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: head})
		eventually.True(t, "the page redraws for the block", func() bool { return updates() >= want })
	}
	if got := updates() - start; got < 3 {
		t.Fatalf("%d updates over three blocks", got)
	}
	eventually.True(t, "the page names the last block", func() bool {
		return d.eval(t, `document.getElementById("block").textContent`) == strconv.FormatUint(head.Number, 10)
	})
	var mark struct {
		MarkPrice string `json:"markPrice"`
	}
	_ = json.Unmarshal([]byte(plainAt(t, a, streamMark, head.Number)), &mark)
	if shown := d.eval(t, `document.getElementById("mark").textContent`); !strings.HasPrefix(shown, mark.MarkPrice+" ") {
		t.Fatalf("the page shows %q, the mark price at %d is %s", shown, head.Number, mark.MarkPrice)
	}
	if bars := d.eval(t, `document.querySelectorAll("#chart rect").length`); bars == "0" {
		t.Fatal("the page drew no strike")
	}
}
