// Package export writes what a service holds as files a plan reads back:
// an entity's rows (Open, by a Query of the target or one of the plan's
// connections, read page by page through package source/odatasource), or
// the before-image of a plan (BeforeImage: the records its steps would
// write, as the target holds them now, read by key), written by Write as a
// workbook (a sheet per entity and per expanded sub-form, streamed, a
// sub-form's sheet keyed by its parent) or as CSV files. Every cell goes
// through package internal/workbook, every file through
// internal/atomicfile.
//
// It writes nothing to a service and no journal; the engine (package
// executor) never imports it.
package export
