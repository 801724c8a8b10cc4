//go:build !stdlib_rx

package rx

// anyFold answers whether an input contains any of a set of needles (ASCII, lower case), ASCII
// case-insensitively: the prefilter's test for a pattern with several needles. It is an Aho-Corasick
// automaton laid out as a DFA over byte classes, so a test is one table lookup per input byte and
// allocates nothing. (The general library it replaces allocated an iterator and a match per call: on the
// 11-header GET the prefilter runs a few hundred times per request, and those allocations and the
// collector's work after them were a tenth of the WAF's CPU.) Only whether some needle occurs is
// asked, never where or which: a state that ends a needle stops the scan.
type anyFold struct {
	class  [256]uint8 // byte -> column; 0: a byte in no needle (an upper-case letter shares its lower case's)
	stride int        // columns per state
	next   []int32    // state*stride + column -> next state; state 0 is the root
	final  []bool     // the state ends a needle (itself or through its failure link)
}

// newAnyFold builds the automaton; needles must be non-empty, ASCII and lower case (the analysis's).
func newAnyFold(needles []string) *anyFold {
	a := &anyFold{}
	columns := 1
	for _, n := range needles {
		for i := 0; i < len(n); i++ {
			c := n[i]
			if a.class[c] == 0 {
				a.class[c] = uint8(columns)
				if c >= 'a' && c <= 'z' {
					a.class[c-'a'+'A'] = uint8(columns)
				}
				columns++
			}
		}
	}
	a.stride = columns
	// The trie: -1 is "no edge" until the failure links fill it in.
	grow := func() int32 {
		for i := 0; i < a.stride; i++ {
			a.next = append(a.next, -1)
		}
		a.final = append(a.final, false)
		return int32(len(a.final) - 1)
	}
	grow() // the root
	for _, n := range needles {
		s := int32(0)
		for i := 0; i < len(n); i++ {
			edge := int(s)*a.stride + int(a.class[n[i]])
			if a.next[edge] < 0 {
				child := grow()
				a.next[edge] = child
			}
			s = a.next[edge]
		}
		a.final[s] = true
	}
	// Breadth first: a state's failure target is shallower, so its row is complete before it is copied.
	fail := make([]int32, len(a.final))
	queue := make([]int32, 0, len(a.final))
	for c := 0; c < a.stride; c++ {
		if t := a.next[c]; t > 0 {
			fail[t] = 0
			queue = append(queue, t)
		} else {
			a.next[c] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		a.final[s] = a.final[s] || a.final[fail[s]]
		for c := 0; c < a.stride; c++ {
			edge := int(s)*a.stride + c
			if t := a.next[edge]; t >= 0 {
				fail[t] = a.next[int(fail[s])*a.stride+c]
				queue = append(queue, t)
			} else {
				a.next[edge] = a.next[int(fail[s])*a.stride+c]
			}
		}
	}
	return a
}

// contains reports whether value holds one of the needles, ASCII case-insensitively.
func (a *anyFold) contains(value string) bool {
	s := int32(0)
	for i := 0; i < len(value); i++ {
		s = a.next[int(s)*a.stride+int(a.class[value[i]])]
		if a.final[s] {
			return true
		}
	}
	return false
}
