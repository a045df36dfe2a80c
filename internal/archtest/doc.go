// Package archtest holds the import-direction test: it lists every package
// of the module with `go list -deps` and fails when an arrow of
// docs/architecture.md runs backwards. It has no code of its own.
package archtest
