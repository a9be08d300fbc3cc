// Package sourcetest helps test and benchmark source readers and their
// users: it writes generated CSV and XLSX files of any size (streamed, so a
// million rows cost no memory), writes workbooks byte for byte as a
// spreadsheet program saves them (Workbook: blank cells absent, shared
// strings, dates as serial numbers) from Go values or a short text form,
// and holds the conformance suite every source.Reader passes.
package sourcetest
