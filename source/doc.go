// Package source streams rows from the files a customer hands over: CSV
// (delimiter, quoting, encodings, BOM) and XLSX (sheet, header row, typed
// cells). Every row carries its location (file:line, or file!Sheet!C17 for a
// cell) so an error can point at the place to correct. It knows nothing about
// entities, plans or the service.
package source
