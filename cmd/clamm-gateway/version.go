package main

import "runtime/debug"

// release is the gateway's semantic version: the newest version section of
// CHANGELOG.md. Cutting a release (docs/development.md) moves the
// CHANGELOG's [Unreleased] under a new version and sets release to it, in
// one commit on main, which is then tagged v<release>.
const release = "0.5.0"

// version is what --version, /healthz and the clamm_build_info metric
// report: release, unless a build sets another (-ldflags
// "-X main.version=...").
var version = release

// commit is the revision the binary was built from, as the Go toolchain
// stamps it (vcs.revision, its first 12 hex digits, "+dirty" when the tree
// had changes); "" when the build carries none (go run of a file, tests).
func commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev[:min(12, len(rev))] + dirty
}

// versionLine is --version's answer.
func versionLine() string {
	if c := commit(); c != "" {
		return "clamm-gateway " + version + " (commit " + c + ")"
	}
	return "clamm-gateway " + version
}
