package cli

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"
)

// connFlagSet is the flag set of a command that connects to a target, the
// target's flags (connFlags.register) filling cf.
func connFlagSet(name string, cf *connFlags, withSandbox bool) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cf.register(fs, withSandbox)
	return fs
}

// readsTargetOnlyWhenGiven words --target's help for a command that
// works offline unless --target or --sandbox is given (profile, mapping):
// MIGRATE_TARGET and the plan's target.url do not make it read one.
func readsTargetOnlyWhenGiven(fs *flag.FlagSet) {
	if f := fs.Lookup("target"); f != nil {
		f.Usage = "service root `URL` to read; without it (or --sandbox) no target is read, whatever MIGRATE_TARGET or the plan's target.url says"
	}
}

// checkFlagSet is the flag set of a command that checks a plan as
// validate does, the flags of the check (checkFlags.register) filling f.
func checkFlagSet(name string, f *checkFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	f.register(fs)
	return fs
}

// jsonUsage is --json's help, which every command that has it means the
// same way.
const jsonUsage = "print one JSON document on stdout"

// jsonFlag registers --json.
func jsonFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("json", false, jsonUsage)
}

// countFlag is a whole-number flag that, when given, must be at least min:
// --concurrency 0 or --calls-per-minute -5 used to be taken.
// Its zero value is "not given": the plan's setting or the default applies.
type countFlag struct {
	n   *int
	min int
}

func (c countFlag) String() string {
	if c.n == nil || *c.n == 0 {
		return ""
	}
	return strconv.Itoa(*c.n)
}

func (c countFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a whole number")
	}
	if n < c.min {
		return fmt.Errorf("give %d or more", c.min)
	}
	*c.n = n
	return nil
}

// durationFlag is a duration flag that must be longer than nothing.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration: give one such as 90s or 5m")
	}
	if d <= 0 {
		return errors.New("give a duration longer than nothing, such as 90s or 5m")
	}
	*f.d = d
	return nil
}
