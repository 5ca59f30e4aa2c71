// Package orchestrate holds the files the orchestrate command ships with:
// the example .orchestrator/ directory that `orchestrate init` writes.
//
// It serves the orchestrate command; it is not API.
package orchestrate

import "embed"

// Example is the .orchestrator.example/ directory.
//
//go:embed all:.orchestrator.example
var Example embed.FS

// ExampleDir is Example's root directory.
const ExampleDir = ".orchestrator.example"
