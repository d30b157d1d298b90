package orders_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
)

// childEnv names the book a re-executed test binary serves (see
// TestKill9KeepsEveryAcceptedOrder).
const childEnv = "CLAMM_ORDERS_CRASH_BOOK"

const perMaker = 5

// submission i: 150 makers over 1,000 submissions, so makers go over the
// bound and are refused, as in a flood.
func submission(i int) orders.Record {
	return orders.Record{ChainID: 1, Hash: common.BigToHash(big.NewInt(int64(i + 1))), Contract: common.Address{9},
		Kind: orders.KindExercise, Maker: common.BigToAddress(big.NewInt(int64(i%150 + 1))), Market: common.Address{8},
		TokenID: strconv.Itoa(i), Body: []byte(`{}`), AcceptedAt: int64(i), AcceptedBlock: 1, Deadline: 1 << 40}
}

// TestKill9KeepsEveryAcceptedOrder streams 1,000 submissions to a child
// process that keeps the book (SQLite, as served by default) and answers
// each once Insert returned, as the POST route answers; the child is
// killed with SIGKILL in the middle of the stream (a request in flight),
// restarted on the same file, and the stream finished. Every submission
// answered "ok" must be in the book, none answered "no" may be; the one
// in flight at the kill may be either.
func TestKill9KeepsEveryAcceptedOrder(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "book.db")
	answered := map[int]bool{}
	inFlight := -1
	next := 0
	for round := 0; round < 2; round++ {
		c := startChild(t, path)
		for ; next < 1000; next++ {
			if round == 0 && next == 537 { // send, then kill before the answer
				fmt.Fprintf(c.in, "%d\n", next)
				inFlight = next
				next++
				break
			}
			fmt.Fprintf(c.in, "%d\n", next)
			line, err := c.out.ReadString('\n')
			if err != nil {
				t.Fatalf("submission %d: %v", next, err)
			}
			answered[next] = strings.TrimSpace(line) == "ok"
		}
		if round == 0 {
			_ = c.cmd.Process.Kill() // SIGKILL: no deferred close, no flush
		} else {
			_ = c.in.Close()
		}
		_ = c.cmd.Wait()
	}
	check(t, path, answered, inFlight)
}

func check(t *testing.T, path string, answered map[int]bool, inFlight int) {
	repo, err := orders.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Shutdown()
	ok, refused := 0, 0
	for i, accepted := range answered {
		_, in, err := repo.Get(context.Background(), 1, submission(i).Hash)
		if err != nil {
			t.Fatal(err)
		}
		if in != accepted {
			t.Errorf("submission %d answered accepted=%v, in the book=%v", i, accepted, in)
		}
		if accepted {
			ok++
		} else {
			refused++
		}
	}
	if ok == 0 || refused == 0 || len(answered) != 999 {
		t.Fatalf("%d accepted, %d refused of %d answered: the stream did not exercise both answers", ok, refused, len(answered))
	}
	t.Logf("%d accepted, %d refused, submission %d in flight at the kill", ok, refused, inFlight)
}

type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startChild(t *testing.T, path string) child {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9KeepsEveryAcceptedOrder$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return child{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

// crashChild serves the book at path: one submission number per line in,
// "ok" or "no" out once the store answered.
func crashChild(path string) {
	repo, err := orders.OpenSQLite(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		i, err := strconv.Atoi(in.Text())
		if err != nil {
			os.Exit(2)
		}
		_, _, err = repo.Insert(context.Background(), submission(i), perMaker)
		switch {
		case err == nil:
			fmt.Println("ok")
		case errors.Is(err, orders.ErrMakerFull):
			fmt.Println("no")
		default:
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(0)
}
