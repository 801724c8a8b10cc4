//go:build !stdlib_rx

package rx

// anyFold answers whether an input contains any of a set of needles, ASCII case-insensitively: the
// prefilter's test for a pattern with several literals, and @pm's for a rule that does not capture. It
// is an Aho-Corasick automaton stepped in place, so a test allocates nothing. (The general library it
// replaces allocated an iterator and a match per call: on the 11-header GET the prefilter and @pm run a
// few hundred times per request, and those allocations and the collector's work after them were over a
// tenth of the WAF's CPU.) Only whether some needle occurs is asked, never where or which: a state that
// ends a needle stops the scan.
//
// The layout is compact because the CRS's word lists are large (lfi-os-files.data alone makes 45,000
// states; a dense table of every state's transitions would be 10 MiB): bytes are mapped to the few
// columns the needles use, the root's transitions are a dense row (most input bytes leave or stay at the
// root), and every other state keeps only its trie edges, the failure links giving the rest.
type anyFold struct {
	class     [256]uint8 // byte -> column; 0: a byte in no needle (an upper-case letter shares its lower case's)
	root      []int32    // column -> the root's next state
	first     []int32    // state s's edges are edgeCol/edgeTo[first[s]:first[s+1]]
	edgeCol   []uint8
	edgeTo    []int32
	fail      []int32 // the longest proper suffix of the state's string that is a state
	final     []bool  // the state ends a needle (itself or through its failure link)
	anyNeedle bool    // an empty needle: every input matches
}

// newAnyFold builds the automaton. ASCII letters in needles are read in lower case; other bytes,
// those above 0x7f included, match only themselves. An empty needle matches every input.
func newAnyFold(needles []string) *anyFold {
	a := &anyFold{}
	columns := 1 // at most 1 + 256 - 26: an upper-case letter never has a column of its own
	for _, n := range needles {
		if n == "" {
			a.anyNeedle = true
		}
		for i := 0; i < len(n); i++ {
			c := lowerASCII(rune(n[i]))
			if a.class[c] == 0 {
				a.class[c] = uint8(columns)
				if c >= 'a' && c <= 'z' {
					a.class[c-'a'+'A'] = uint8(columns)
				}
				columns++
			}
		}
	}
	// The trie, its edges in maps while it grows.
	children := []map[uint8]int32{{}}
	final := []bool{false}
	for _, n := range needles {
		s := int32(0)
		for i := 0; i < len(n); i++ {
			col := a.class[n[i]]
			t, ok := children[s][col]
			if !ok {
				t = int32(len(children))
				children[s][col] = t
				children = append(children, map[uint8]int32{})
				final = append(final, false)
			}
			s = t
		}
		final[s] = true
	}
	// Breadth first: a state's failure target is shallower, so it is complete before it is used.
	a.root = make([]int32, columns)
	a.fail = make([]int32, len(children))
	a.final = final
	a.first = make([]int32, 0, len(children)+1)
	order := make([]int32, 0, len(children))
	for col, t := range children[0] {
		a.root[col] = t
		order = append(order, t)
	}
	for i := 0; i < len(order); i++ {
		s := order[i]
		a.final[s] = a.final[s] || a.final[a.fail[s]]
		for col, t := range children[s] {
			a.fail[t] = a.next(a.fail[s], col, children)
			order = append(order, t)
		}
	}
	for s := range children {
		a.first = append(a.first, int32(len(a.edgeTo)))
		for col, t := range children[s] {
			a.edgeCol = append(a.edgeCol, col)
			a.edgeTo = append(a.edgeTo, t)
		}
	}
	a.first = append(a.first, int32(len(a.edgeTo)))
	return a
}

// next is the state after s on column col while building (the edges still in maps).
func (a *anyFold) next(s int32, col uint8, children []map[uint8]int32) int32 {
	for {
		if t, ok := children[s][col]; ok {
			return t
		}
		if s == 0 {
			return 0
		}
		s = a.fail[s]
	}
}

// contains reports whether value holds one of the needles, ASCII case-insensitively.
func (a *anyFold) contains(value string) bool {
	if a.anyNeedle {
		return true
	}
	s := int32(0)
	for i := 0; i < len(value); i++ {
		col := a.class[value[i]]
		if col == 0 {
			s = 0 // a byte in no needle: no needle continues through it
			continue
		}
		s = a.step(s, col)
		if a.final[s] {
			return true
		}
	}
	return false
}

// step follows the edge on col from s, falling back along the failure links to the root's row.
func (a *anyFold) step(s int32, col uint8) int32 {
	for s != 0 {
		for e := a.first[s]; e < a.first[s+1]; e++ {
			if a.edgeCol[e] == col {
				return a.edgeTo[e]
			}
		}
		s = a.fail[s]
	}
	return a.root[col]
}
