package demo

import "strings"

// HoldsFor says what the recordings hold for one route: each of its
// parameters with the values the sweep gives it (a tuple for parameters
// varied together), which of them are combined in full, and that the
// others are varied one at a time. The composition root gives it as the
// route's NOT_RECORDED advice: a client refused a reach of 5 on the
// options chain learns which reaches the demo answers there, which the
// demo-wide sentence (Holds) never said. "" for a route the sweep cannot
// build (a parameter it has no values for).
func HoldsFor(r Route) string {
	dims, err := routeDims(r)
	if err != nil || len(dims) == 0 {
		return ""
	}
	var fixed, cross, varied []string
	for _, d := range dims {
		if d.Names[0] == "block" {
			d.Values = d.Values[:len(d.Values)-1] // the last is the block before the history, refused
		}
		text := strings.Join(d.Names, ",") + " " + values(d)
		switch {
		case len(d.Values) == 1:
			fixed = append(fixed, text)
		case d.Cross:
			cross = append(cross, text)
		default:
			varied = append(varied, text)
		}
	}
	var b strings.Builder
	b.WriteString("for " + r.Path + " the demo holds " + strings.Join(fixed, ", "))
	if len(cross) > 0 {
		b.WriteString("; in every combination: " + strings.Join(cross, "; "))
	}
	if len(varied) > 0 {
		b.WriteString("; one at a time, the others at their first value: " + strings.Join(varied, "; "))
	}
	return b.String()
}

// values lists a dimension's tuples: "none" for a parameter left out,
// tuples of several parameters in parentheses.
func values(d Dim) string {
	out := make([]string, len(d.Values))
	for i, tuple := range d.Values {
		parts := make([]string, len(tuple))
		for j, v := range tuple {
			if v == "" {
				v = "none"
			}
			parts[j] = v
		}
		out[i] = strings.Join(parts, ",")
		if len(parts) > 1 {
			out[i] = "(" + out[i] + ")"
		}
	}
	return strings.Join(out, " | ")
}
