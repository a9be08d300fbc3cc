// Package sourcetest helps test and benchmark source readers and their
// users: it writes generated CSV and XLSX files of any size (streamed, so a
// million rows cost no memory), and holds the conformance suite every
// source.Reader passes.
package sourcetest
