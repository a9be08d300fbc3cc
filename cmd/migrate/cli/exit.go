package cli

import (
	"errors"
	"fmt"
)

// Exit codes of docs/cli.md; a contract.
const (
	ExitOK          = 0 // everything asked was done
	ExitData        = 1 // the data had problems
	ExitUsage       = 2 // the plan or the command line is wrong, or a file cannot be read
	ExitUnreachable = 3 // the target could not be reached or refused the credentials
	ExitInterrupted = 4 // work in doubt or pending: run apply again to resume
)

// exitError carries an exit code to the top, with the message to print.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err so that the command exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: code, err: err}
}

func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// silent is an exit code without a message: the view already said it all.
func silent(code int) error { return &exitError{code: code} }

func codeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitUsage
}
