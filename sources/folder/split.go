package folder

import (
	"bytes"
)

// document is one YAML or JSON document of a file.
type document struct {
	index int    // 1-based position in the file
	line  int    // 1-based line where the document starts
	data  []byte // the document's bytes, without the separator
}

// splitDocuments cuts a YAML stream at "---" separator lines. JSON files
// hold one document. Documents holding only blank lines and comments are
// dropped and not counted, so a reported document number is the one a
// reader counts among the file's non-empty documents.
func splitDocuments(data []byte, isJSON bool) []document {
	if isJSON {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil
		}
		return []document{{index: 1, line: 1, data: data}}
	}
	var docs []document
	index, start, startLine, line := 1, 0, 1, 1
	emit := func(end int) {
		if d := data[start:end]; !blankYAML(d) {
			docs = append(docs, document{index: index, line: startLine, data: d})
			index++
		}
	}
	for pos := 0; pos < len(data); {
		next := bytes.IndexByte(data[pos:], '\n')
		end := len(data)
		if next >= 0 {
			end = pos + next + 1
		}
		if isSeparator(data[pos:end]) {
			emit(pos)
			start, startLine = end, line+1
		}
		pos = end
		line++
	}
	emit(len(data))
	return docs
}

// isSeparator reports whether line is a YAML document separator: "---"
// alone or followed by a space and anything (a comment).
func isSeparator(line []byte) bool {
	line = bytes.TrimRight(line, "\r\n")
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t'
}

// blankYAML reports whether d holds only whitespace and comments.
func blankYAML(d []byte) bool {
	for len(d) > 0 {
		i := bytes.IndexByte(d, '\n')
		l := d
		if i >= 0 {
			l, d = d[:i], d[i+1:]
		} else {
			d = nil
		}
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}
