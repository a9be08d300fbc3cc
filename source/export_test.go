package source

// OpenXLSXReference opens a workbook like Open, with the worksheet read by
// encoding/xml alone (the reference the byte scanner is held to), so the
// conformance suite in package source_test runs on both.
func OpenXLSXReference(opts Options) (Reader, error) {
	wb, err := openWorkbook(opts.Path)
	if err != nil {
		return nil, err
	}
	r, err := newXLSXReaderWith(opts, wb, newReferenceSheetStream)
	if err != nil {
		wb.close()
		return nil, err
	}
	return r, nil
}
