package main

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// tb is what protocoltest takes (a testing.TB) outside a test: the test
// protocol's deployment and actions are the tests' own code, reused here
// rather than copied. Fatal, Error and Skip stop the sandbox's start with
// an error (caught by catch); Cleanup runs at close. The embedded
// interface is nil: protocoltest calls only the methods below.
type tb struct {
	testing.TB
	log      io.Writer
	cleanups []func()
}

// stop is a Fatal's message on its way to catch.
type stop struct{ msg string }

func (t *tb) Helper()                         {}
func (t *tb) Name() string                    { return "clamm-sandbox" }
func (t *tb) Fatal(args ...any)               { panic(stop{fmt.Sprint(args...)}) }
func (t *tb) Fatalf(format string, a ...any)  { panic(stop{fmt.Sprintf(format, a...)}) }
func (t *tb) Error(args ...any)               { t.Fatal(args...) }
func (t *tb) Errorf(format string, a ...any)  { t.Fatalf(format, a...) }
func (t *tb) Skip(args ...any)                { t.Fatal(args...) }
func (t *tb) Skipf(format string, a ...any)   { t.Fatalf(format, a...) }
func (t *tb) Log(args ...any)                 { fmt.Fprintln(t.log, args...) }
func (t *tb) Logf(format string, args ...any) { fmt.Fprintf(t.log, format+"\n", args...) }
func (t *tb) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }

// close runs the cleanups, last registered first (the chain's node).
func (t *tb) close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
}

// catch turns a Fatal raised by fn into its error.
func catch(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(stop)
			if !ok {
				panic(r)
			}
			err = errors.New(s.msg)
		}
	}()
	fn()
	return nil
}
