// Package cli is the migrate command: flags, subcommands, exit codes and the
// human, JSON and progress views of the engine's hooks. It holds wiring only;
// the work is done by the executor, plan, transform, source and odata
// packages.
package cli
