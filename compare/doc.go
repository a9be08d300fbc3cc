// Package compare owns the one rule by which migrate decides that the
// server holds what was written: a value by its field's type in the
// metadata (Value), an entity's fields (Fields, Same), a text sub-form by
// its content (TextIn), and a document's lines by their content (Lines).
// Reconciliation, a deep insert's read-back, upsert, diff, verify and undo
// all ask it, so that a value the server stores or answers in another form
// (a Decimal "500.0000", an Int64 given as a string under
// IEEE754Compatible, a decimal rounded to its Scale, a date-only field in
// the server's time zone, a text read back normalised) is the same value
// to every command.
//
// It reads values as odata decodes them and knows nothing about plans,
// journals or HTTP.
package compare
