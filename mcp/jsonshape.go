package mcp

// JSONShape returns how deeply the valid JSON raw nests objects and arrays
// and its length without insignificant whitespace, in one pass and without
// decoding it: a bound can be checked before anything recurses into raw.
func JSONShape(raw []byte) (depth, size int) {
	open, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			size++
			switch c {
			case '\\':
				i++
				size++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		case '{', '[':
			open++
			depth = max(depth, open)
		case '}', ']':
			open--
		}
		size++
	}
	return depth, size
}
