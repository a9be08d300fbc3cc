// Package executortest holds the fixtures of the engine's tests and of the
// tests of the packages that read its results (verify, undo): the sandbox
// behind httptest with the product's client, records built by hand, and
// the plans of the usual scenarios. It does not import executor, so that
// executor's own tests use it too.
package executortest
