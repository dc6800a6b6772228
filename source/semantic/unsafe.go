package semantic

import "unsafe"

// unsafeString views b as a string without copying. It is used only for values that are
// read and dropped before b changes (masks and detection copy what they keep).
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
