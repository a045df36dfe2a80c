// Package textdiff reports where two texts (model dumps, golden files)
// first differ, for test failure messages. It returns a string and imports
// no testing package, so any test may use it.
package textdiff

import (
	"strconv"
	"strings"
)

// First returns the first differing line of want and got, numbered from 1,
// as "line N:\n- want\n+ got", or "" when the texts are equal.
func First(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n- " + w + "\n+ " + g
		}
	}
	if len(wl) != len(gl) {
		return "want has " + strconv.Itoa(len(wl)) + " lines, got " + strconv.Itoa(len(gl))
	}
	return ""
}
