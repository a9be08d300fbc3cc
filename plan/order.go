package plan

import (
	"fmt"
	"strings"
)

// CycleError is returned by Order when steps wait for each other.
type CycleError struct {
	Steps []string // the cycle, first step repeated at the end
}

func (e *CycleError) Error() string {
	return "steps form a cycle: " + strings.Join(e.Steps, " → ")
}

// Order returns the steps in waves: every step of a wave depends only on
// steps of earlier waves (after: and ref()), so the steps of one wave may
// run at the same time. Within a wave steps keep their file order. Names
// that do not exist are ignored here (Check reports them); a cycle is a
// *CycleError.
func (p *Plan) Order() ([][]*Step, error) {
	a := p.analyze()
	g := p.graph(a)
	if cyc := p.cycles(a); len(cyc) > 0 {
		return nil, &CycleError{Steps: cyc[0]}
	}
	done := map[string]bool{}
	placed := map[*Step]bool{}
	var waves [][]*Step
	for len(placed) < len(p.Steps) {
		var wave []*Step
		for _, s := range p.Steps {
			if placed[s] {
				continue
			}
			ready := true
			for _, dep := range g[s.Name] {
				if !done[dep] {
					ready = false
					break
				}
			}
			if ready {
				wave = append(wave, s)
			}
		}
		if len(wave) == 0 {
			// Unreachable when cycles found none; guard against looping.
			return nil, fmt.Errorf("steps cannot be ordered")
		}
		for _, s := range wave {
			placed[s] = true
		}
		for _, s := range wave {
			done[s.Name] = true
		}
		waves = append(waves, wave)
	}
	return waves, nil
}

// DependsOn names the steps the step named depends on by after: and
// ref(), in the plan's order of mention.
func (p *Plan) DependsOn(step string) []string {
	return p.graph(p.analyze())[step]
}
